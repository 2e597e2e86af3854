"""A diff's cost section (``diff-debug --compile``) as rows: memory per kind and FLOPs
before → after with the change in %, and the collectives added, removed or changed.

Raw rows (names and paths from the user's code): the text renderer escapes them, the
Markdown one fences them.
"""

from __future__ import annotations

from jxinspect.core.cost_diff import CollectiveChange, CostDiff, MeasureChange, PeakBufferChange
from jxinspect.core.units import human_bytes

MEASURE_COLUMNS = ("per device", "before", "after", "change")
PEAK_COLUMNS = ("change", "bytes", "holds", "kind", "type", "before", "after")
PEAK_SHOWN = 12
"""The most changes at the peak a diff lists (the largest); the rest are counted."""
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


MEASURE_LABELS = {"moved": "moved per step"}
"""A measure's row name where its own name does not say it (the collectives' bytes)."""


def measure_rows(cost: CostDiff) -> list[tuple[str, ...]]:
    """``(measure, before, after, change)`` per kind of memory, then FLOPs, the bytes the
    collectives move per step and the peak."""
    return [
        (MEASURE_LABELS.get(m.measure, m.measure), _value(m, m.before), _value(m, m.after),
         _percent(m))
        for m in cost.measures
    ]  # fmt: skip


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


def declaration_lines(cost: CostDiff) -> list[str]:
    """``added all-gather over data moving w: declared w: P() → P('data', None)``: each
    added or changed collective beside the changed declarations of the paths it moves."""
    return [
        f"{c.change} {c.collective.described}: declared {'; '.join(c.declarations)}"
        for c in cost.collectives
        if c.declarations
    ]


def _signed(change: PeakBufferChange) -> str:
    delta = change.after - change.before
    return ("+" if delta > 0 else "-") + human_bytes(abs(delta))


def peak_rows(cost: CostDiff) -> list[tuple[str, ...]]:
    """One row per path or line whose bytes at the peak changed, the largest first (see
    :data:`PEAK_COLUMNS`; at most :data:`PEAK_SHOWN`)."""
    return [
        (c.change, _signed(c), c.holds, c.kind, c.type, human_bytes(c.before) if c.before else "—",
         human_bytes(c.after) if c.after else "—")
        for c in cost.peak[:PEAK_SHOWN]
    ]  # fmt: skip


def peak_title(cost: CostDiff) -> str:
    """``at the peak: 3 changed (the largest 12 shown)``."""
    more = f" (the largest {PEAK_SHOWN} shown)" if len(cost.peak) > PEAK_SHOWN else ""
    return f"at the peak: {len(cost.peak)} changed{more}"


def collectives_title(cost: CostDiff) -> str:
    """``collectives: 1 added, 0 removed, 0 changed, 1 unchanged``."""
    counts = {kind: sum(c.change == kind for c in cost.collectives)
              for kind in ("added", "removed", "changed")}  # fmt: skip
    said = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    return f"collectives: {said}, {cost.unchanged_collectives} unchanged"


def policy_line(cost: CostDiff, fail_on: str) -> str:
    """The gate's policy, with the compiled cost's part of it (said where something
    failed)."""
    limit = f"{cost.memory_growth * 100:g}%"
    return (
        f"policy: --fail-on {fail_on} fails on each regression that severe, among them a "
        f"collective added (a warning where the bytes moved per step fall by more than "
        f"{limit}) and temporaries grown by more than {limit} (budgets.memory_growth)"
    )
