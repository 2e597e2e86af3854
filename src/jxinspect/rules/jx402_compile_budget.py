"""JX402: a recorded run compiled a function more times than the budget allows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule

SHOWN = 3
"""Reasons named in the message, the most frequent first."""


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    budget, compiles = facts.settings.max_compiles, facts.compiles
    if budget is None or len(compiles) <= budget:
        return
    said = Counter(f"{r.path} {r.kind}" if r.path else r.kind for c in compiles for r in c.reasons)
    why = ", ".join(f"{n}× {what}" for what, n in said.most_common(SHOWN)) or "no difference"
    more = f", {len(said) - SHOWN} more" if len(said) > SHOWN else ""
    yield RULE.finding(
        report,
        f"{compiles[0].function} compiled {len(compiles)} times, over the budget of "
        f"{budget}: {why}{more} (see `jxinspect show` of the recording)",
    )


RULE = Rule(
    code="JX402",
    severity="error",
    summary="compiled more times than the budget",
    explanation="""\
A recorded run (`jxinspect record`, judged by `jxinspect lint --records FOLDER`)
compiled a function of yours more times than `budgets: {max_compiles: N}` allows (at
the top level of the configuration, or per target). Every compile is a trace, a
lowering and an XLA compile; a loop that compiles each step is the most common
expensive surprise in JAX. The message names the reasons that changed most often, by
pytree path: `batch['x'] shape` (a last batch of another size), `s weak_type` (a Python
scalar where an array was), `function` (a `jit` or `lambda` made per call), a static
argument that changes, a sharding, the configuration.

Fix: pad or bucket the shape that varies, pass arrays instead of Python scalars, hoist
the `jit` out of the loop, or raise the budget; `jxinspect show FOLDER` lists every
compile with its reasons and advice. Off unless a budget is set.""",
    check=check,
    reads=("compiles",),
)
