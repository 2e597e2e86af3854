"""A survey diff as Markdown (a pull request's comment): a table of the changed cells."""

from __future__ import annotations

from jxinspect.core.survey_diff import KINDS, SurveyDiff
from jxinspect.render.common.escape import markdown_text as md


def render(diff: SurveyDiff) -> str:
    counts = ", ".join(f"{len(diff.of_kind(k))} {k}" for k in KINDS)
    lines = [
        f"### Survey: JAX {md(diff.before_release)} → JAX {md(diff.after_release)}",
        "",
        ("**Failed**: " if diff.failed else "") + counts,
    ]
    if diff.changes:
        lines += ["", "| change | program | level | before | after |", "|---|---|---|---|---|"]
        lines += [
            f"| {c.kind} | {md(c.program)} | {md(c.level)} | {md(c.before_counts or '(none)')} "
            f"| {md(c.after_counts or '(none)')} |"
            for kind in KINDS
            for c in diff.of_kind(kind)
        ]
    for label, names in (("Only in the first survey", diff.only_before),
                         ("Only in the second survey", diff.only_after)):  # fmt: skip
        if names:
            lines += ["", f"{label}: {', '.join(md(n) for n in names)}"]
    return "\n".join(lines) + "\n"
