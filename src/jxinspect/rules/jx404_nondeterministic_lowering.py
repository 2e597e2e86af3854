"""JX404: the same function with the same inputs lowered to different programs."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding
from jxinspect.rules.base import ComparisonRule


def check(comparison: ProgramComparison) -> Iterator[Finding]:
    if comparison.across == "processes" or comparison.same_program:
        return
    if not comparison.same_source or not comparison.same_inputs:
        return
    where = "in one run" if comparison.across == "run" else "in two runs"
    said = f": {comparison.difference}" if comparison.difference is not None else ""
    yield RULE.finding(
        comparison,
        f"`{comparison.function}`: the same source with the same inputs lowered to "
        f"different programs {where} ({comparison.before} and {comparison.after}){said}",
    )


RULE = ComparisonRule(
    code="JX404",
    severity="error",
    summary="the same function with the same inputs lowered to different programs",
    explanation="""\
A function whose source did not change, called with the same argument types, shardings
and static values, lowered to a different program: in two runs (`jxinspect diff-debug
runA runB` of two recordings) or twice in one run (a compile whose only reason is the
program itself). JAX's persistent compilation cache is keyed by the program, so such a
function misses the cache on every run and compiles again.

Causes: a value drawn when the module is imported (a random number, a clock, a path, an
environment variable) and read as a Python constant inside the traced code, so that it
is baked into the program; a global changed between two calls; or a lowering that is
not deterministic (an ordering that depends on a set or on object ids); or a function
that names its helpers differently (a renamed helper, or JAX numbering two helpers of one
name `@clip_0`/`@clip_1` in another order): the same program under other names, which the
key also hashes. The finding names the first operation that differs, with its source line
in each, or the functions renamed.

Fix: pass such values as arguments (traced, or static where they must be), or compute
them inside the program; never read mutable globals in traced code; give helpers names
that do not change from run to run.""",
    check=check,
)
