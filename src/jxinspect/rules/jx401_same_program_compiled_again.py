"""JX401: a recorded run compiled the same program of a function again."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.model import Finding, Report
from jxinspect.core.settings import Settings
from jxinspect.rules.base import Rule


def check(report: Report, settings: Settings) -> Iterator[Finding]:
    again = [c for c in report.compiles if c.number > 1 and not c.reasons]
    if again:
        first = again[0]
        numbers = ", ".join(f"#{c.number}" for c in again)
        where = f" (called from {first.call_site})" if first.call_site else ""
        yield RULE.finding(
            report,
            f"{first.function} compiled the same program again {len(again)}× ({numbers} of "
            f"{len(report.compiles)} compiles){where}: nothing JAX's cache tells "
            "calls apart changed",
        )


RULE = Rule(
    code="JX401",
    severity="warning",
    summary="the same program compiled again",
    explanation="""\
A recorded run (`jxinspect record`, judged by `jxinspect lint --records FOLDER`) traced,
lowered and compiled a function of yours again although nothing that JAX's tracing cache
tells calls apart had changed: the same function object, the same input types,
shardings, static values and configuration, and the same program came out. Each such
compile is pure waste: JAX threw its cache entry away, or never kept it.

Usual causes: `jax.clear_caches()` (or a library that calls it) inside the loop, a
`jit` whose cache is full (`jax_compilation_cache` settings), a function object that
compares equal but hashes differently each call, or a wrapper that makes a new `jit`
per call around the same function.

Fix: make the `jit` once, outside the loop, and keep the function object alive; see
the compiles with `jxinspect show FOLDER`. Only judged on recordings.""",
    check=check,
)
