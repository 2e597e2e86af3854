"""JX405: a recorded run's compiles of a function were never written to the persistent
compilation cache: each took less than its minimum compile time."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    skipped = [
        c for c in facts.compiles if c.cache is not None and c.cache.outcome == "not_written"
    ]
    if not skipped:
        return
    least = skipped[0].cache.min_compile_time_s if skipped[0].cache else None
    setting = "jax_persistent_cache_min_compile_time_secs" + (
        f" ({least:g} s)" if least is not None else ""
    )
    yield RULE.finding(
        report,
        f"{skipped[0].function}: {len(skipped)} of its {len(facts.compiles)} compiles were not "
        f"written to the persistent compilation cache, each under {setting}: every run "
        "compiles them again",
    )


RULE = Rule(
    code="JX405",
    severity="warning",
    summary="compiles never written to the persistent cache",
    explanation="""\
A recorded run (`jxinspect record`, judged by `jxinspect lint --records FOLDER`) had
JAX's persistent compilation cache on (`jax_compilation_cache_dir` set), and compiled a
function of yours without writing the result there: each compile took less than
`jax_persistent_cache_min_compile_time_secs` (1 s by default), the least a compile must
take to be kept. The cache folder stays empty for it, and every new process (each test
run, each job restart) compiles it again; many small compiles add up to minutes.

Fix: lower the setting (`jax.config.update("jax_persistent_cache_min_compile_time_secs",
0)` writes every compile; `jax_persistent_cache_min_entry_size_bytes` bounds the entries
too) where startup time matters, or accept the recompiles where the cache folder's size
matters more. `jxinspect show FOLDER` ranks the functions by compile seconds, with what
the cache did for each. Only judged on recordings.""",
    check=check,
    reads=("compiles",),
)
