"""JX112: every argument was pruned and there are no results: the program does nothing."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    if report.reached == "traced" or report.outputs or not report.inputs:
        return
    if all(leaf.status == "pruned" for leaf in report.inputs):
        yield RULE.finding(
            report,
            f"all {len(report.inputs)} arguments were pruned and there are no results: "
            "whatever the function does (e.g. updating Flax NNX modules in place) is "
            "invisible to the staged program",
        )


RULE = Rule(
    code="JX112",
    severity="warning",
    summary="nothing staged: every argument pruned and no results",
    explanation="""\
The lowered program takes none of the function's arrays and returns nothing. The usual
cause is a function that works by side effect: it updates objects in place and returns
None. Flax NNX is the common case: `optimizer.update(model, grads)` and
`metrics.update(...)` mutate Variables, which plain jax.jit does not see, so under
`jax.jit` the training step compiles to an empty program (and does nothing when run).

Fix: stage it with `nnx.jit` (jxinspect stages an @nnx.jit target the way Flax does), or
make it pure: `graphdef, state = nnx.split(model)` outside, `model = nnx.merge(graphdef,
state)` inside, and return `nnx.state(model)`. Silence: `ignore: [JX112]`.""",
    check=check,
)
