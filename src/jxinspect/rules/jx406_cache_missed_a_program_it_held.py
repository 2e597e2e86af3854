"""JX406: a recorded run's compile missed the persistent compilation cache although the
cache held the same program: an earlier compile of the run read it from there."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for compile in facts.compiles:
        if compile.cache_held is None:
            continue
        where = f" (called from {compile.call_site})" if compile.call_site else ""
        yield RULE.finding(
            report,
            f"{compile.function} #{compile.number}{where} missed the persistent compilation "
            f"cache, which held the same program: {compile.cache_held} read it from there in "
            "this run. The two keys differ by more than the program (the module's name, "
            "which holds the function's, a compile option, an XLA flag): each is compiled "
            "and cached apart",
        )


RULE = Rule(
    code="JX406",
    severity="warning",
    summary="persistent-cache miss of a program the cache held",
    explanation="""\
A recorded run compiled a program of yours that JAX's persistent compilation cache
already held: an earlier compile of the same run, of the very same program (equal
identity: the module without locations, metadata and names), read it from the cache,
yet this compile missed it. JAX's cache key hashes more than the program: the module's
text with its name and its functions' names (a function renamed, a lambda, a helper
numbered `@clip_0` in one process and `@clip_1` in another), the compile options, the
XLA flags, the jaxlib and backend versions. So the same work is compiled again and
cached twice, in this run and in every later one.

Fix: give the function one name (a `functools.wraps` or a `__name__` set per instance
makes each jit its own module name), compile it with the same options; `jxinspect
diff-debug RUN_A RUN_B` names the part of the key that differs for a function across
two runs. Only judged on recordings (`jxinspect lint --records FOLDER`, `show`).""",
    check=check,
    reads=("compiles",),
)
