"""JX108: the function traced but did not lower."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    if report.reached == "traced" and report.error:
        yield RULE.finding(report, f"lowering failed: {report.error}")


RULE = Rule(
    code="JX108",
    severity="error",
    summary="lowering failed after tracing",
    explanation="""\
The function traced to a jaxpr, but lowering it to StableHLO failed, so the report
shows only what tracing gave (argument names from the jaxpr, no shardings from @main).
Common causes: a sharding that does not fit the mesh or the shape, a platform that
does not support an operation (--platform), or a custom call unknown to the platform.

Fix what the message names; run with --traceback for JAX's full error.""",
    check=check,
)
