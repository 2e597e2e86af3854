"""A lint result as GitHub Actions workflow commands: one annotation per new finding.

``::error file=models/mlp.py,line=12,title=JX102::message``. Message data escapes
``%``, CR and LF; property values also escape ``:`` and ``,`` (GitHub's own rules);
other control characters are shown as ``\\xNN`` (:mod:`jxinspect.render.escape`).
Baselined findings are left out; the summary is the last, plain line.
"""

from __future__ import annotations

from jxinspect.lint_result import LintResult
from jxinspect.render.escape import github_data, github_property

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


escape_data = github_data
escape_property = github_property


def command(
    level: str,
    message: str,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow command line."""
    props = []
    if file is not None:
        props.append(f"file={escape_property(file)}")
        if line:
            props.append(f"line={line}")
    if title is not None:
        props.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"


def render(result: LintResult) -> str:
    lines = []
    for target in result.targets:
        if target.failed:
            lines.append(
                command(
                    "error",
                    f"{target.name}: {target.error}",
                    target.file,
                    target.line,
                    "jxinspect: target failed",
                )
            )
        for finding in target.findings:
            if not finding.baselined:
                lines.append(
                    command(
                        LEVELS[finding.severity],
                        f"{target.name}: {finding.message}",
                        finding.file,
                        finding.line,
                        finding.code,
                    )
                )
    for entry in result.gone:
        message = (
            f"baseline entry gone: {entry.target} {entry.code} {entry.path or '-'} "
            f"(x{entry.count}); drop it with --write-baseline"
        )
        lines.append(command("notice", message, title="jxinspect baseline"))
    lines.append(result.summary())
    return "\n".join(lines) + "\n"
