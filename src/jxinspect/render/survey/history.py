"""The surveys of several releases side by side (``jxinspect survey --history``): one
matrix per level, a row per program and a column per release, oldest first; under each,
the programs whose verdict moved, as runs of releases (``missing 0.4.35–0.4.38 → wrong
0.5.3–0.7.1 → partial 0.7.2–0.12.0.1``).

As text (plain aligned columns off a terminal, a rich table coloured by verdict on one)
and as an HTML heat-map (one self-contained page). Everything from a survey file is
escaped."""

from __future__ import annotations

import io

from jxinspect.core.survey import MEANINGS, NESTED, History, HistoryCell, HistoryLevel, Run
from jxinspect.render.common.console import ansi_console
from jxinspect.render.common.escape import html as esc_html
from jxinspect.render.common.escape import text as esc
from jxinspect.render.survey import html as survey_html
from jxinspect.render.survey.text import STYLES

SHOWN = {"own": "own", "none": "–", "unavailable": "n/a", "absent": "·"}
"""How the text matrix shows a cell that has no verdict (a verdict shows as itself)."""

KEY = (
    "own: only nested jaxprs of JAX's own (not counted); –: no nested jaxpr of that "
    "primitive; n/a: not available (the release lacks the program's API); ·: not in that "
    "release's survey"
)
"""The marks beside the verdicts, for the legend."""


def _unit(level: str) -> str:
    if level.startswith(NESTED):
        return "jaxprs"
    return "result paths" if level.endswith(".results") else "names"


def headline(history: History) -> str:
    """``JAX 0.4.35 to 0.12.0.1: 13 surveys, 27 programs, 14 levels``."""
    releases = history.releases
    span = f"JAX {esc(releases[0])} to {esc(releases[-1])}" if releases else "no JAX release"
    return (
        f"{span}: {len(releases)} surveys, {len(history.programs)} programs, "
        f"{len(history.levels)} levels"
    )


LEGEND = (
    "each cell: the level's verdict in that release's survey (its counts: jxinspect survey "
    "under that release, or the HTML page)",
    *(f"  {verdict}: {words}" for verdict, words in MEANINGS.items()),
    *(f"  {line}" for line in KEY.split("; ")),
)
"""What the history's cells say."""

RUN_WORDS = {"own": "JAX's own only", "none": "none", "unavailable": "not available",
             "absent": "not surveyed"}  # fmt: skip
"""How a run of releases names a mark that is no verdict."""


def moved(matrix: HistoryLevel) -> list[tuple[str, tuple[Run, ...]]]:
    """The programs whose mark changed across releases at a level, with their runs."""
    return [(row.program, row.runs) for row in matrix.programs if len(row.runs) > 1]


def _runs_text(runs: tuple[Run, ...]) -> str:
    return " → ".join(f"{RUN_WORDS.get(r.mark, r.mark)} {r.releases}" for r in runs)


def _shown(cell: HistoryCell) -> str:
    return SHOWN.get(cell.mark, cell.mark)


def render(history: History, color: bool = False) -> str:
    """Each level's matrix, then its programs that moved."""
    if not history.surveys:
        return "no surveys\n"
    lines = [headline(history), *LEGEND]
    columns = ("program", *history.releases)
    console = None
    buffer = io.StringIO()
    if color:
        console = ansi_console(buffer, width=200)
        console.print("\n".join(lines), markup=False, highlight=False)
    for matrix in history.levels:
        title = f"{matrix.level} (counts {_unit(matrix.level)})"
        changes = [f"  {esc(name)}: {esc(_runs_text(runs))}" for name, runs in moved(matrix)]
        tail = ["moved:", *changes] if changes else ["the same in every release"]
        if console is None:
            rows = [(row.program, *(_shown(c) for c in row.cells)) for row in matrix.programs]
            lines += ["", title, *_full_table(columns, rows), *tail]
            continue
        from rich.table import Table
        from rich.text import Text

        table = Table(title=esc(title), title_justify="left")
        for column in columns:
            table.add_column(esc(column))
        for row in matrix.programs:
            table.add_row(
                Text(esc(row.program), style="bold"),
                *(Text(_shown(c), style=STYLES.get(c.mark, "dim")) for c in row.cells),
            )
        console.print()
        console.print(table)
        console.print("\n".join(tail), markup=False, highlight=False)
    return buffer.getvalue() if console is not None else "\n".join(lines) + "\n"


def _full_table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Aligned columns, none left out (a release column is never optional)."""
    table = [columns, *(tuple(esc(c) for c in row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]


def describe(history: History) -> str:
    return f"<History {headline(history)}>"


_CSS = """
section.level { margin: 1.5em 0; }
h2 small { font-weight: normal; color: #666; }
td.absent { background: #fff; color: #bbb; }
nav a { margin-right: 0.8em; }
ul.moved li { margin: 2px 0; font-family: ui-monospace, monospace; font-size: 13px; }
"""


def _td(cell: HistoryCell) -> str:
    if cell.mark == "own":
        return f'<td class="own" data-mark="own">{esc_html(cell.text)}</td>'
    if cell.mark == "none":
        return '<td class="none" data-mark="none">–</td>'
    if cell.mark == "unavailable":
        return '<td class="na" data-mark="unavailable">not available</td>'
    if cell.mark == "absent":
        return '<td class="absent" data-mark="absent" title="not in this survey">·</td>'
    return (f'<td class="cell v-{cell.mark}" data-verdict="{cell.mark}" data-mark="{cell.mark}">'
            f"{esc_html(cell.text)}</td>")  # fmt: skip


def _section(history: History, matrix: HistoryLevel, index: int) -> str:
    head = "".join(f'<th scope="col">{esc_html(r)}</th>' for r in history.releases)
    rows = "".join(
        f'<tr><th scope="row">{esc_html(row.program)}</th>'
        + "".join(_td(c) for c in row.cells)
        + "</tr>"
        for row in matrix.programs
    )
    changes = "".join(
        f"<li>{esc_html(name)}: {esc_html(_runs_text(runs))}</li>" for name, runs in moved(matrix)
    )
    said = f'<ul class="moved">{changes}</ul>' if changes else "<p>the same in every release</p>"
    level = matrix.level
    return (f'<section class="level" id="level-{index}" data-level="{esc_html(level)}">'
            f"<h2>{esc_html(level)} <small>(counts {_unit(level)})</small></h2>"
            f'<table class="history"><thead><tr><th scope="col">program</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>{said}</section>")  # fmt: skip


def render_html(history: History) -> str:
    """The page: the legend, a link to each level, each level's heat-map and what moved."""
    levels = history.levels
    nav = "".join(f'<a href="#level-{i}">{esc_html(m.level)}</a>' for i, m in enumerate(levels))
    sections = "".join(_section(history, matrix, i) for i, matrix in enumerate(levels))
    title = "jxinspect survey history" + (
        f": JAX {esc_html(history.releases[0])} to {esc_html(history.releases[-1])}"
        if history.releases
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{survey_html.CSS}{survey_html.verdict_style()}{_CSS}</style></head>
<body><h1>{title}</h1><p id="headline">{esc_html(headline(history))}</p>
{survey_html.legend()}<p>{esc_html(KEY)}</p>
<nav>{nav}</nav>
{sections or "<p>no surveys</p>"}
</body></html>
"""
