"""The HTML report's peak (``lower --memory``): the bytes live over the schedule as an inline
SVG chart, the peak marked and its largest buffers labelled, then every buffer live there."""

from __future__ import annotations

from jxinspect.core.model import MemoryPeak, Report
from jxinspect.core.units import human_bytes
from jxinspect.render.common.escape import html as _e
from jxinspect.render.report.memory_view import COLUMNS, holds, rows, summary

WIDTH, HEIGHT, LABELLED, LINE = 720, 180, 3, 13
"""The chart's size in pixels, how many of the largest buffers it names beside the peak,
and the labels' line height."""
TOP = LINE * (LABELLED + 1) + 8
"""The margin above the highest value: the labels sit there, above the area."""
CODE_COLUMNS = ("type", "holds", "loop", "source")


def chart(peak: MemoryPeak) -> str:
    """The bytes live at each step: an area, a line at the peak, its largest buffers."""
    timeline = peak.timeline
    if not timeline or peak.at is None or peak.at.position is None:
        return ""
    high = max(timeline) or 1
    step = WIDTH / max(len(timeline) - 1, 1)

    def y(value: int) -> float:
        return TOP + (HEIGHT - TOP) * (1 - value / high)

    points = " ".join(f"{i * step:.1f},{y(v):.1f}" for i, v in enumerate(timeline))
    x = peak.at.position * step
    anchor = "end" if x > WIDTH / 2 else "start"
    shift = -6 if anchor == "end" else 6
    largest = sorted(peak.buffers or (), key=lambda b: -b.bytes)[:LABELLED]
    labels = [f"peak {human_bytes(peak.bytes)} at {peak.at.instruction}"]
    labels += [f"{human_bytes(b.bytes)} {holds(b)}" for b in largest]
    text = "".join(
        f'<text x="{x + shift:.1f}" y="{LINE * (i + 1)}" text-anchor="{anchor}" font-size="11"'
        f"{' class=peak-label' if i == 0 else ''}>{_e(label)}</text>"
        for i, label in enumerate(labels)
    )
    return (
        f'<svg class=peak-chart viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}"'
        f' role=img aria-label="bytes live over the schedule">'
        f"<title>{_e(summary(peak))}</title>"
        f'<polygon points="0,{HEIGHT} {points} {WIDTH},{HEIGHT}" fill="#9ecae1"/>'
        f'<polyline points="{points}" fill="none" stroke="#3182bd"/>'
        f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{HEIGHT}" stroke="#d62728"/>{text}</svg>'
    )


def section(report: Report) -> str:
    """The peak's chart and table; empty where the peak was not asked for."""
    peak = report.compiled.peak if report.compiled is not None else None
    if peak is None:
        return ""
    if peak.buffers is None or peak.bytes is None:
        return f"<h3>Memory at the peak</h3><p class=not-read>{_e(summary(peak))}</p>"
    found = rows(peak)
    keep = [i for i in range(len(COLUMNS)) if i < 3 or any(row[i] for row in found)]
    head = "".join(f"<th>{_e(COLUMNS[i])}</th>" for i in keep)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td><code>{_e(row[i])}</code></td>"
            if COLUMNS[i] in CODE_COLUMNS and row[i]
            else f"<td>{_e(row[i])}</td>"
            for i in keep
        )  # fmt: skip
        + "</tr>"
        for row in found
    )
    return (
        f"<h3>Memory at the peak</h3><p class=peak>{_e(summary(peak))}</p>{chart(peak)}"
        f"<div class=table-wrap><table id=peak-table class=leaves><thead><tr>{head}</tr>"
        f"</thead><tbody>{body}</tbody></table></div>"
    )
