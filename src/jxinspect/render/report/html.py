"""A report as one self-contained HTML page (``--format html``).

Inline CSS, JavaScript and SVG, nothing fetched: the file works opened from disk with no
network. The header; findings, each linked to the leaf (or nested jaxpr) it names; the
inputs and outputs tables with status colours, a text filter and status toggles; the
sharding pictures as SVG; the annotated jaxpr and module text in collapsible, searchable
sections whose notes link back to the table rows.
"""

from __future__ import annotations

import base64
import gzip
import itertools
import re

from jxinspect._version import __version__
from jxinspect.core.model import Report
from jxinspect.core.program import Mark, ProgramText
from jxinspect.core.units import recorded
from jxinspect.core.vocabulary import STATUSES
from jxinspect.render.common.escape import html as _e
from jxinspect.render.common.findings import grouped
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
    INPUT_COLUMNS,
    OUTPUT_COLUMNS,
    header_lines,
    input_rows,
    output_rows,
    summary_line,
)

TEXT_TITLE = {"jaxpr": "jaxpr", "stablehlo": "StableHLO", "hlo": "HLO"}

PACK_FROM = 256 * 1024
"""A program text whose HTML is larger is embedded gzip-compressed and unpacked by the
page's script once the rest is shown: the file stays small, and opens on the summary."""

CSS = """
:root{--bg:#fff;--fg:#1d2330;--muted:#5d6778;--line:#dde2ea;--panel:#f6f8fb;--ok:#1f7a3a;
--warn:#9a6100;--bad:#b3261e;--dim:#7b8494;--link:#1f5fbf;--hit:#fff2a8;--cur:#ffd24d}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e3e7ee;--muted:#9aa4b4;
--line:#2c323c;--panel:#1b1f26;--ok:#5fc27e;--warn:#e0b050;--bad:#ff7b72;--dim:#8590a0;
--link:#7fb0ff;--hit:#5a4b00;--cur:#8a6d00}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg)}
header,main,footer{max-width:1280px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 2px}
h2{font-size:17px;margin:0;display:inline}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
a{color:var(--link);text-decoration:none}
a:hover{text-decoration:underline}
.sub{color:var(--muted);margin:0 0 10px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0}
dd.error{color:var(--bad)}
.summary{font-weight:600}
nav{display:flex;gap:14px;flex-wrap:wrap;padding:8px 0;border-bottom:1px solid var(--line)}
section{margin:18px 0}
section>details>summary,section>.head{cursor:pointer;padding:4px 0;margin-bottom:6px}
.count{color:var(--muted);font-weight:400;margin-left:6px}
ul.findings{list-style:none;padding:0;margin:6px 0}
ul.findings li{padding:5px 8px;border-left:4px solid var(--line);margin:3px 0;
background:var(--panel)}
li.sev-error{border-color:var(--bad)}li.sev-warning{border-color:var(--warn)}
li.sev-info{border-color:var(--link)}
.sev{display:inline-block;min-width:58px;font-weight:600}
.sev-error .sev{color:var(--bad)}.sev-warning .sev{color:var(--warn)}
.sev-info .sev{color:var(--link)}
.filters{display:flex;gap:12px;align-items:center;flex-wrap:wrap;margin:6px 0}
.filters input[type=search]{min-width:280px;padding:4px 8px;border:1px solid var(--line);
border-radius:4px;background:var(--bg);color:var(--fg)}
.filters label{user-select:none;cursor:pointer}
.shown{color:var(--muted)}
.table-wrap{overflow-x:auto}
table.leaves{border-collapse:collapse;width:100%}
table.leaves th,table.leaves td{text-align:left;padding:4px 8px;border-bottom:1px solid
var(--line);vertical-align:top;white-space:nowrap}
table.leaves th{background:var(--panel);position:sticky;top:0}
table.leaves tr:target,table.leaves tr.flash{outline:2px solid var(--cur)}
.badge{display:inline-block;padding:0 6px;border-radius:9px;font-size:12px;font-weight:600;
color:#fff}
.st-ok{background:var(--ok)}.st-synthetic,.st-renamed{background:var(--warn)}
.st-missing,.st-mismatch{background:var(--bad)}.st-pruned{background:var(--dim)}
td.links a{margin-right:8px}
.picture{margin:14px 0;padding:10px;background:var(--panel);border-radius:6px}
.picture:target{outline:2px solid var(--cur)}
.picture figcaption{margin-bottom:6px}
.picture ul{margin:4px 0;padding-left:18px}
.picture svg{display:block;margin-top:6px;max-width:100%;height:auto}
svg text{font:12px ui-monospace,Menlo,Consolas,monospace}
svg .label{fill:var(--muted)}
svg .cell text{fill:#fff}
.codebar{display:flex;gap:8px;align-items:center;margin:4px 0}
.codebar input{min-width:280px;padding:3px 8px;border:1px solid var(--line);border-radius:4px;
background:var(--bg);color:var(--fg)}
.codebar button{padding:2px 10px}
pre.code{margin:0;padding:8px 0;background:var(--panel);border-radius:6px;overflow:auto;
max-height:75vh;counter-reset:line}
pre.code .l{display:block;padding:0 10px 0 0;white-space:pre}
pre.code .l::before{counter-increment:line;content:counter(line);display:inline-block;
width:5.5em;padding-right:1em;text-align:right;color:var(--dim);user-select:none}
pre.code .l.static::before{counter-increment:none;content:""}
pre.code .l.hit{background:var(--hit)}pre.code .l.current{background:var(--cur)}
pre.code .l:target,pre.code .l.flash{background:var(--cur)}
.note{color:var(--ok)}.note.warn{color:var(--warn)}.note a{color:inherit;text-decoration:underline
dotted}
.cut{color:var(--warn)}
pre.code.packing::after{content:"unpacking…";padding:0 10px;color:var(--dim)}
.t-kw{color:#3b5bdb;font-weight:600}.t-type{color:#a23bbf}.t-op{font-weight:600}
.t-str{color:#2b8a3e}.t-value{color:#0b7285}.t-sym{color:#b35900}.t-loc{color:var(--dim)}
@media (prefers-color-scheme:dark){.t-kw{color:#8da2ff}.t-type{color:#e08cf5}
.t-str{color:#8ce99a}.t-value{color:#66d9e8}.t-sym{color:#ffc078}}
footer{color:var(--muted);padding:20px;border-top:1px solid var(--line);margin-top:30px}
"""

JS = """
(function () {
  // Large program texts come gzip-compressed (base64) and are unpacked here, after the
  // page (its summary, findings and tables) is shown.
  var unpacked = Promise.all(Array.prototype.map.call(
    document.querySelectorAll('script.packed'), function (packed) {
      var bytes = Uint8Array.from(atob(packed.textContent), function (c) {
        return c.charCodeAt(0);
      });
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
      return new Response(stream).text().then(function (html) {
        var pre = document.getElementById(packed.dataset.for);
        pre.innerHTML = html;
        pre.classList.remove('packing');
        pre.dispatchEvent(new Event('unpacked'));
      });
    }));

  'use strict';
  function applyFilter(box) {
    var table = document.getElementById(box.dataset.table);
    var text = box.querySelector('input[type=search]').value.trim().toLowerCase();
    var on = {};
    box.querySelectorAll('input[type=checkbox]').forEach(function (c) { on[c.value] = c.checked; });
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var keep = on[r.dataset.status] !== false &&
        (!text || r.textContent.toLowerCase().indexOf(text) >= 0);
      r.hidden = !keep;
      if (keep) shown++;
    }
    box.querySelector('.shown').textContent = shown + ' of ' + rows.length + ' shown';
  }
  document.querySelectorAll('.filters').forEach(function (box) {
    box.querySelectorAll('input').forEach(function (input) {
      input.addEventListener(input.type === 'search' ? 'input' : 'change', function () {
        applyFilter(box);
      });
    });
    applyFilter(box);
  });

  function reveal(id) {
    var el = document.getElementById(id);
    if (!el) return;
    if (el.tagName === 'TR' && el.hidden) {
      var box = document.querySelector('.filters[data-table="' + el.closest('table').id + '"]');
      box.querySelector('input[type=search]').value = '';
      box.querySelectorAll('input[type=checkbox]').forEach(function (c) { c.checked = true; });
      applyFilter(box);
    }
    for (var d = el.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
    el.scrollIntoView({block: 'center'});
    el.classList.remove('flash');
    void el.offsetWidth;
    el.classList.add('flash');
  }
  function revealSoon(id) {
    if (document.getElementById(id)) reveal(id);
    else unpacked.then(function () { reveal(id); });
  }
  window.addEventListener('hashchange', function () { revealSoon(location.hash.slice(1)); });
  document.addEventListener('click', function (e) {
    var a = e.target.closest('a[href^="#"]');
    if (a) revealSoon(a.getAttribute('href').slice(1));
  });
  if (location.hash) revealSoon(location.hash.slice(1));

  document.querySelectorAll('.code-section').forEach(function (section) {
    var input = section.querySelector('.codebar input');
    var count = section.querySelector('.hits');
    var lines = section.querySelectorAll('pre.code .l');
    section.querySelector('pre.code').addEventListener('unpacked', function () {
      lines = section.querySelectorAll('pre.code .l'); lower = null; search();
    });
    var lower = null, hits = [], current = -1, timer = null;
    function clear() {
      hits.forEach(function (l) { l.classList.remove('hit', 'current'); });
      hits = []; current = -1;
    }
    function search() {
      clear();
      var q = input.value.toLowerCase();
      if (!q) { count.textContent = ''; return; }
      if (!lower) lower = Array.prototype.map.call(lines, function (l) {
        return l.textContent.toLowerCase();
      });
      for (var i = 0; i < lower.length; i++) {
        if (lower[i].indexOf(q) >= 0) { lines[i].classList.add('hit'); hits.push(lines[i]); }
      }
      count.textContent = hits.length + (hits.length === 1 ? ' match' : ' matches');
      if (hits.length) go(1);
    }
    function go(step) {
      if (!hits.length) return;
      if (current >= 0) hits[current].classList.remove('current');
      current = (current + step + hits.length) % hits.length;
      hits[current].classList.add('current');
      hits[current].scrollIntoView({block: 'center'});
      count.textContent = (current + 1) + ' of ' + hits.length;
    }
    input.addEventListener('input', function () {
      clearTimeout(timer); timer = setTimeout(search, lines.length > 20000 ? 250 : 60);
    });
    input.addEventListener('keydown', function (e) {
      if (e.key === 'Enter') { e.preventDefault(); go(e.shiftKey ? -1 : 1); }
    });
    section.querySelector('.next').addEventListener('click', function () { go(1); });
    section.querySelector('.prev').addEventListener('click', function () { go(-1); });
  });
})();
"""


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
    keep = [i for i in range(len(columns)) if i < 4 or any(row[i] for row in rows)]
    counts = {s: sum(row[3] == s for row in rows) for s in STATUSES}
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
            if i == 3:
                cells.append(f'<td><span class="badge st-{_e(row[3])}">{_e(row[3])}</span></td>')
            elif i in (1, 2):
                cells.append(f"<td><code>{_e(row[i])}</code></td>")
            else:
                cells.append(f"<td>{_e(row[i])}</td>")
        cells.append(f"<td class=links>{' '.join(links.get(row_id, []))}</td>")
        body.append(f'<tr id="{row_id}" data-status="{_e(row[3])}">{"".join(cells)}</tr>')
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


def _code_line(text: str, kind: str, highlight: bool) -> str:
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
        f"<title>jxinspect · {_e(report.target)}</title><style>{CSS}</style></head><body>",
        _header(report),
        _nav(report, texts),
        "<main>",
        _findings(report, targets),
        _table("inputs", "in", "Inputs", INPUT_COLUMNS, input_rows(report), links),
        _table("outputs", "out", "Outputs", OUTPUT_COLUMNS, output_rows(report), links),
        _sharding(report),
    ]
    parts += [_code(report, anchor, text, max_lines) for anchor, text in texts]
    if program is not None and program.module is None and report.reached != "traced":
        parts.append(_missing("module", "Module", program.module_error or "not kept"))
    elif report.reached == "traced":
        parts.append(_missing("module", "Module", f"lowering failed: {report.error}"))
    footer = f"jxinspect {_e(__version__)} · jax {_e(recorded(report.jax_version))}"
    parts.append(f"</main><footer>{footer}</footer><script>{JS}</script></body></html>\n")
    return "".join(parts)
