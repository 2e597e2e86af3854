"""A diff's cost section (``diff-debug --compile``) as rows: memory per kind and FLOPs
before → after with the change in %, and the collectives added, removed or changed.

Raw rows (names and paths from the user's code): the text renderer escapes them, the
Markdown one fences them.
"""

from __future__ import annotations

from jxinspect.core.cost_diff import CollectiveChange, CostDiff, MeasureChange
from jxinspect.core.units import human_bytes

MEASURE_COLUMNS = ("per device", "before", "after", "change")
COLLECTIVE_COLUMNS = ("change", "collective", "axes", "bytes/step before", "after", "trips",
                      "moves", "source")  # fmt: skip


def _value(measure: MeasureChange, value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if measure.measure == "flops" else human_bytes(int(value))


def _percent(measure: MeasureChange) -> str:
    if measure.percent is None:
        return "" if measure.before == measure.after else "new"
    return f"{measure.percent:+.1f}%"


def measure_rows(cost: CostDiff) -> list[tuple[str, ...]]:
    """``(measure, before, after, change)`` per kind of memory, then FLOPs."""
    return [
        (m.measure, _value(m, m.before), _value(m, m.after), _percent(m)) for m in cost.measures
    ]


def _bytes(found: CollectiveChange, side: str) -> str:
    collective = found.before if side == "before" else found.after
    return human_bytes(collective.bytes_per_step) if collective is not None else "—"


def collective_rows(cost: CostDiff) -> list[tuple[str, ...]]:
    """One row per collective added, removed or changed (see :data:`COLLECTIVE_COLUMNS`)."""
    rows: list[tuple[str, ...]] = []
    for found in cost.collectives:
        c = found.collective
        trips = "?" if c.trip_count is None else str(c.trip_count)
        rows.append((found.change, c.kind, c.axes_key, _bytes(found, "before"),
                     _bytes(found, "after"), trips, c.moves, c.source or ""))  # fmt: skip
    return rows


def collectives_title(cost: CostDiff) -> str:
    """``collectives: 1 added, 0 removed, 0 changed, 1 unchanged``."""
    counts = {kind: sum(c.change == kind for c in cost.collectives)
              for kind in ("added", "removed", "changed")}  # fmt: skip
    said = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    return f"collectives: {said}, {cost.unchanged_collectives} unchanged"


def threshold_line(cost: CostDiff) -> str:
    """What fails: a collective added, temporaries growing past the threshold."""
    return (
        f"fails on: a collective added, temporaries grown by more than "
        f"{cost.memory_growth * 100:g}% (budgets.memory_growth)"
    )
