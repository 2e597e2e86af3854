"""JX104: a result carries a positional or different path."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import pmap_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for leaf in report.outputs:
        if leaf.status in ("synthetic", "mismatch"):
            yield RULE.finding(
                report,
                f"result {leaf.path} carries the path {leaf.name!r}",
                leaf.path,
                shape=pmap_shape(report, "results"),
            )


RULE = Rule(
    code="JX104",
    severity="warning",
    summary="result path is positional or differs from the output pytree",
    explanation="""\
The result's `jax.result_info` is not the path of the output in the pytree the function
returns: either a positional fallback (`result[0]` where `result['logits']` was
returned) or another path altogether.

Fix: stage the function that builds the output pytree. Silence: `ignore: [JX104]`.""",
    check=check,
    surveyed=Surveyed("pmap:results"),
)
