"""A survey as an HTML heat-map: a row per program, a column per level some program has,
each cell coloured by its verdict; under it the legend (what each verdict means and what
the cells count) and the details (each cell not kept with its names, which jaxpr a
program's ``jaxpr`` levels read, the nested jaxprs of JAX's own left out), on the page,
not only in tooltips. One self-contained page; everything from the corpus or a survey
file is escaped."""

from __future__ import annotations

from jxinspect.core.survey import MEANINGS, UNITS, Survey, SurveyProgram
from jxinspect.render.common.escape import html as esc
from jxinspect.render.survey.text import headline, notes

COLOURS = {"kept": "#2e7d32", "pruned": "#00838f", "partial": "#f9a825", "fallback": "#ef6c00",
           "wrong": "#c62828", "missing": "#b71c1c", "failed": "#4a148c"}  # fmt: skip
"""Each verdict's colour, best to worst."""

CSS = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; white-space: nowrap; }
th.level { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; }
td.cell { color: #fff; font-variant-numeric: tabular-nums; }
td.none { background: #f4f4f4; color: #999; }
td.own { background: #eceff1; color: #455a64; font-style: italic; }
td.na { background: #fafafa; color: #757575; }
.legend span.v { display: inline-block; padding: 2px 8px; margin-right: 4px; color: #fff; }
.legend li { margin: 2px 0; list-style: none; }
#details li { margin: 2px 0; font-family: ui-monospace, monospace; font-size: 13px; }
"""


def verdict_style() -> str:
    """The CSS colouring each verdict's cells and legend swatch."""
    return "".join(f"td.v-{v}, .legend .v-{v} {{ background: {c}; }}\n" for v, c in COLOURS.items())


def legend() -> str:
    """Each verdict's swatch and meaning, and what the cells count."""
    items = "".join(
        f'<li><span class="v v-{v}">{v}</span>{esc(words)}</li>' for v, words in MEANINGS.items()
    )
    return (f'<div class="legend" id="legend"><p>{esc(UNITS)}; the nested jaxprs of JAX\'s '
            f"own functions (a jnp function's jit) are found and not counted.</p>"
            f"<ul>{items}</ul></div>")  # fmt: skip


def _cell(program: SurveyProgram, level: str) -> str:
    verdict = program.verdict(level)
    if program.unavailable is not None:
        return f'<td class="na" title="{esc(program.unavailable)}">not available</td>'
    own = program.own(level)
    if verdict is None:
        if own:
            return f'<td class="own" data-own="{own}">JAX\'s own {own}, not counted</td>'
        return '<td class="none">–</td>'
    cell = program.cell(level)
    text = cell.counted if cell is not None else "failed"
    if own:
        text += f" (+{own} JAX's own, not counted)"
    tip = "; ".join(cell.examples) if cell is not None else (program.error or "")
    return (f'<td class="cell v-{verdict}" data-verdict="{verdict}" title="{esc(tip)}">'
            f"{esc(text)}</td>")  # fmt: skip


def render(survey: Survey) -> str:
    """The page."""
    levels = survey.shown_levels
    head = "".join(f'<th class="level" scope="col">{esc(level)}</th>' for level in levels)
    rows = [
        f'<tr><th scope="row">{esc(program.name)}</th><td>{esc(program.stage)}</td>'
        + "".join(_cell(program, level) for level in levels)
        + "</tr>"
        for program in survey.programs
    ]
    details = "".join(f"<li>{esc(line)}</li>" for line in notes(survey))
    title = f"jxinspect survey: JAX {esc(survey.jax_version)}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{CSS}{verdict_style()}</style></head>
<body><h1>{title}</h1><p id="headline">{esc(headline(survey))}</p>
<table id="survey"><thead><tr>
<th scope="col">program</th><th scope="col">stage</th>{head}</tr></thead>
<tbody>{"".join(rows)}</tbody></table>
{legend()}
<h2>Details</h2><ul id="details">{details or "<li>every cell kept</li>"}</ul>
</body></html>
"""
