"""JX110: a nested jaxpr's debug info lacks argument names or result paths."""

from __future__ import annotations

import os
from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, NestedJaxpr, Report
from jxinspect.core.survey import nested_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for jaxpr in report.nested:
        if jaxpr.quality == "partial":
            yield RULE.finding(
                report,
                f"nested jaxpr {jaxpr.where} lacks {' and '.join(jaxpr.lacking)}: {_words(jaxpr)}",
                inside_jax=jaxpr.inside_jax,
                shape=nested_shape(jaxpr.primitive),
            )


def _words(jaxpr: NestedJaxpr) -> str:
    """``the body of a pjit, function _dense in nested.py, traced for jit``."""
    function = "an unknown function"
    if jaxpr.func_src_info:
        name, _, where = jaxpr.func_src_info.partition(" at ")
        file = os.path.basename(where).rsplit(":", 1)[0]  # the line is in the report's nested
        function = f"function {name}" + (f" in {file}" if file else "")
    traced = f", traced for {jaxpr.traced_for}" if jaxpr.traced_for else ""
    return f"the body of a {jaxpr.primitive}, {function}{traced}"


RULE = Rule(
    code="JX110",
    severity="info",
    summary="nested jaxpr with partial debug info",
    explanation="""\
A nested jaxpr has debug info (a function name and source location) but some of its
argument names or result paths are unknown. JAX records no result paths for
custom_jvp/custom_vjp functions, for example, so errors inside them name values by
position.

Usually nothing to fix in user code; this is informational. Where the body is JAX's own
(a `jnp` or `jax.nn` function, from jax/_src/), the finding is marked inside JAX: text and
HTML fold it, `--fail-on` and `lint` never fail on it, JSON and SARIF keep it (for JAX's
developers). Silence: `ignore: [JX110]`.""",
    check=check,
    surveyed=Surveyed("nested:"),
)
