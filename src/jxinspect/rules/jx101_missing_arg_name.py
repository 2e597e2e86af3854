"""JX101: an argument reaches the program with no name."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import pmap_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for leaf in report.inputs:
        if leaf.status == "missing":
            yield RULE.finding(
                report,
                f"argument {leaf.path} carries no name",
                leaf.path,
                shape=pmap_shape(report, "args"),
            )


RULE = Rule(
    code="JX101",
    severity="warning",
    summary="argument has no name",
    explanation="""\
The argument reaches the lowered program (@main's block argument location, or the
jaxpr's debug info before lowering) with no name at all, so XLA dumps, profiles and
error messages cannot say which parameter it is.

Usually JAX lost the debug info on the way: a transformation that re-traces through a
flat function, or a staging API called on something without a Python signature.
Fix: stage the function itself (not a lambda or functools.partial over *args), or
file an issue with JAX naming the transformation. Silence: `ignore: [JX101]`.""",
    check=check,
    surveyed=Surveyed("pmap:args"),
)
