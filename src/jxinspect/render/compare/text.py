"""A diff as text: before | after side by side, regressions first.

Plain text (stable: no colour, no box drawing) for logs, pipes and golden files; rich
tables with colour for a terminal. Both show the rows :func:`header_rows` and
:func:`change_rows` give, escaped (:func:`escape.text`): names and paths come from the
user's code or input files. The rows stay raw for the Markdown renderer.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jxinspect.core.diff import Change, DiffReport, Side, TargetDiff, Verdict
from jxinspect.core.units import recorded
from jxinspect.render.common.console import ansi_console
from jxinspect.render.common.source import shown_text
from jxinspect.render.compare import cost as cost_rows
from jxinspect.render.compare import profile as profile_rows
from jxinspect.render.compare.programs import finding_lines, guard_lines, program_line

if TYPE_CHECKING:
    from rich.console import Console

CHANGE_COLUMNS = ("severity", "class", "change", "where", "leaf", "before", "after", "matched")
WHERE_TEXT = {"input": "argument", "output": "result", "static": "static", "nested": "nested",
              "finding": "finding", "target": "target", "collective": "collective",
              "memory": "memory", "flops": "flops", "time": "time"}  # fmt: skip
VERDICT_TITLE: dict[Verdict, str] = {
    "regression": "regressions", "improvement": "improvements", "neutral": "neutral",
}  # fmt: skip
VERDICT_STYLE = {"regression": "red", "improvement": "green", "neutral": "dim"}


def mesh_text(side: Side) -> str:
    """``data=2,model=4, axes Explicit; also over batch=8``: the mesh, its axis types and
    every other mesh the program uses."""
    text = (side.mesh or "—") + (f", axes {side.axis_types}" if side.axis_types else "")
    return text + (f"; also over {'; '.join(side.other_meshes)}" if side.other_meshes else "")


def _side_rows(side: Side) -> list[str]:
    devices = f"{side.num_devices} device" + ("s" if side.num_devices != 1 else "")
    return [
        side.target,
        (side.function or "—").split(" at ")[0],
        f"{recorded(side.stage)} → reached {side.reached}",
        recorded(side.jax_version),
        f"{recorded(side.platform)}, {devices}",
        f"{mesh_text(side)}, partitioner {side.partitioner}",
        f"{side.named_inputs}/{side.inputs} arguments, {side.named_outputs}/{side.outputs} results",
    ]


def header_rows(target: TargetDiff) -> list[tuple[str, str, str]]:
    """``(field, before, after)`` for the side-by-side header."""
    keys = ("target", "function", "stage", "jax", "platform", "mesh", "named")
    rows = list(zip(keys, _side_rows(target.before), _side_rows(target.after)))
    if target.before.topology or target.after.topology:
        rows.insert(5, ("topology", target.before.topology or "—", target.after.topology or "—"))
    if target.before.error or target.after.error:
        rows.append(("error", target.before.error or "—", target.after.error or "—"))
    return rows


def severity_text(change: Change, allow: tuple[str, ...]) -> str:
    """``error``, ``error (allowed)``, or empty for improvements and neutral changes."""
    if change.severity is None:
        return ""
    return change.severity + (" (allowed)" if change.category in allow else "")


def change_rows(changes: list[Change], allow: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [
        (
            severity_text(c, allow),
            c.category,
            c.kind,
            WHERE_TEXT[c.where],
            c.path,
            c.before if c.before is not None else "—",
            c.after if c.after is not None else "—",
            "by position" if c.matched_by == "position" else "",
        )
        for c in changes
    ]


def summary_line(diff: DiffReport) -> str:
    """``FAIL: 3 regressions (3 failing at --fail-on error), 0 improvements, 1 neutral``."""
    counts = diff.summary
    regressions = counts.regressions
    text = f"{regressions} regression{'s' if regressions != 1 else ''}"
    if regressions:
        text += f" ({counts.failing} failing at --fail-on {diff.fail_on})"
    text += f", {counts.improvements} improvement{'s' if counts.improvements != 1 else ''}"
    text += f", {counts.neutral} neutral"
    if diff.findings:
        text += f", {len(diff.findings)} finding{'s' if len(diff.findings) != 1 else ''}"
    return ("FAIL: " if diff.failed else "ok: ") + text


_NOUNS = {"leaf": "leaves", "pruned": "arguments", "nested": "nested jaxprs",
          "static": "static arguments"}  # fmt: skip
"""A change class's plural where an ``s`` does not make it."""
_ONE_EACH = ("finding", "memory", "flops", "time")
"""Classes whose failing changes are said one by one (a code, a measure)."""


def _failure(changes: list[Change]) -> str:
    """``4 collectives added``, ``temporaries grew``, ``JX201 findings 0 → 3``."""
    first = changes[0]
    if first.category == "finding":
        return f"{first.path} findings {first.before} → {first.after}"
    if first.category == "time":
        return f"{first.path} time {first.kind}"
    if first.category in ("memory", "flops") or first.kind == "unread":
        return f"{first.path} {first.kind}"
    count = len(changes)
    noun: str = first.category
    if count == 1:
        noun = "argument" if noun == "pruned" else noun
    else:
        noun = _NOUNS.get(noun, noun + "s")
    return f"{count} {noun} {first.kind}"


def failed_line(target: TargetDiff) -> str | None:
    """``failed: 4 collectives added, temporaries grew``: what fails the gate (``None``
    where nothing does), its changes grouped by class and kind."""
    groups: dict[tuple[str, ...], list[Change]] = {}
    for change in target.changes:
        if change.failing:
            one = (change.path,) if change.category in _ONE_EACH or change.kind == "unread" else ()
            groups.setdefault((change.category, change.kind, *one), []).append(change)
    if not groups:
        return None
    return "failed: " + ", ".join(_failure(changes) for changes in groups.values())


def gate_lines(target: TargetDiff, fail_on: str) -> list[str]:
    """What failed the gate, and (with ``--compile``) the policy it applied; none where
    nothing failed (raw: the caller escapes)."""
    failed = failed_line(target)
    if failed is None:
        return []
    policy = [cost_rows.policy_line(target.cost, fail_on)] if target.cost is not None else []
    return [failed, *policy]


def _plain_table(columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    keep = [i for i in range(len(columns)) if any(row[i] for row in rows)]
    table = [tuple(columns[i] for i in keep)] + [
        tuple(shown_text(row[i]) for i in keep) for row in rows
    ]
    widths = [max(len(row[k]) for row in table) for k in range(len(keep))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]


def _count(changes: list[Change]) -> str:
    """``3`` or, for regressions, ``3, 2 failing``."""
    if changes[0].verdict != "regression":
        return str(len(changes))
    return f"{len(changes)}, {sum(c.failing for c in changes)} failing"


def _unchanged_line(target: TargetDiff) -> str:
    return (
        f"unchanged: {target.unchanged.inputs} of {target.after.inputs} arguments, "
        f"{target.unchanged.outputs} of {target.after.outputs} results"
    )


def unpaired_lines(diff: DiffReport) -> list[str]:
    """``only before: step (f32[8])`` lines for the functions one record folder holds and
    the other does not (raw: the caller escapes)."""
    return [
        f"{title}: {name}"
        for title, names in (("only before", diff.only_before), ("only after", diff.only_after))
        for name in names
    ]


def cost_lines(target: TargetDiff) -> list[str]:
    """``--compile``: the cost section, plain (none without)."""
    cost = target.cost
    if cost is None:
        return []
    lines = ["", "cost per device (compiled)"]
    lines += [
        "  " + line
        for line in _plain_table(cost_rows.MEASURE_COLUMNS, cost_rows.measure_rows(cost))
    ]
    if cost.peak:
        lines += ["", cost_rows.peak_title(cost)]
        lines += [
            "  " + line for line in _plain_table(cost_rows.PEAK_COLUMNS, cost_rows.peak_rows(cost))
        ]
    lines += ["", cost_rows.collectives_title(cost)]
    rows = cost_rows.collective_rows(cost)
    lines += (
        ["  " + line for line in _plain_table(cost_rows.COLLECTIVE_COLUMNS, rows)] if rows else []
    )
    lines += ["  " + shown_text(line) for line in cost_rows.declaration_lines(cost)]
    return lines


def profile_lines(target: TargetDiff) -> list[str]:
    """Both sides measured: the step, time by line and by collective, plain (none
    otherwise)."""
    measured = target.profile
    if measured is None:
        return []
    lines = ["", "measured (profile)", "  " + profile_rows.step_line(measured)]
    lines += ["  " + shown_text(line) for line in profile_rows.unread_lines(measured)]
    if measured.lines:
        lines += ["", profile_rows.lines_title(measured)]
        table = _plain_table(profile_rows.LINE_COLUMNS, profile_rows.line_rows(measured))
        lines += ["  " + line for line in table]
    if measured.collectives:
        lines += ["", f"collectives measured ({len(measured.collectives)})"]
        rows = profile_rows.collective_rows(measured)
        lines += ["  " + line for line in _plain_table(profile_rows.COLLECTIVE_COLUMNS, rows)]
    return [*lines, "  " + profile_rows.policy_line(measured)]


def render_plain(diff: DiffReport) -> str:
    """Stable plain text: per target a before | after header, then the changes by verdict."""
    lines = [f"before: {shown_text(diff.before)}", f"after:  {shown_text(diff.after)}"]
    lines += [shown_text(line) for line in guard_lines(diff)]
    for target in diff.targets:
        lines += ["", f"== {shown_text(target.name)} =="]
        lines += [
            "  " + line for line in _plain_table(("", "before", "after"), header_rows(target))
        ]
        for verdict, title in VERDICT_TITLE.items():
            changes = target.of_verdict(verdict)
            if not changes:
                continue
            lines += ["", f"{title} ({_count(changes)})"]
            lines += [
                "  " + line
                for line in _plain_table(CHANGE_COLUMNS, change_rows(changes, diff.allow))
            ]
        if not target.changes:
            lines += ["", "no changes"]
        lines += cost_lines(target)
        lines += profile_lines(target)
        gate = gate_lines(target, diff.fail_on)
        lines += ["", *(shown_text(line) for line in gate)] if gate else []
        lines += ["", _unchanged_line(target)]
        program = program_line(target)
        lines += [shown_text(program)] if program is not None else []
    if diff.only_before or diff.only_after:
        lines += ["", "functions recorded on one side only (not compared)"]
        lines += ["  " + shown_text(line) for line in unpaired_lines(diff)]
    findings = finding_lines(diff)
    lines += ["", *(shown_text(line) for line in findings)] if findings else []
    lines += ["", summary_line(diff)]
    return "\n".join(lines) + "\n"


def _rich_changes(console: Console, target: TargetDiff, allow: tuple[str, ...]) -> None:
    """A coloured table of the target's changes per verdict, failing ones in bold red."""
    from rich.table import Table
    from rich.text import Text

    for verdict, title in VERDICT_TITLE.items():
        changes = target.of_verdict(verdict)
        if not changes:
            continue
        table = Table(
            title=f"{title} ({_count(changes)})",
            title_justify="left",
            title_style=f"bold {VERDICT_STYLE[verdict]}",
        )
        rows = change_rows(changes, allow)
        keep = [i for i in range(len(CHANGE_COLUMNS)) if any(row[i] for row in rows)]
        for i in keep:
            table.add_column(CHANGE_COLUMNS[i], overflow="fold")
        for change, row in zip(changes, rows):
            failing = change.failing
            cells = [Text(shown_text(row[i])) for i in keep]
            style = "bold red" if failing else VERDICT_STYLE[verdict]
            cells[0].stylize(style)
            if verdict == "regression" and 6 in keep:
                cells[keep.index(6)].stylize("red")
            elif verdict == "improvement" and 6 in keep:
                cells[keep.index(6)].stylize("green")
            table.add_row(*cells)
        console.print(table)


def render_rich(diff: DiffReport, width: int = 120) -> str:
    """Coloured side-by-side tables for a terminal (ANSI escapes in the returned string)."""
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = ansi_console(buffer, width)
    console.print(
        Text(f"before: {shown_text(diff.before)}\nafter:  {shown_text(diff.after)}", style="bold")
    )
    for line in guard_lines(diff):
        console.print(Text(shown_text(line)))
    for target in diff.targets:
        console.print()
        console.rule(Text(shown_text(target.name), style="bold"), align="left")
        sides = Table(box=None, padding=(0, 2), show_edge=False)
        for column in ("", "before", "after"):
            sides.add_column(column, overflow="fold", style="bold" if not column else "")
        for key, old, new in header_rows(target):
            sides.add_row(
                Text(key),
                Text(shown_text(old)),
                Text(shown_text(new), style="yellow" if old != new else ""),
            )
        console.print(sides)
        _rich_changes(console, target, diff.allow)
        if not target.changes:
            console.print(Text("no changes", style="green"))
        for line in (*cost_lines(target), *profile_lines(target)):
            console.print(Text(shown_text(line)))
        gate = gate_lines(target, diff.fail_on)
        if gate:
            console.print()
        for k, line in enumerate(gate):
            console.print(Text(shown_text(line), style="bold red" if k == 0 else "dim"))
        console.print(Text(_unchanged_line(target), style="dim"))
        program = program_line(target)
        if program is not None:
            same = target.program is not None and target.program.same_program
            console.print(Text(shown_text(program), style="green" if same else "yellow"))
    if diff.only_before or diff.only_after:
        console.print()
        console.print(Text("functions recorded on one side only (not compared)", style="bold"))
        for line in unpaired_lines(diff):
            console.print(Text("  " + shown_text(line), style="yellow"))
    for line in finding_lines(diff):
        console.print(Text(shown_text(line), style="bold red"))
    console.print()
    console.print(Text(summary_line(diff), style="bold red" if diff.failed else "bold green"))
    return buffer.getvalue()


def render(diff: DiffReport, color: bool = False, width: int = 120) -> str:
    """The diff as text; ``color`` for a terminal."""
    return render_rich(diff, width) if color else render_plain(diff)


def describe(diff: DiffReport) -> str:
    """The diff's ``repr``: both sides, the verdict and the counts, on one line."""
    counts = diff.summary
    verdict = "FAIL" if diff.failed else "ok"
    return (
        f"<DiffReport {shown_text(diff.before)} → {shown_text(diff.after)} · "
        f"{len(diff.targets)} target"
        f"{'s' if len(diff.targets) != 1 else ''} · {verdict}: {counts.regressions} "
        f"regressions ({counts.failing} failing), {counts.improvements} improvements, "
        f"{counts.neutral} neutral>"
    )
