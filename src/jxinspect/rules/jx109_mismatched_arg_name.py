"""JX109: an argument carries a name other than its own."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import KEYWORDS_SHAPE, parameter_of
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    parameters = {parameter_of(leaf.path) for leaf in report.inputs}
    for leaf in report.inputs:
        if leaf.status == "mismatch":
            # another parameter's name: the shape of the keywords JAX 0.4 named out of order
            swapped = parameter_of(leaf.name or "") in parameters - {parameter_of(leaf.path)}
            yield RULE.finding(
                report,
                f"argument {leaf.path} carries the name {leaf.name!r}",
                leaf.path,
                shape=KEYWORDS_SHAPE if swapped else None,
            )


RULE = Rule(
    code="JX109",
    severity="warning",
    summary="argument carries another argument's name",
    explanation="""\
The name the program carries for this argument is not the path the call gives it, and
not a positional fallback either: e.g. `params['b']` where `params['w']` was expected.
Names shifted (a wrapper reordered or dropped arguments) and now mislead anyone reading
the StableHLO.

Fix: stage the function with the signature the callers use. Silence: `ignore: [JX109]`.""",
    check=check,
    surveyed=Surveyed(KEYWORDS_SHAPE),
)
