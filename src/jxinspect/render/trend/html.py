"""A trend as one HTML page (``jxinspect trend FILE --format html``): per target, a line
chart per measure (its value in each row, oldest first; a gap where a row did not measure
it; each point's time, commit, JAX version and value in its tooltip) and the table of
changes. Self-contained (inline SVG and CSS, nothing fetched); everything from the
database is escaped."""

from __future__ import annotations

from jxinspect.core.history import HistoryRow, TargetTrend, Trend, Value, measures
from jxinspect.render.common.escape import html as esc
from jxinspect.render.trend.text import MISSING, before_after, change_text, headline, value

WIDTH, HEIGHT, LEFT, TOP, BOTTOM = 520, 150, 90, 12, 34
"""Pixels: a chart's size, the room for the value axis, above, and for the time axis."""

CSS = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; }
td.mono, code { font-family: ui-monospace, monospace; font-size: 13px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure.chart { margin: 0; border: 1px solid #eee; padding: 4px; }
figcaption { font-family: ui-monospace, monospace; font-size: 13px; }
svg text { font: 11px ui-monospace, monospace; fill: #555; }
svg polyline { fill: none; stroke: #1565c0; stroke-width: 2; }
svg circle { fill: #1565c0; }
"""


def _tip(row: HistoryRow, measure: str, found: Value) -> str:
    commit = (row.commit or "no commit")[:12]
    return (
        f"{row.time} {commit} JAX {row.jax_version or MISSING}: {measure} {value(measure, found)}"
    )


def _axes(measure: str, low: float, high: float, rows: tuple[HistoryRow, ...]) -> str:
    """The highest and lowest value at the left (a flat line's one value level with it),
    the first and last row's time below."""
    bottom = HEIGHT - BOTTOM
    ends = [(TOP, high), (bottom, low)] if high != low else [((TOP + bottom) / 2, high)]
    return (
        "".join(
            f'<text x="{LEFT - 6}" y="{y + 4}" text-anchor="end">{esc(value(measure, v))}</text>'
            for y, v in ends
        )  # fmt: skip
        + f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}" stroke="#ccc"/>'
        f'<text x="{LEFT}" y="{HEIGHT - 8}">{esc(rows[0].time)}</text>'
        f'<text x="{WIDTH - 10}" y="{HEIGHT - 8}" text-anchor="end">{esc(rows[-1].time)}</text>'
    )


def chart(target: str, measure: str, rows: tuple[HistoryRow, ...]) -> str:
    """One measure's line chart: a point per row that measured it, joined in row order,
    broken where a row did not."""
    values = [measures(row).get(measure) for row in rows]
    known = [v for v in values if v is not None]
    low, high = min(known), max(known)
    span_x, span_y = WIDTH - LEFT - 10, HEIGHT - TOP - BOTTOM
    step = span_x / max(len(rows) - 1, 1)
    runs: list[list[str]] = [[]]
    points = []
    for i, (row, found) in enumerate(zip(rows, values)):
        if found is None:
            runs.append([])
            continue
        x = LEFT + step * i if len(rows) > 1 else LEFT + span_x / 2
        y = TOP + (span_y * (high - found) / (high - low) if high != low else span_y / 2)
        runs[-1].append(f"{x:.1f},{y:.1f}")
        points.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" data-value="{found}">'
            f"<title>{esc(_tip(row, measure, found))}</title></circle>"
        )
    lines = "".join(f'<polyline points="{" ".join(r)}"/>' for r in runs if len(r) > 1)
    return (
        f'<figure class="chart" data-measure="{esc(measure)}"><figcaption>{esc(measure)}'
        f'</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{esc(f"{target}: {measure}")}">'
        f"{_axes(measure, low, high, rows)}{lines}{''.join(points)}</svg></figure>"
    )


def _changes(target: TargetTrend) -> str:
    if not target.changes:
        return "<p>No measure changed.</p>"
    head = "".join(f"<th>{h}</th>" for h in
                   ("time", "commit", "JAX", "measure", "before → after", "change"))  # fmt: skip
    rows = "".join(
        f'<tr><td class="mono">{esc(c.time)}</td><td class="mono">{esc(c.commit or MISSING)}'
        f"</td><td>{esc(c.jax_version or MISSING)}</td><td>{esc(c.measure)}</td>"
        f"<td>{esc(before_after(c))}</td><td>{esc(change_text(c))}</td></tr>"
        for c in target.changes
    )
    return f'<table class="changes"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _target(target: TargetTrend) -> str:
    names = dict.fromkeys(name for row in target.rows for name in measures(row))
    charts = "".join(
        chart(target.target, name, target.rows)
        for name in names
        if any(measures(row).get(name) is not None for row in target.rows)
    )
    return (f'<section class="target" data-target="{esc(target.target)}">'
            f"<h2>{esc(target.target)}</h2>{_changes(target)}"
            f'<div class="charts">{charts or "<p>Nothing measured (not compiled).</p>"}</div>'
            "</section>")  # fmt: skip


def render(trend: Trend) -> str:
    """The page."""
    title = f"jxinspect trend: {esc(trend.file)}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{CSS}</style></head>
<body><h1>{title}</h1><p id="headline">{esc(headline(trend))}</p>
{"".join(_target(t) for t in trend.targets)}
</body></html>
"""
