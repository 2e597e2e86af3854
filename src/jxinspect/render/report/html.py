"""A report as one self-contained HTML page (``--format html``).

Inline CSS, JavaScript and SVG, nothing fetched: the file works opened from disk with no
network. The stylesheet and script are package data (``assets/report.css``,
``assets/report.js``). The header; findings, each linked to the leaf (or nested jaxpr) it
names; the inputs and outputs tables with status colours, a text filter and status
toggles; the sharding pictures as SVG; once compiled, the cost (:mod:`.cost_html`); once
measured, the step by line (:mod:`.profile_html`); the
annotated jaxpr and module text in collapsible, searchable sections whose notes link back
to the table rows.
"""

from __future__ import annotations

import base64
import functools
import gzip
import itertools
import re
from importlib import resources

from jxinspect._version import __version__
from jxinspect.core.model import Report
from jxinspect.core.program import Mark, ProgramText, TextKind
from jxinspect.core.units import recorded
from jxinspect.core.vocabulary import STATUSES
from jxinspect.render.common.escape import html as _e
from jxinspect.render.common.findings import grouped, inside_jax, inside_jax_line
from jxinspect.render.report import cost_html, profile_html
from jxinspect.render.report.code import (
    COMMENT,
    HIGHLIGHT_MAX_LINES,
    WARN,
    layout,
    nested_by_where,
    tokens,
)
from jxinspect.render.report.jaxpr_view import static_lines
from jxinspect.render.report.sharding_view import (
    PALETTE,
    Picture,
    devices_text,
    layouts,
    mesh_line,
)
from jxinspect.render.report.text import (
    header_lines,
    input_table,
    output_table,
    summary_line,
)

TEXT_TITLE = {"jaxpr": "jaxpr", "stablehlo": "StableHLO", "hlo": "HLO"}

PACK_FROM = 256 * 1024
"""A program text whose HTML is larger is embedded gzip-compressed and unpacked by the
page's script once the rest is shown: the file stays small, and opens on the summary."""

ASSETS = "assets"
"""The folder beside this module holding the page's stylesheet and script (package data,
listed in pyproject's ``package-data``)."""


@functools.cache
def asset(name: str) -> str:
    """``report.css`` or ``report.js``, as the page embeds it."""
    folder = resources.files("jxinspect.render.report").joinpath(ASSETS)
    return "\n" + folder.joinpath(name).read_text(encoding="utf-8")


def _id(prefix: str, text: str) -> str:
    return prefix + re.sub(r"[^\w-]+", "_", text).strip("_")


def _leaf_id(kind: str, index: int) -> str:
    return f"{'in' if kind == 'input' else 'out'}-{index}"


def _finding_targets(report: Report, jaxpr_ids: set[str]) -> list[tuple[str, str] | None]:
    """Per finding, ``(anchor, label)`` of the leaf or drawn nested jaxpr it names."""
    leaves = {leaf.path: f"out-{leaf.index}" for leaf in reversed(report.outputs)}
    leaves.update({leaf.path: f"in-{leaf.index}" for leaf in reversed(report.inputs)})
    wheres_of = nested_by_where(report)
    result: list[tuple[str, str] | None] = []
    for finding in report.findings:
        if finding.path is not None and finding.path in leaves:
            result.append((leaves[finding.path], finding.path))
            continue
        wheres = [w for w in wheres_of if w in finding.message]
        where = max(wheres, key=len) if wheres else ""
        anchor = _id("jaxpr-", where)
        result.append((anchor, where) if anchor in jaxpr_ids else None)
    return result


def _header(report: Report) -> str:
    facts = "".join(
        f"<dt>{_e(key)}</dt><dd{' class=error' if key == 'error' else ''}>{_e(value)}</dd>"
        for key, value in header_lines(report)
    )
    return (
        f"<header><h1>{_e(report.target)}</h1><dl class=facts>{facts}</dl>"
        f"<p class=summary>{_e(summary_line(report))}</p>"
    )


def _nav(report: Report, texts: list[tuple[str, ProgramText]]) -> str:
    links = [
        ("findings", f"Findings ({len(report.findings)})"),
        ("inputs", f"Inputs ({len(report.inputs)})"),
        ("outputs", f"Outputs ({len(report.outputs)})"),
        ("sharding", "Shardings"),
    ]
    if report.compiled is not None:
        links.append((cost_html.ANCHOR, "Cost"))
    if report.profile is not None:
        links.append((profile_html.ANCHOR, "Measured"))
    links += [(anchor, TEXT_TITLE[text.kind]) for anchor, text in texts]
    return "<nav>" + "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in links) + "</nav></header>"


def _findings(report: Report, targets: list[tuple[str, str] | None]) -> str:
    """Most severe first; repeats of one code and shape under their first finding, the
    rest in a closed list (every finding keeps its anchor, ``f-N``, and its leaf link)."""

    def item(i: int, text: str, extra: str = "") -> str:
        finding, target = report.findings[i], targets[i]
        link = f' <a class=leaf-link href="#{target[0]}">{_e(target[1])}</a>' if target else ""
        severity = _e(finding.severity)
        return (
            f'<li id="f-{i}" class="finding sev-{severity}"><code>{_e(finding.code)}</code> '
            f"<span class=sev>{severity}</span> {_e(text)}{link}{extra}</li>"
        )

    items = []
    for group in grouped(report.findings):
        first, *rest = group.indices
        if not rest:
            items.append(item(first, group.first.message))
            continue
        inner = "".join(item(i, report.findings[i].message) for i in rest)
        more = (f"<details class=more><summary>{len(rest)} more like it</summary>"
                f"<ul class=findings>{inner}</ul></details>")  # fmt: skip
        items.append(item(first, group.first.message, more))
    folded = inside_jax_line(report.findings)
    if folded:
        inner = "".join(item(i, report.findings[i].message) for i in inside_jax(report.findings))
        items.append(f"<li class=inside-jax><details class=more><summary>{_e(folded)}</summary>"
                     f"<ul class=findings>{inner}</ul></details></li>")  # fmt: skip
    body = f"<ul class=findings>{''.join(items)}</ul>" if items else "<p>No findings.</p>"
    return (
        "<section id=findings><details open><summary><h2>Findings</h2><span class=count>"
        f"{len(report.findings)}</span></summary>{body}</details></section>"
    )


def _leaf_links(
    report: Report,
    texts: list[tuple[str, ProgramText]],
    max_lines: int | None,
    targets: list[tuple[str, str] | None],
) -> dict[str, list[str]]:
    """Per row id, the links to its picture, program lines and findings."""
    links: dict[str, list[str]] = {}
    for p, pic in enumerate(layouts(report).pictures):
        for kind, index, _, _ in pic.leaves:
            row = f"{kind}-{index}"
            links.setdefault(row, []).append(f'<a href="#pic-{p}">grid</a>')
    for anchor, text in texts:
        for mark in text.marks:
            if mark.kind in ("input", "output") and (max_lines is None or mark.line < max_lines):
                row = _leaf_id(mark.kind, mark.index)
                links.setdefault(row, []).append(
                    f'<a href="#{anchor}-L{mark.line + 1}">{TEXT_TITLE[text.kind]}</a>'
                )
    for i, (finding, target) in enumerate(zip(report.findings, targets)):
        if target is not None and target[0].startswith(("in-", "out-")):
            links.setdefault(target[0], []).append(f'<a href="#f-{i}">{_e(finding.code)}</a>')
    return links


def _table(
    anchor: str,
    prefix: str,
    title: str,
    columns: tuple[str, ...],
    rows: list[tuple[str, ...]],
    links: dict[str, list[str]],
) -> str:
    status = columns.index("status")
    keep = [i for i in range(len(columns)) if i <= status or any(row[i] for row in rows)]
    counts = {s: sum(row[status] == s for row in rows) for s in STATUSES}
    toggles = "".join(
        f'<label><input type=checkbox value="{s}" checked> <span class="badge st-{s}">{s}</span>'
        f" {n}</label>"
        for s, n in counts.items()
        if n
    )
    head = "".join(f"<th>{_e(columns[i])}</th>" for i in keep) + "<th>see</th>"
    body = []
    for row in rows:
        row_id = f"{prefix}-{row[0]}"
        cells = []
        for i in keep:
            if i == status:
                badge = _e(row[status])
                cells.append(f'<td><span class="badge st-{badge}">{badge}</span></td>')
            elif columns[i] in ("path", "name in program"):
                cells.append(f"<td><code>{_e(row[i])}</code></td>")
            else:
                cells.append(f"<td>{_e(row[i])}</td>")
        cells.append(f"<td class=links>{' '.join(links.get(row_id, []))}</td>")
        body.append(f'<tr id="{row_id}" data-status="{_e(row[status])}">{"".join(cells)}</tr>')
    return (
        f"<section id={anchor}><details open><summary><h2>{title}</h2><span class=count>"
        f"{len(rows)}</span></summary><div class=filters data-table={anchor}-table>"
        f'<input type=search placeholder="Filter {anchor} by path, name, type, sharding…" '
        f'aria-label="Filter {anchor}">{toggles}<span class=shown></span></div>'
        f"<div class=table-wrap><table id={anchor}-table class=leaves><thead><tr>{head}</tr>"
        f"</thead><tbody>{''.join(body)}</tbody></table></div></details></section>"
    )


def svg(pic: Picture) -> str:
    """A picture's grid as inline SVG: one coloured rectangle per block."""
    texts = [[devices_text(c) if c is not None else "…" for c in row] for row in pic.cells]
    cell_w = max([len(t) for row in texts for t in row]
                 + [len(c or "…") for c in pic.col_labels]) * 7.5 + 18  # fmt: skip
    cell_h, top = 26, 22
    left = max(len(r or "…") for r in pic.row_labels) * 7.5 + 12
    width = left + cell_w * len(pic.col_labels) + 2
    height = top + cell_h * len(pic.row_labels) + 2
    colours = pic.groups
    size = f'width="{width:.0f}" height="{height}" viewBox="0 0 {width:.0f} {height}"'
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" {size} role="img" aria-label="{_e(pic.layout)}">'
    ]
    for c, label in enumerate(pic.col_labels):
        x = left + c * cell_w + cell_w / 2
        parts.append(f'<text class=label x="{x:.1f}" y="15" text-anchor="middle">'
                     f"{_e(label or '…')}</text>")  # fmt: skip
    for r, (label, row) in enumerate(zip(pic.row_labels, pic.cells)):
        y = top + r * cell_h
        parts.append(f'<text class=label x="{left - 8:.1f}" y="{y + 17}" text-anchor="end">'
                     f"{_e(label or '…')}</text>")  # fmt: skip
        for c, cell in enumerate(row):
            x = left + c * cell_w
            if cell is None:
                fill, text, tip = "#9aa4b4", "…", "blocks left out"
            else:
                fill = PALETTE[colours[cell] % len(PALETTE)]
                text = devices_text(cell)
                first = ", ".join(map(str, itertools.islice(cell, 64)))
                tip = (f"rows {pic.row_labels[r]} × columns {pic.col_labels[c]}: device"
                       f"{'s' if len(cell) != 1 else ''} {first}"
                       + (" …" if len(cell) > 64 else ""))  # fmt: skip
            parts.append(
                f'<g class=cell><title>{_e(tip)}</title><rect x="{x:.1f}" y="{y}" '
                f'width="{cell_w:.1f}" height="{cell_h}" fill="{fill}" stroke="#fff" '
                f'stroke-width="2"/><text x="{x + cell_w / 2:.1f}" y="{y + 17}" '
                f'text-anchor="middle">{_e(text)}</text></g>'
            )
    return "".join(parts) + "</svg>"


def _sharding(report: Report) -> str:
    found = layouts(report)
    parts = [f"<p>{_e(mesh_line(report))}</p>"]
    for p, pic in enumerate(found.pictures):
        leaves = "".join(
            f'<li><a href="#{kind}-{index}"><code>{_e(path)}</code></a> {_e(text)}</li>'
            for kind, index, path, text in pic.leaves
        )
        lines = "".join(f"<div>{_e(line)}</div>" for line in pic.lines)
        parts.append(f'<figure id="pic-{p}" class=picture><figcaption><strong class=mono>'
                     f"{_e(pic.layout)}</strong>{lines}<ul>{leaves}</ul></figcaption>"
                     f"{svg(pic)}</figure>")  # fmt: skip
    for what, group in found.groups:
        links = ", ".join(f'<a href="#{k}-{i}"><code>{_e(path)}</code></a>' for k, i, path in group)
        parts.append(f"<p><strong>{_e(what)}</strong>: {links}</p>")
    count = f"{len(found.pictures)} picture{'s' if len(found.pictures) != 1 else ''}"
    return (
        "<section id=sharding><details open><summary><h2>Shardings</h2><span class=count>"
        f"{count}</span></summary>{''.join(parts)}</details></section>"
    )


def _note_html(mark: Mark, note: str) -> str:
    if mark.kind in ("input", "output"):
        return f'<a href="#{_leaf_id(mark.kind, mark.index)}">{_e(note)}</a>'
    return _e(note)


def _code_line(text: str, kind: TextKind, highlight: bool) -> str:
    if not highlight:
        return _e(text)
    out, at = [], 0
    for start, end, cls in tokens(text, kind):
        out += [_e(text[at:start]), f'<span class="t-{cls}">{_e(text[start:end])}</span>']
        at = end
    out.append(_e(text[at:]))
    return "".join(out)


def _code(report: Report, anchor: str, text: ProgramText, max_lines: int | None) -> str:
    view = layout(report, text, max_lines)
    comment = COMMENT[text.kind]
    highlight = len(view.lines) <= HIGHLIGHT_MAX_LINES
    out = []
    if text.kind == "jaxpr":
        out += [
            f"<span class='l static'><span class=note>{_e(line)}</span></span>"
            for line in static_lines(report)
        ]
    for i, line in enumerate(view.lines):
        body = _code_line(line, text.kind, highlight)
        line_notes = view.notes.get(i)
        if not line_notes:
            out.append(f"<span class=l>{body}</span>")
            continue
        nested = [_id("jaxpr-", m.text) for m, _ in line_notes if m.kind == "jaxpr"]
        warn = " warn" if any(WARN in n for _, n in line_notes) else ""
        notes = " · ".join(_note_html(m, n) for m, n in line_notes)
        body += f'{" " * view.pads[i]}<span class="note{warn}">{comment} {notes}</span>'
        out.append(
            f'<span class=l id="{nested[0] if nested else f"{anchor}-L{i + 1}"}">{body}</span>'
        )
    if view.cut is not None:
        out.append(f"<span class='l cut'>{_e(view.cut.note(comment))}</span>")
    title = TEXT_TITLE[text.kind] + (" with locations" if text.debug_info else "")
    code = "".join(out)
    pre = f"<pre class=code>{code}</pre>"
    if len(code) > PACK_FROM:
        packed = base64.b64encode(gzip.compress(code.encode(), mtime=0)).decode()
        pre = (f"<pre class='code packing' id={anchor}-code></pre>"
               f"<script type=application/octet-stream class=packed data-for={anchor}-code>"
               f"{packed}</script>")  # fmt: skip
    return (
        f"<section id={anchor} class=code-section><details open><summary><h2>{_e(title)}</h2>"
        f"<span class=count>{len(view.lines)} lines</span></summary><div class=codebar>"
        f'<input type=search placeholder="Search the {_e(TEXT_TITLE[text.kind])}…" '
        f'aria-label="Search the {_e(TEXT_TITLE[text.kind])}"><button class=prev type=button '
        'title="Previous match">↑</button><button class=next type=button title="Next match">'
        f"↓</button><span class=hits></span></div>{pre}</details></section>"
    )


def _missing(anchor: str, title: str, why: str) -> str:
    return (f"<section id={anchor}><details open><summary><h2>{_e(title)}</h2></summary>"
            f"<p>{_e(why)}</p></details></section>")  # fmt: skip


def render(report: Report, max_lines: int | None = None) -> str:
    """The whole page; ``max_lines`` cuts the jaxpr and module texts."""
    program = report.program
    texts: list[tuple[str, ProgramText]] = []
    if program is not None and program.jaxpr is not None:
        texts.append(("jaxpr", program.jaxpr))
    if program is not None and program.module is not None:
        texts.append(("module", program.module))
    jaxpr_ids = {
        _id("jaxpr-", mark.text)
        for _, text in texts[:1]
        for mark in text.marks
        if text.kind == "jaxpr"
        and mark.kind == "jaxpr"
        and (max_lines is None or mark.line < max_lines)
    }
    targets = _finding_targets(report, jaxpr_ids)
    links = _leaf_links(report, texts, max_lines, targets)
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        '<meta name=viewport content="width=device-width, initial-scale=1">',
        f"<title>jxinspect · {_e(report.target)}</title>",
        f"<style>{asset('report.css')}</style></head><body>",
        _header(report),
        _nav(report, texts),
        "<main>",
        _findings(report, targets),
        _table("inputs", "in", "Inputs", *input_table(report), links),
        _table("outputs", "out", "Outputs", *output_table(report), links),
        _sharding(report),
        cost_html.section(report),
        profile_html.section(report.profile),
    ]
    parts += [_code(report, anchor, text, max_lines) for anchor, text in texts]
    if program is not None and program.module is None and report.reached != "traced":
        parts.append(_missing("module", "Module", program.module_error or "not kept"))
    elif report.reached == "traced":
        parts.append(_missing("module", "Module", f"lowering failed: {report.error}"))
    footer = f"jxinspect {_e(__version__)} · jax {_e(recorded(report.jax_version))}"
    parts.append(
        f"</main><footer>{footer}</footer><script>{asset('report.js')}</script></body></html>\n"
    )
    return "".join(parts)
