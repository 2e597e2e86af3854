"""A survey as an HTML heat-map: a row per program, a column per level, each cell
coloured by its verdict (its names not kept in its tooltip). One self-contained page;
everything from the corpus or a survey file is escaped."""

from __future__ import annotations

from jxinspect.core.survey import VERDICTS, Survey
from jxinspect.render.common.escape import html as esc
from jxinspect.render.survey.text import headline

COLOURS = {"kept": "#2e7d32", "pruned": "#00838f", "partial": "#f9a825", "fallback": "#ef6c00",
           "wrong": "#c62828", "missing": "#b71c1c", "failed": "#4a148c"}  # fmt: skip
"""Each verdict's colour, best to worst."""

_CSS = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; white-space: nowrap; }
th.level { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: normal; }
td.cell { color: #fff; font-variant-numeric: tabular-nums; }
td.none { background: #f4f4f4; color: #999; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 4px; color: #fff; }
"""


def render(survey: Survey) -> str:
    """The page."""
    levels = survey.levels
    style = "".join(
        f"td.v-{v}, .legend .v-{v} {{ background: {c}; }}\n" for v, c in COLOURS.items()
    )
    head = "".join(f'<th class="level" scope="col">{esc(level)}</th>' for level in levels)
    rows = []
    for program in survey.programs:
        cells = []
        for level in levels:
            verdict = program.verdict(level)
            cell = program.cell(level)
            if verdict is None:
                cells.append('<td class="none">–</td>')
                continue
            text = cell.summary if cell is not None else "failed"
            tip = "; ".join(cell.examples) if cell is not None else (program.error or "")
            cells.append(f'<td class="cell v-{verdict}" data-verdict="{verdict}" '
                         f'title="{esc(tip)}">{esc(text)}</td>')  # fmt: skip
        rows.append(f'<tr><th scope="row">{esc(program.name)}</th><td>{esc(program.stage)}</td>'
                    + "".join(cells) + "</tr>")  # fmt: skip
    legend = "".join(f'<span class="v-{v}">{v}</span>' for v in VERDICTS)
    title = f"jxinspect survey: JAX {esc(survey.jax_version)}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{_CSS}{style}</style></head>
<body><h1>{title}</h1><p id="headline">{esc(headline(survey))}</p>
<p class="legend">{legend}</p>
<table id="survey"><thead><tr>
<th scope="col">program</th><th scope="col">stage</th>{head}</tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</body></html>
"""
