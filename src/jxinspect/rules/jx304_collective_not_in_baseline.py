"""JX304: the compiled program holds a collective that the lint baseline's accepted cost
of the target does not have."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    accepted, compiled = facts.accepted_cost, report.compiled
    if accepted is None or compiled is None:
        return
    if compiled.collectives is None or accepted.collectives is None:
        side = "this compile's" if compiled.collectives is None else "the baseline's"
        yield RULE.finding(
            report,
            f"the collectives cannot be compared with the baseline: {side} were not read"
            + (f" ({compiled.unread})" if compiled.unread else ""),
        )
        return
    waiting = Counter(c.key for c in accepted.collectives)
    for collective in compiled.collectives:
        if waiting[collective.pairing_key] > 0:
            waiting[collective.pairing_key] -= 1
            continue
        yield RULE.finding(
            report,
            f"{collective.described}, {human_bytes(collective.bytes_per_step)} per step per "
            "device, is not in the baseline",
            path=collective.moved_paths,
            at=collective,
        )


RULE = Rule(
    code="JX304",
    severity="error",
    summary="a collective the baseline does not have",
    explanation="""\
The compiled program holds a collective that the target's cost in the lint baseline
does not: a change added an all-gather, an all-reduce or a permute, usually because a
sharding was lost (a parameter no longer sharded the way its consumer wants, a
`with_sharding_constraint` removed) or a new operation needs data from other devices.
It is named with its kind, its mesh axes, the argument or result paths it moves and its
source line, and the bytes per step per device it moves.

Collectives are paired with the baseline's by kind, mesh axes and the paths they move,
never by line, so an edit above the function does not trip it.
`jxinspect lint --write-baseline` records each compiled target's cost (`compile: true`);
only targets whose cost the baseline holds are judged. Where either side's collectives
could not be read, that is a finding of its own: the comparison cannot pass unseen.

Fix: restore the sharding that made it unnecessary (`jxinspect diff-debug --compile
before.py after.py` shows what changed), or accept it by writing the baseline again.""",
    check=check,
    reads=("compiled", "accepted_cost"),
)
