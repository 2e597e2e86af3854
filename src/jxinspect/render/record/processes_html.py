"""A recording of several JAX processes as one HTML page (``jxinspect show FOLDER
--format html``): the processes side by side, a column each, and a row per function whose
cells are coloured by the program that process lowered (one colour: every process lowered
the same program), then the findings (JX403) naming the first real difference.
Self-contained (inline CSS, nothing fetched); everything from the run is escaped."""

from __future__ import annotations

from jxinspect.core.processes import FunctionAcross, ProcessesSummary
from jxinspect.render.common.escape import html as esc
from jxinspect.render.common.guard import guard_said
from jxinspect.render.record.processes import programs as programs_text

COLOURS = ("#2e7d32", "#c62828", "#1565c0", "#ef6c00", "#6a1b9a", "#00838f", "#8d6e63")
"""A group's colour, the most processes first; a later group takes the last one."""
MISSING = "#eeeeee"
"""A process that did not lower the function."""

CSS = """
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; white-space: nowrap; }
td.p { min-width: 12px; padding: 0; }
th.p { font-weight: normal; font-size: 11px; color: #555; }
.finding { font-family: ui-monospace, monospace; font-size: 13px; }
.error { color: #b71c1c; }
"""


def group_of(function: FunctionAcross) -> dict[int, int]:
    """Each process that lowered the function, by the index of its group of programs."""
    return {p: g for g, group in enumerate(function.programs) for p in group.processes}


def colour(group: int | None) -> str:
    """The colour of the ``group``-th group of programs (``None``: not lowered)."""
    return MISSING if group is None else COLOURS[min(group, len(COLOURS) - 1)]


def _row(function: FunctionAcross, numbers: list[int]) -> str:
    groups = group_of(function)
    cells = []
    for number in numbers:
        group = groups.get(number)
        said = "did not lower it" if group is None else ", ".join(
            p[:12] for p in function.programs[group].programs)  # fmt: skip
        cells.append(
            f'<td class="p" style="background:{colour(group)}" data-process="{number}" '
            f'data-group="{"" if group is None else group}" '
            f'title="process {number}: {esc(said)}"></td>'
        )
    verdict = "same" if function.same else "differs"
    return (f'<tr data-function="{esc(function.function)}" data-verdict="{verdict}">'
            f"<th>{esc(function.function)}</th><td>{verdict}</td>{''.join(cells)}"
            f'<td class="programs">{esc(programs_text(function))}</td></tr>')  # fmt: skip


def render_html(summary: ProcessesSummary) -> str:
    """The page."""
    numbers = sorted(run.process for run in summary.runs)
    head = "".join(f'<th class="p">{n}</th>' for n in numbers)
    rows = "".join(_row(f, numbers) for f in summary.functions)
    findings = "".join(
        f'<li class="finding {esc(f.severity)}">{esc(f.severity)} {esc(f.code)} '
        f"{esc(f.message)}</li>"
        for f in summary.findings
    )
    same = sum(f.same for f in summary.functions)
    title = f"jxinspect recording: {esc(summary.folder)} ({summary.processes} processes)"
    guarded = [(run.process, run.guard) for run in summary.runs if run.guard is not None]
    said = guard_said(guarded, summary.processes) if guarded else []
    guard = "".join(f"<li>guard: {esc(line)}</li>" for line in said)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{CSS}</style></head>
<body><h1>{title}</h1>
<p>{same} of {len(summary.functions)} functions lowered the same program on every process;
a column per process, a colour per program (grey: not lowered).</p>
{f'<ul id="guard">{guard}</ul>' if guard else ""}
<table id="processes"><thead><tr><th>function</th><th>every process</th>{head}<th>programs</th></tr>
</thead><tbody>{rows}</tbody></table>
<ul id="findings">{findings}</ul>
</body></html>
"""
