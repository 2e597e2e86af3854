"""A trend as text: per target, each row where a measure changed from the row before
(time, commit, JAX version, measure, before → after, change in %). Every string from the
database (targets, times, commits, JAX versions, collective kinds and axes) and the path
are escaped (:func:`escape.text`); colour only when asked."""

from __future__ import annotations

from jxinspect.core.history import Trend, TrendChange, Value, is_bytes
from jxinspect.core.units import human_bytes, plural
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.table import plain_table

MISSING = "—"
"""A value the row did not measure."""
_GROWTH, _SHRINK, _RESET = "\033[31m", "\033[32m", "\033[0m"


def value(measure: str, found: Value, exact: bool = False) -> str:
    """``1.5 KiB`` (``1,536 B`` when ``exact``), ``12,345`` FLOPs, ``—`` when missing."""
    if found is None:
        return MISSING
    if is_bytes(measure):
        return f"{found:,} B" if exact else human_bytes(int(found))
    return f"{found:,.0f}"


def before_after(change: TrendChange) -> str:
    """``64 B → 128 B``; exact where the rounded sizes read the same."""
    shown = [value(change.measure, v) for v in (change.before, change.after)]
    if shown[0] == shown[1]:
        shown = [value(change.measure, v, exact=True) for v in (change.before, change.after)]
    return " → ".join(shown)


def change_text(change: TrendChange) -> str:
    """``+100.0%``, ``new``, ``gone``, or nothing (from 0)."""
    if change.before is None:
        return "new"
    if change.after is None:
        return "gone"
    return "" if change.percent is None else f"{change.percent:+.1f}%"


def headline(trend: Trend) -> str:
    """``history.db: 2 targets, 6 rows, 3 changes``."""
    rows = sum(t.size for t in trend.targets)
    changes = sum(len(t.changes) for t in trend.targets)
    counts = f"{plural(len(trend.targets), 'target')}, {plural(rows, 'row')}"
    return f"{esc(trend.file)}: {counts}, {plural(changes, 'change')}"


def render(trend: Trend, color: bool = False) -> str:
    """The headline, then each target's changes, oldest first."""
    lines = [headline(trend)]
    for target in trend.targets:
        lines.append(
            f"{esc(target.target)}: {plural(target.size, 'row')}, "
            + (plural(len(target.changes), "change") if target.changes else "no change")
        )
        table = plain_table(
            ("time", "commit", "JAX", "measure", "before → after", "change"),
            [(esc(c.time), esc((c.commit or MISSING)[:12]), esc(c.jax_version or MISSING),
              esc(c.measure), before_after(c), change_text(c)) for c in target.changes],
        )  # fmt: skip
        for number, line in enumerate(table if target.changes else []):
            change = target.changes[number - 1] if number else None
            grew = change is not None and change_text(change).startswith(("+", "new"))
            paint = (_GROWTH if grew else _SHRINK) if color and change is not None else ""
            lines.append(f"  {paint}{line}{_RESET if paint else ''}")
    return "\n".join(lines) + "\n"


def describe(trend: Trend) -> str:
    return f"<Trend {headline(trend)}>"
