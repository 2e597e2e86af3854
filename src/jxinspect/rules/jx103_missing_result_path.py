"""JX103: a result has no ``jax.result_info``."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import pmap_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for leaf in report.outputs:
        if leaf.status == "missing":
            yield RULE.finding(
                report,
                f"result {leaf.path} carries no path",
                leaf.path,
                shape=pmap_shape(report, "results"),
            )


RULE = Rule(
    code="JX103",
    severity="warning",
    summary="result has no path (jax.result_info missing)",
    explanation="""\
The result has no `jax.result_info` attribute in @main (or no result path in the jaxpr's
debug info). JAX leaves the attribute off silently when the number of result paths it
recorded does not match the number of results, e.g. after a transformation changed the
output structure.

Fix: return a pytree from the staged function itself rather than from a wrapper that
flattens it. Silence: `ignore: [JX103]`.""",
    check=check,
    surveyed=Surveyed("pmap:results"),
)
