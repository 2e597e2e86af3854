"""JX105: an unused argument was removed from the lowered program."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for leaf in report.inputs:
        if leaf.status == "pruned":
            yield RULE.finding(
                report, f"argument {leaf.path} is unused and was pruned from @main", leaf.path
            )


RULE = Rule(
    code="JX105",
    severity="info",
    summary="unused argument pruned from @main",
    explanation="""\
With keep_unused=False (jit's default) JAX drops arguments the computation does not use,
without a word: @main has fewer parameters than the function, and argument positions
shift. That is often fine (e.g. jit(grad(loss)) does not need every parameter), but it
surprises tools that match arguments by position.

Fix: pass keep_unused=True (--keep-unused) to keep every argument. Silence:
`ignore: [JX105]`.""",
    check=check,
)
