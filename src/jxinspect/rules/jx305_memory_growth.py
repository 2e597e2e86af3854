"""JX305: the compiled program's temporaries per device grew past ``memory_growth``
against the lint baseline's accepted cost of the target."""

from __future__ import annotations

import math
from collections.abc import Iterator

from jxinspect.core.cost_diff import growth
from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    accepted, compiled = facts.accepted_cost, report.compiled
    if accepted is None or compiled is None:
        return
    before, after = accepted.temporaries, compiled.memory.temporaries
    percent = growth(before, after)
    if before is None or after is None or percent is None:
        return
    if percent > facts.settings.memory_growth * 100:
        grew = f"{percent:+.1f}%" if math.isfinite(percent) else "from 0 B"
        yield RULE.finding(
            report,
            f"temporaries per device grew {grew} against the baseline "
            f"({human_bytes(before)} → {human_bytes(after)}, XLA memory analysis), more than "
            f"budgets.memory_growth's {facts.settings.memory_growth * 100:g}%",
        )


RULE = Rule(
    code="JX305",
    severity="error",
    summary="temporaries grew past memory_growth against the baseline",
    explanation="""\
The compiled program needs more temporary memory per device (XLA's memory analysis)
than the target's cost in the lint baseline, by more than `budgets: {memory_growth:
...}` (a fraction, 0.10 by default); from a baseline of 0 B, any temporaries at all are
growth past the budget. Temporaries are what the program holds beyond its
arguments and results: activations kept for the backward pass (a removed
`jax.checkpoint`/remat), a fusion that no longer fits, a larger intermediate.

`jxinspect lint --write-baseline` records each compiled target's cost (`compile: true`);
only targets whose cost the baseline holds are judged.

Fix: find what grew (`jxinspect diff-debug --compile before.py after.py` lists memory
per kind before and after), or accept it by writing the baseline again.""",
    check=check,
    reads=("compiled", "accepted_cost"),
)
