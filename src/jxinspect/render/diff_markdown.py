"""A diff as GitHub-flavoured Markdown, for a pull-request comment.

Regressions are shown; improvements and neutral changes fold into ``<details>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from jxinspect.diff import DiffReport, TargetDiff
from jxinspect.render.diff_text import (
    CHANGE_COLUMNS,
    VERDICT_TITLE,
    change_rows,
    header_rows,
    summary_line,
)

_CODE_COLUMNS = {4, 5, 6}
"""Leaf, before and after: names and paths, shown as code."""


def code(text: str) -> str:
    """Inline code that survives a table cell (pipes escaped, backticks fenced)."""
    if text in ("", "—"):
        return text
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(
    columns: tuple[str, ...], rows: Sequence[tuple[str, ...]], as_code: set[int]
) -> list[str]:
    keep = [i for i in range(len(columns)) if any(row[i] for row in rows)]
    lines = ["| " + " | ".join(columns[i] for i in keep) + " |", "|" + "---|" * len(keep)]
    for row in rows:
        cells = [code(row[i]) if i in as_code else _cell(row[i]) for i in keep]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _target(target: TargetDiff, diff: DiffReport) -> list[str]:
    counts = target.counts(diff.policy)
    title = f"### {code(target.name)}: {counts['regressions']} regressions"
    if counts["regressions"]:
        title += f" ({counts['failing']} failing)"
    title += f", {counts['improvements']} improvements, {counts['neutral']} neutral"
    lines = [title, ""]
    lines += _table(("", "before", "after"), header_rows(target), set())
    for verdict, heading in VERDICT_TITLE.items():
        changes = target.of_verdict(verdict)
        if not changes:
            continue
        rows = change_rows(changes, diff.policy)
        rows = [
            (f"**{row[0]}**" if diff.policy.fails(c) else row[0], *row[1:])
            for c, row in zip(changes, rows)
        ]
        table = _table(CHANGE_COLUMNS, rows, _CODE_COLUMNS)
        if verdict == "regression":
            lines += ["", f"**{heading.capitalize()}**", "", *table]
        else:
            summary = f"{heading.capitalize()} ({len(changes)})"
            lines += ["", f"<details><summary>{summary}</summary>", "", *table, "", "</details>"]
    if not target.changes:
        lines += ["", "No changes."]
    return lines


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
    for target in diff.targets:
        lines += ["", *_target(target, diff)]
    return "\n".join(lines) + "\n"
