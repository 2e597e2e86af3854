"""JX107: a nested jaxpr carries no debug info."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import nested_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for jaxpr in report.nested:
        if jaxpr.quality == "missing":
            yield RULE.finding(
                report,
                f"nested jaxpr {jaxpr.where} ({jaxpr.primitive}) has no debug info",
                inside_jax=jaxpr.inside_jax,
                shape=nested_shape(jaxpr.primitive),
            )


RULE = Rule(
    code="JX107",
    severity="warning",
    summary="nested jaxpr without debug info",
    explanation="""\
A jaxpr nested inside an equation (the body of a scan, a cond branch, a pjit, a
custom_vjp, a shard_map…) has no debug info: no function name, no source location, no
argument names. Errors and profiles inside it cannot point back to the user's code.

This comes from the transformation that built the nested jaxpr; report it to JAX with
the primitive named here. Silence: `ignore: [JX107]`.""",
    check=check,
    surveyed=Surveyed("nested:", "wrong"),
)
