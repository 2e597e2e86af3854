"""A survey as text: one row per program, one column per level, then each cell that was
not kept with a few of its names; and a survey diff as the cells that changed.

Plain aligned columns off a terminal (stable for logs and pipes); a rich table, coloured
by verdict, on one. Everything from the corpus or a survey file is escaped.
"""

from __future__ import annotations

import io

from jxinspect.core.survey import (
    LEAF_LEVELS,
    MEANINGS,
    NESTED,
    UNITS,
    Cell,
    Survey,
    SurveyProgram,
)
from jxinspect.core.survey_diff import KINDS, SurveyDiff
from jxinspect.render.common.console import ansi_console
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.table import plain_table

COLUMNS = ("program", "stage", "jaxpr args", "jaxpr results", "@main args", "@main results",
           "compiled args", "nested jaxprs")  # fmt: skip
"""The columns: the program, then :data:`LEAF_LEVELS`, then its nested jaxprs (a column
empty in every row, compiled args without ``--compile``, is left out)."""

STYLES = {"kept": "green", "pruned": "cyan", "partial": "yellow", "fallback": "yellow",
          "wrong": "red", "missing": "red", "failed": "bold red"}  # fmt: skip
"""The colour of each verdict (rich styles)."""


LEGEND = (
    f"{UNITS}; JAX's own nested jaxprs (a jnp function's jit) are not counted.",
    *(f"  {verdict}: {words}" for verdict, words in MEANINGS.items()),
)
"""What the cells say, under the matrix."""


def _cell_text(cell: Cell | None) -> str:
    return cell.summary if cell is not None else ""


def own_words(program: SurveyProgram) -> str:
    """``JAX's own, not counted: jit 1`` (empty when there is none)."""
    if not program.jax_own:
        return ""
    return "JAX's own, not counted: " + ", ".join(f"{p} {n}" for p, n in program.jax_own.items())


def _nested(program: SurveyProgram) -> str:
    counted = [
        f"{c.level.removeprefix(NESTED)} {c.counted}"
        for c in program.cells
        if c.level.startswith(NESTED)
    ]
    return "; ".join([*counted, *filter(None, [own_words(program)])])


def _row(program: SurveyProgram) -> tuple[str, ...]:
    if program.unavailable is not None:
        return (program.name, program.stage, "not available", *("" for _ in LEAF_LEVELS[1:]),
                "")  # fmt: skip
    if program.error is not None:
        return (program.name, program.stage, "failed", *("" for _ in LEAF_LEVELS[1:]), "")
    leaves = tuple(_cell_text(program.cell(level)) for level in LEAF_LEVELS)
    return (program.name, program.stage, *leaves, _nested(program))


def notes(survey: Survey) -> list[str]:
    """What a person needs beside the matrix, a line each (not escaped: each renderer
    escapes them its way): each program this release cannot stage or that failed, which
    jaxpr a program's ``jaxpr`` levels read (where it is not its own), each cell not
    kept with a few of its names."""
    lines = []
    for program in survey.programs:
        name = program.name
        if program.unavailable is not None:
            lines.append(f"{name}: not available on JAX {survey.jax_version}: "
                         f"{program.unavailable}")  # fmt: skip
            continue
        if program.error is not None:
            lines.append(f"{name}: failed: {program.error}")
        if program.reads is not None:
            lines.append(f"{name}: jaxpr args and results are read from {program.reads}")
        for cell in program.cells:
            if cell.verdict != "kept":
                examples = "; ".join(cell.examples)
                lines.append(f"{name} {cell.level}: {cell.counted}"
                             + (f" ({examples})" if examples else ""))  # fmt: skip
    return lines


def headline(survey: Survey) -> str:
    """``JAX 0.10.2 (jaxlib 0.10.2, cpu, shardy): 27 programs, 9 of 140 cells not kept``."""
    cells = [c for p in survey.programs for c in p.cells]
    lost = sum(1 for c in cells if c.verdict != "kept")
    failed = sum(1 for p in survey.programs if p.error is not None)
    unavailable = sum(1 for p in survey.programs if p.unavailable is not None)
    tail = f", {failed} failed to stage" if failed else ""
    tail += f", {unavailable} not available on this release" if unavailable else ""
    return (
        f"JAX {esc(survey.jax_version)} (jaxlib {esc(survey.jaxlib_version)}, "
        f"{esc(survey.platform)}, {esc(survey.partitioner)}): {len(survey.programs)} programs, "
        f"{lost} of {len(cells)} cells not kept{tail}"
    )


def _details(survey: Survey) -> list[str]:
    lines = ["", *LEGEND]
    found = notes(survey)
    return [*lines, "", "details:", *(f"  {esc(line)}" for line in found)] if found else lines


def render(survey: Survey, color: bool = False) -> str:
    """The matrix, then each cell not kept."""
    rows = [_row(p) for p in survey.programs]
    if not color:
        return (
            "\n".join([headline(survey), "", *plain_table(COLUMNS, rows), *_details(survey)]) + "\n"
        )
    from rich.table import Table
    from rich.text import Text

    shown = [i for i in range(len(COLUMNS)) if i < 2 or any(row[i] for row in rows)]
    table = Table(title=headline(survey), title_justify="left")
    for i in shown:
        table.add_column(COLUMNS[i])
    for program, row in zip(survey.programs, rows):
        verdicts = [program.verdict(level) for level in LEAF_LEVELS]
        worst = max((c.verdict for c in program.cells if c.level.startswith(NESTED)),
                    key=lambda v: list(STYLES).index(v), default="kept")  # fmt: skip
        styles = ["bold", "", *(STYLES.get(v or "", "") for v in verdicts), STYLES[worst]]
        table.add_row(*(Text(esc(row[i]), style=styles[i] if row[i] else "") for i in shown))
    buffer = io.StringIO()
    console = ansi_console(buffer, width=160)
    console.print(table)
    console.print("\n".join(_details(survey)), markup=False, highlight=False)
    return buffer.getvalue()


def describe(survey: Survey) -> str:
    return f"<Survey {headline(survey)}>"


def render_diff(diff: SurveyDiff, color: bool = False) -> str:
    """Regressions, then improvements, then other changes; the last line says the outcome."""

    def paint(text: str, style: str) -> str:
        codes = {"red": "\033[1;31m", "green": "\033[32m", "bold": "\033[1m"}
        return f"{codes[style]}{text}\033[0m" if color else text

    lines = [f"survey {esc(diff.before)} (JAX {esc(diff.before_release)}) → "
             f"{esc(diff.after)} (JAX {esc(diff.after_release)})"]  # fmt: skip
    for kind, style in zip(KINDS, ("red", "green", "bold")):
        changes = diff.of_kind(kind)
        if changes:
            lines.append(paint(f"{kind} ({len(changes)}):", style))
            rows: list[tuple[str, ...]] = [
                (c.program, c.level, c.before_counts or "(none)", "→", c.after_counts or "(none)")
                for c in changes
            ]
            lines += [
                "  " + line
                for line in plain_table(("program", "level", "before", "", "after"), rows)[1:]
            ]
    for label, names in (("only in the first survey", diff.only_before),
                         ("only in the second survey", diff.only_after)):  # fmt: skip
        if names:
            lines.append(f"{label}: {', '.join(esc(n) for n in names)}")
    counts = ", ".join(f"{len(diff.of_kind(k))} {k}" for k in KINDS)
    lines.append(("FAILED: " if diff.failed else "") + counts)
    return "\n".join(lines) + "\n"


def describe_diff(diff: SurveyDiff) -> str:
    regressed, improved = len(diff.of_kind("regressed")), len(diff.of_kind("improved"))
    return (f"<SurveyDiff JAX {esc(diff.before_release)} → {esc(diff.after_release)}: "
            f"{regressed} regressed, {improved} improved>")  # fmt: skip
