"""The HTML report's cost section (a compiled report only): memory per device by kind
(with ``--memory``, the peak's chart and buffers), FLOPs and bytes accessed, and each
collective with the paths it moves, its mesh axes, its loops' trips, its bytes per step
and its source line."""

from __future__ import annotations

from jxinspect.core.model import INTERMEDIATE, Report
from jxinspect.core.units import human_bytes
from jxinspect.render.common.escape import html as _e
from jxinspect.render.report import peak_html
from jxinspect.render.report.collectives import (
    COLUMNS,
    per_step_by_axes,
    rows,
    totals_line,
)
from jxinspect.render.report.text import cost_line, memory_kinds

ANCHOR = "cost"
"""The section's id, which the page's navigation links to."""

CODE_COLUMNS = ("collective", "axes", "moves", "source")
"""The collectives table's columns shown as code."""


def _memory(report: Report) -> str:
    assert report.compiled is not None
    memory = report.compiled.memory
    body = "".join(
        f"<tr data-kind={_e(label)}><td>{_e(label)}</td><td>{_e(human_bytes(value))}</td>"
        f"<td>{value}</td></tr>"
        for label, value in memory_kinds(memory)
    )
    source = "XLA memory_analysis" if memory.source == "xla" else "estimated"
    return (
        f"<h3>Memory per device ({_e(source)})</h3><div class=table-wrap>"
        "<table id=memory-table class=leaves><thead><tr><th>kind</th><th>size</th>"
        f"<th>bytes</th></tr></thead><tbody>{body}</tbody></table></div>"
    )


def _collectives(report: Report) -> str:
    assert report.compiled is not None
    if report.compiled.collectives is None:
        said = report.compiled.unread or "unknown"
        return f"<h3>Collectives</h3><p class=not-read>Not read: {_e(said)}</p>"
    found = rows(report)
    if not found:
        return "<h3>Collectives</h3><p>No collectives.</p>"
    head = "".join(f"<th>{_e(c)}</th>" for c in COLUMNS)
    body = []
    for row in found:
        cells = "".join(
            f"<td><code>{_e(cell)}</code></td>"
            if column in CODE_COLUMNS and cell != INTERMEDIATE
            else f"<td>{_e(cell)}</td>"
            for column, cell in zip(COLUMNS, row)
        )
        body.append(f'<tr id="coll-{row[0]}">{cells}</tr>')
    totals = report.compiled.collective_bytes_by_axes
    return (
        f"<h3>Collectives</h3><div class=table-wrap><table id=collectives-table class=leaves>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        f"<p class=per-axis>per axis: {_e(totals_line(totals))}</p>"
        f"<p class=per-step>per step: {_e(totals_line(per_step_by_axes(report)))}</p>"
    )


def section(report: Report) -> str:
    """The section; empty for a report that was not compiled."""
    if report.compiled is None:
        return ""
    cost = cost_line(report.compiled) or "XLA gave no cost analysis"
    return (
        f"<section id={ANCHOR}><details open><summary><h2>Cost</h2></summary>"
        f"<p class=flops>{_e(cost)}</p>{_memory(report)}{peak_html.section(report)}"
        f"{_collectives(report)}"
        "</details></section>"
    )
