"""A diff as GitHub-flavoured Markdown, for a pull-request comment.

Regressions are shown; improvements and neutral changes fold into ``<details>``. Names,
paths and messages are escaped (:mod:`jxinspect.render.common.escape`): a pipe, backtick,
newline or HTML tag in them cannot break a table or the comment.
"""

from __future__ import annotations

from collections.abc import Sequence

from jxinspect.core.diff import DiffReport, TargetDiff
from jxinspect.render.common.escape import markdown_code, markdown_text
from jxinspect.render.compare import cost as cost_rows
from jxinspect.render.compare import profile as profile_rows
from jxinspect.render.compare.programs import finding_lines, guard_lines, program_line
from jxinspect.render.compare.text import (
    CHANGE_COLUMNS,
    VERDICT_TITLE,
    change_rows,
    gate_lines,
    header_rows,
    summary_line,
)

_CODE_COLUMNS = {4, 5, 6}
"""Leaf, before and after: names and paths, shown as code."""


code = markdown_code
"""Inline code that survives a table cell (pipes escaped, backticks fenced)."""


def _table(
    columns: tuple[str, ...],
    rows: Sequence[tuple[str, ...]],
    as_code: set[int],
    bold: Sequence[bool] = (),
) -> list[str]:
    """A table; ``as_code`` columns as inline code, the others as escaped text; the first
    cell of the rows ``bold`` marks in bold."""
    keep = [i for i in range(len(columns)) if any(row[i] for row in rows)]
    lines = ["| " + " | ".join(columns[i] for i in keep) + " |", "|" + "---|" * len(keep)]
    for r, row in enumerate(rows):
        cells = [code(row[i]) if i in as_code else markdown_text(row[i]) for i in keep]
        if r < len(bold) and bold[r] and keep and keep[0] == 0:
            cells[0] = f"**{cells[0]}**"
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _target(target: TargetDiff, diff: DiffReport) -> list[str]:
    counts = target.summary
    title = f"### {code(target.name)}: {counts.regressions} regressions"
    if counts.regressions:
        title += f" ({counts.failing} failing)"
    title += f", {counts.improvements} improvements, {counts.neutral} neutral"
    lines = [title, ""]
    lines += _table(("", "before", "after"), header_rows(target), set())
    for verdict, heading in VERDICT_TITLE.items():
        changes = target.of_verdict(verdict)
        if not changes:
            continue
        rows = change_rows(changes, diff.allow)
        bold = [c.failing for c in changes]
        table = _table(CHANGE_COLUMNS, rows, _CODE_COLUMNS, bold)
        if verdict == "regression":
            lines += ["", f"**{heading.capitalize()}**", "", *table]
        else:
            summary = f"{heading.capitalize()} ({len(changes)})"
            lines += ["", f"<details><summary>{summary}</summary>", "", *table, "", "</details>"]
    if not target.changes:
        lines += ["", "No changes."]
    lines += _cost(target)
    lines += _profile(target)
    for k, line in enumerate(gate_lines(target, diff.fail_on)):
        lines += ["", f"**{markdown_text(line)}**" if k == 0 else markdown_text(line)]
    program = program_line(target)
    return [*lines, "", markdown_text(program)] if program is not None else lines


def _cost(target: TargetDiff) -> list[str]:
    """``--compile``: the cost section (none without)."""
    cost = target.cost
    if cost is None:
        return []
    lines = ["", "**Cost per device (compiled)**", ""]
    lines += _table(cost_rows.MEASURE_COLUMNS, cost_rows.measure_rows(cost), set())
    if cost.peak:
        lines += ["", f"**{cost_rows.peak_title(cost).capitalize()}**", ""]
        lines += _table(cost_rows.PEAK_COLUMNS, cost_rows.peak_rows(cost), {2, 4})
    lines += ["", f"**{cost_rows.collectives_title(cost).capitalize()}**"]
    rows = cost_rows.collective_rows(cost)
    lines += ["", *_table(cost_rows.COLLECTIVE_COLUMNS, rows, {6, 7})] if rows else []
    declared = cost_rows.declaration_lines(cost)
    lines += ["", *(f"- {markdown_text(line)}" for line in declared)] if declared else []
    return lines


def _profile(target: TargetDiff) -> list[str]:
    """Both sides measured: the step, time by line and by collective (none otherwise)."""
    measured = target.profile
    if measured is None:
        return []
    lines = ["", "**Measured (profile)**", "", markdown_text(profile_rows.step_line(measured))]
    lines += [f"- {markdown_text(line)}" for line in profile_rows.unread_lines(measured)]
    if measured.lines:
        lines += ["", f"**{profile_rows.lines_title(measured).capitalize()}**", ""]
        lines += _table(profile_rows.LINE_COLUMNS, profile_rows.line_rows(measured), {5, 7})
    if measured.collectives:
        lines += ["", f"**Collectives measured ({len(measured.collectives)})**", ""]
        rows = profile_rows.collective_rows(measured)
        lines += _table(profile_rows.COLLECTIVE_COLUMNS, rows, {5, 6})
    return [*lines, "", markdown_text(profile_rows.policy_line(measured))]


def render(diff: DiffReport) -> str:
    """The diff as a Markdown comment: verdict first, one section per target."""
    icon = "❌" if diff.failed else "✅"
    lines = [
        f"## {icon} jxinspect diff-debug",
        "",
        f"{code(diff.before)} → {code(diff.after)}",
        "",
        f"**{summary_line(diff)}**",
    ]
    guarded = guard_lines(diff)
    lines += ["", *(f"- {markdown_text(line)}" for line in guarded)] if guarded else []
    for target in diff.targets:
        lines += ["", *_target(target, diff)]
    if diff.only_before or diff.only_after:
        lines += ["", "### Functions recorded on one side only (not compared)", ""]
        lines += [
            f"- {title}: {code(name)}"
            for title, names in (("only before", diff.only_before), ("only after", diff.only_after))
            for name in names
        ]
    findings = finding_lines(diff)
    lines += (
        ["", "### Findings", "", *(f"- {markdown_text(f)}" for f in findings)] if findings else []
    )
    return "\n".join(lines) + "\n"
