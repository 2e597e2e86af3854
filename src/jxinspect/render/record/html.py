"""A record folder as one HTML page (``jxinspect show FOLDER --format html``): the run, a
compile timeline (a row per function of the user's, a mark per compile in the run's
order, coloured by the kind of its first reason), each recompiling function's grouped
reasons with their advice, and the recorded functions. Self-contained (inline SVG and
CSS, nothing fetched); everything from the run or the folder is escaped."""

from __future__ import annotations

import shlex

from jxinspect.core.recompiles import ADVICE, Compile, by_call_site, by_function
from jxinspect.core.recording import Recording
from jxinspect.render.common.escape import html as esc
from jxinspect.render.record.recompiles import by_compile_time, cache_said, group_text
from jxinspect.render.record.summary import not_recorded, run_line, signatures

FIRST, AGAIN = "first", "same program"
"""A function's first compile; a later one with no difference (the same program)."""

COLOURS = {
    FIRST: "#90a4ae", "shape": "#1565c0", "dtype": "#6a1b9a", "weak_type": "#00838f",
    "sharding": "#2e7d32", "static": "#ef6c00", "structure": "#8d6e63", "function": "#c62828",
    "constants": "#ad1457", "context": "#f9a825", AGAIN: "#b71c1c",
}  # fmt: skip
"""Each mark's colour, by the kind of the compile's first reason."""

CACHE_LOOK = {
    "hit": 'fill-opacity="0.3" ',
    "not_written": 'stroke="#222" stroke-dasharray="2 2" stroke-width="1.5" ',
}
"""How a mark shows what the persistent cache did: pale where it answered (nothing was
compiled), a dashed outline where the compile was not written there."""

SLOT, ROW, LABEL = 14, 22, 220
"""Pixels: a compile's width on the timeline, a function's row height, the names' column."""

CSS = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; }
code, .mono { font-family: ui-monospace, monospace; font-size: 13px; }
.legend span { display: inline-block; padding: 1px 6px; margin: 0 4px 4px 0; color: #fff; }
.reasons li { font-family: ui-monospace, monospace; font-size: 13px; }
.advice { color: #555; font-style: italic; }
svg text { font: 12px ui-monospace, monospace; }
"""


def mark_kind(compile: Compile) -> str:
    """What a compile's mark says: its first reason's kind, ``first`` or ``same program``."""
    if compile.reasons:
        return compile.reasons[0].kind
    return FIRST if compile.number == 1 else AGAIN


def timeline(compiles: list[Compile]) -> str:
    """The compile timeline as inline SVG: a row per function, in the order each first
    compiled; a mark per compile at its place in the run; its reasons in its tooltip."""
    functions = by_function(compiles)
    rows = {id(c): r for r, found in enumerate(functions) for c in found.compiles}
    width = LABEL + max(SLOT * len(compiles) + 10, 260)  # room for the axis label
    parts = [f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{ROW * len(functions) + 24}" role="img" '
             f'aria-label="compile timeline">']  # fmt: skip
    for r, found in enumerate(functions):
        y = ROW * r
        label = f"{found.function} ({len(found.compiles)}×, {found.seconds:.2f} s)"
        parts.append(f'<text x="0" y="{y + 15}">{esc(label)}</text>')
        parts.append(f'<line x1="{LABEL}" x2="{width}" y1="{y + 11}" y2="{y + 11}" '
                     'stroke="#eee"/>')  # fmt: skip
    for n, compile in enumerate(compiles):
        kind = mark_kind(compile)
        tip = "; ".join(str(r) for r in compile.reasons) or kind
        tip = f"{compile.function} #{compile.number} ({compile.seconds:.3f} s): {tip}"
        cache = compile.cache.outcome if compile.cache else "unknown"
        if compile.cache is not None:
            tip += f"; persistent cache: {cache.replace('_', ' ')}"
            tip += f" ({compile.cache.reason})" if compile.cache.reason else ""
        parts.append(
            f'<rect class="mark" x="{LABEL + SLOT * n}" y="{ROW * rows[id(compile)] + 3}" '
            f'width="{SLOT - 3}" height="16" fill="{COLOURS[kind]}" data-kind="{esc(kind)}" '
            f'{CACHE_LOOK.get(cache, "")}data-cache="{cache}" '
            f'data-function="{esc(compile.function)}"><title>{esc(tip)}</title></rect>'
        )
    parts.append(f'<text x="{LABEL}" y="{ROW * len(functions) + 18}" fill="#777">'
                 "compiles in the run's order →</text></svg>")  # fmt: skip
    return "".join(parts)


def _legend() -> str:
    swatches = "".join(f'<span style="background:{c}">{esc(k)}</span>' for k, c in COLOURS.items())
    cache = ("pale: read from the persistent compilation cache (nothing compiled); "
             "dashed outline: compiled, not written to it")  # fmt: skip
    return f'<p class="legend">{swatches}</p><p class="advice">{cache}</p>'


def _reasons(compiles: list[Compile]) -> str:
    """Each function that compiled again: its reasons grouped, with advice per kind."""
    parts = []
    for found in by_function(compiles):
        if len(found.compiles) < 2:
            continue
        groups = found.groups
        items = "".join(f"<li>{esc(group_text(group))}</li>" for group in groups)
        if not groups:
            items = "<li>the same program each time: JAX's caches let it go</li>"
        advice = "".join(
            f'<li class="advice">{esc(kind)}: {esc(ADVICE[kind])}</li>'
            for kind in dict.fromkeys(g.kind for g in groups)
        )
        parts.append(f'<h3 class="function">{esc(found.function)} <small class="mono">'
                     f"{esc(found.source or 'no source')}</small></h3>"
                     f'<ul class="reasons">{items}{advice}</ul>')  # fmt: skip
    return "".join(parts) or "<p>No function compiled more than once.</p>"


def _functions(recording: Recording) -> str:
    rows = "".join(
        f"<tr><td>{esc(entry.name)}</td><td>{esc(entry.folder)}</td>"
        f'<td class="mono">{esc(signature)}</td><td>{esc(entry.stage)}</td>'
        f'<td>{entry.lowerings}</td><td class="mono">{esc(entry.source or "")}</td></tr>'
        for (entry, _, _), signature in zip(recording.reports, signatures(recording))
    )
    head = ("<tr><th>function</th><th>folder</th><th>signature</th><th>stage</th>"
            "<th>lowered</th><th>source</th></tr>")  # fmt: skip
    return f'<table id="functions">{head}{rows}</table>'


def _compile_time(compiles: list[Compile]) -> str:
    """Every function by its compile seconds, most first, with what the persistent cache
    did for it (nothing where no compile says)."""
    ranked = by_compile_time(compiles)
    if not ranked:
        return ""
    rows = "".join(
        f"<tr><td><code>{esc(f.function)}</code></td><td>{f.count}</td>"
        f"<td>{f.seconds:.2f}</td><td>{esc(cache_said(f))}</td></tr>"
        for f in ranked
    )
    head = "<tr><th>function</th><th>compiles</th><th>seconds</th><th>persistent cache</th></tr>"
    sites = "".join(
        f"<tr><td><code>{esc(s.site)}</code></td><td>{esc(', '.join(s.functions))}</td>"
        f"<td>{s.compiles.count}</td><td>{s.compiles.seconds:.2f}</td>"
        f"<td>{esc(cache_said(s.compiles))}</td></tr>"
        for s in by_call_site(compiles)
    )
    by_site = (
        '<table id="call-sites"><tr><th>call site</th><th>functions</th><th>compiles</th>'
        f"<th>seconds</th><th>persistent cache</th></tr>{sites}</table>"
        if sites else ""
    )  # fmt: skip
    return f'<h2>Compile time</h2><table id="compile-time">{head}{rows}</table>{by_site}'


def render(recording: Recording) -> str:
    """The page."""
    index, compiles = recording.index, list(recording.compiles)
    notes = "".join(f"<li>{esc(line)}</li>" for line in not_recorded(index))
    dropped = (f"<p>{recording.compiles_dropped} more compiles were counted, not listed.</p>"
               if recording.compiles_dropped else "")  # fmt: skip
    title = f"jxinspect recording: {esc(recording.folder)}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{CSS}</style></head>
<body><h1>{title}</h1>
<p>command: <code>{esc(shlex.join(index.command))}</code><br>
JAX {esc(index.jax_version or "not recorded")}; {esc(run_line(index))}</p>
<h2>Compiles</h2>{_legend()}{timeline(compiles)}{dropped}
<h2>Why it compiled again</h2>{_reasons(compiles)}{_compile_time(compiles)}
<h2>Recorded functions</h2>{_functions(recording)}
<ul id="notes">{notes}</ul>
</body></html>
"""
