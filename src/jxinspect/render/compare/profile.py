"""A diff's measured section (two profiles): the median step, then time per step by line
and by collective, before → after, with each one's share of the measured time.

Raw rows (paths and names from the user's code): the text renderer escapes them, the
Markdown one fences them.
"""

from __future__ import annotations

from jxinspect.core.profile_diff import ProfileDiff, TimeChange
from jxinspect.core.units import human_seconds

LINE_COLUMNS = ("time before", "share", "after", "share after", "change", "line", "paired by",
                "instructions")  # fmt: skip
COLLECTIVE_COLUMNS = ("time before", "share", "after", "share after", "change", "collective",
                      "op")  # fmt: skip
SHOWN = 12
"""The most lines a diff lists (the largest changes); the rest are counted."""


def _seconds(value: float | None) -> str:
    return human_seconds(value) if value is not None else "—"


def _share(value: float | None) -> str:
    return f"{value:.1%}" if value is not None else "—"


def _percent(change: TimeChange) -> str:
    if change.percent is not None:
        return f"{change.percent:+.0f}%"
    return "new" if change.before_seconds is None else "gone"


def _cells(change: TimeChange) -> tuple[str, ...]:
    was, now = change.before_seconds, change.after_seconds
    return (_seconds(was), _share(change.before_share), _seconds(now),
            _share(change.after_share), _percent(change))  # fmt: skip


def step_line(diff: ProfileDiff) -> str:
    """``step (median): 1.2 ms → 3.4 ms (+183%); instructions 1 ms → 3 ms per device``."""
    change = f" ({diff.step_percent:+.0f}%)" if diff.step_percent is not None else ""
    line = f"step (median): {human_seconds(diff.step_before)} → {human_seconds(diff.step_after)}"
    was, now = diff.instructions_before, diff.instructions_after
    measured = (f"; instructions {_seconds(was)} → {_seconds(now)} per step and device"
                if was is not None or now is not None else "")  # fmt: skip
    return line + change + measured


def unread_lines(diff: ProfileDiff) -> list[str]:
    """``not compared: before: the profiler's trace holds no event…``."""
    return [f"not compared: {why}" for why in diff.unread]


def line_rows(diff: ProfileDiff) -> list[tuple[str, ...]]:
    """One row per line (see :data:`LINE_COLUMNS`; the largest :data:`SHOWN` changes)."""
    return [
        (*_cells(c), c.what, c.matched_by if c.matched_by != "line" else "",
         ", ".join(c.instructions[:4]))
        for c in diff.lines[:SHOWN]
    ]  # fmt: skip


def lines_title(diff: ProfileDiff) -> str:
    more = f", the largest {SHOWN} changes shown" if len(diff.lines) > SHOWN else ""
    return f"time by line ({len(diff.lines)}{more})"


def collective_rows(diff: ProfileDiff) -> list[tuple[str, ...]]:
    """One row per collective (see :data:`COLLECTIVE_COLUMNS`)."""
    return [(*_cells(c), c.what, ", ".join(c.instructions)) for c in diff.collectives[:SHOWN]]


def policy_line(diff: ProfileDiff) -> str:
    """How the measured time is judged."""
    return (
        f"a line or collective is slower when its time per step grows by more than "
        f"{diff.time_growth * 100:g}% (budgets.memory_growth; a warning), under 1% of the "
        "measured time on both sides never"
    )
