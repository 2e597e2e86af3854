"""The HTML report's cost section (a compiled report only): memory per device by kind
(with ``--memory``, the peak's chart and buffers), FLOPs and bytes accessed, and each
collective with the paths it moves, its mesh axes, its loops' trips, its bytes per step
and its source line."""

from __future__ import annotations

from jxinspect.core.model import INTERMEDIATE, Collective, Origin, Report, ValueOrigins
from jxinspect.core.units import human_bytes
from jxinspect.render.common.escape import html as _e
from jxinspect.render.common.source import source_text
from jxinspect.render.report import peak_html, provenance_view
from jxinspect.render.report.collectives import (
    COLUMNS,
    per_step_by_axes,
    rows,
    totals_line,
)
from jxinspect.render.report.provenance_view import route
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


def _leaf_links(report: Report) -> dict[tuple[str, str], str]:
    """``("argument", path)`` / ``("result", path)`` → the anchor of that leaf's row."""
    links = {("argument", leaf.path): f"in-{i}" for i, leaf in enumerate(report.inputs)}
    links.update({("result", leaf.path): f"out-{i}" for i, leaf in enumerate(report.outputs)})
    return links


def _declaration(origin: Origin, links: dict[tuple[str, str], str]) -> str:
    """A declaration, an argument's or a result's linked to its row, a constraint's or a
    shard_map's line as code."""
    said = _e(origin.declaration.replace("`", ""))
    anchor = links.get((origin.kind, origin.path or ""))
    if anchor is not None:
        return f'<a href="#{anchor}"><code>{said}</code></a>'
    where = source_text(origin.file, origin.line, origin.library_file, origin.library_line)
    if where:
        return said.replace(_e(where), f"<code>{_e(where)}</code>")
    return said


def _axes(origins: tuple[Origin, ...], links: dict[tuple[str, str], str]) -> str:
    return "; ".join(
        f"<code>{_e(o.axis)}</code> ← {_declaration(o, links)}"
        + (f" <span class=via>{_e(route(o))}</span>" if o.via else "")
        for o in origins
    )


def _why(c: Collective, asked: bool, links: dict[tuple[str, str], str]) -> str:
    """Under a collective (``--why``): each value of its operation, its sharding, and the
    declaration each of its axes came from."""
    if c.origins is None:
        return f"<li class=not-read>{_e(provenance_view.UNMATCHED)}</li>" if asked else ""
    if not c.origins:
        return "<li>the partitioner's record names no declaration for its operation</li>"
    by_value: dict[str, list[Origin]] = {}
    for origin in c.origins:
        by_value.setdefault(origin.value, []).append(origin)
    return "".join(
        f"<li>{_e(value)} <code>{_e(found[0].sharding)}</code>: {_axes(tuple(found), links)}</li>"
        for value, found in by_value.items()
    )


def _asked(value: ValueOrigins, links: dict[tuple[str, str], str]) -> str:
    """A value asked about with ``--why-of``, as the text view says it, axes linked."""
    if value.value is None or not value.origins:
        said = provenance_view.asked_lines(value)
        return f"<li>{_e(said[0])}{''.join(f'<br>{_e(line.strip())}' for line in said[1:])}</li>"
    return (f"<li>{_e(value.value)}<br><code>{_e(value.sharding or '')}</code>: "
            f"{_axes(value.origins, links)}</li>")  # fmt: skip


def _provenance(report: Report) -> str:
    """What ``--why`` and ``--why-of`` found that is not under a collective."""
    compiled = report.compiled
    assert compiled is not None
    parts = []
    if compiled.origins_unread is not None:
        parts.append(f"<p class=not-read>Why: not known: {_e(compiled.origins_unread)}</p>")
    if compiled.why_of:
        links = _leaf_links(report)
        items = "".join(_asked(value, links) for value in compiled.why_of)
        parts.append(f"<h3>{_e(provenance_view.VALUES_TITLE)}</h3><ul id=why-of>{items}</ul>")
    return "".join(parts)


def _collectives(report: Report) -> str:
    assert report.compiled is not None
    if report.compiled.collectives is None:
        said = report.compiled.unread or "unknown"
        return f"<h3>Collectives</h3><p class=not-read>Not read: {_e(said)}</p>"
    found = rows(report)
    if not found:
        return "<h3>Collectives</h3><p>No collectives.</p>"
    links = _leaf_links(report)
    asked = report.compiled.origins_read
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
        why = _why(report.compiled.collectives[int(row[0])], asked, links)
        if why:
            body.append(f'<tr class=why id="why-{row[0]}"><td colspan={len(COLUMNS)}>'
                        f"<ul>{why}</ul></td></tr>")  # fmt: skip
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
        f"{_collectives(report)}{_provenance(report)}"
        "</details></section>"
    )
