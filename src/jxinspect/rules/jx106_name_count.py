"""JX106: the debug info's name count differs from the jaxpr's inputs or outputs."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import nested_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    graded = ([report.jaxpr] if report.jaxpr else []) + list(report.nested)
    for jaxpr in graded:
        if jaxpr.quality == "count_mismatch":
            names = len(jaxpr.arg_names) if jaxpr.arg_names is not None else "no"
            paths = len(jaxpr.result_paths) if jaxpr.result_paths is not None else "no"
            yield RULE.finding(
                report,
                f"jaxpr {jaxpr.where} ({jaxpr.primitive}) has {names} names for "
                f"{jaxpr.num_invars} inputs and {paths} paths for {jaxpr.num_outvars} outputs",
                inside_jax=jaxpr.inside_jax,
                shape=nested_shape(jaxpr.primitive) if jaxpr is not report.jaxpr else None,
            )


RULE = Rule(
    code="JX106",
    severity="warning",
    summary="debug-info name count differs from the jaxpr's inputs/outputs",
    explanation="""\
A jaxpr's debug info lists a different number of argument names (or result paths) than
the jaxpr has inputs (or outputs). JAX then cannot say which name belongs to which
input, and leaves names or `jax.result_info` off the lowered program.

This is a JAX bookkeeping bug in the transformation that built the jaxpr; report it
with the primitive named here. Silence: `ignore: [JX106]`.""",
    check=check,
    surveyed=Surveyed("nested:", "partial"),
)
