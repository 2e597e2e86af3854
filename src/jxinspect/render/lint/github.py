"""A lint result as GitHub Actions workflow commands: an annotation per new finding, or
one per file and rule where they repeat (GitHub shows only a few annotations per step).

``::error file=models/mlp.py,line=12,title=JX102::message``. Message data escapes
``%``, CR and LF; property values also escape ``:`` and ``,`` (GitHub's own rules);
other control characters are shown as ``\\xNN`` (:mod:`jxinspect.render.common.escape`).
Baselined findings are left out; the summary is the last, plain line.
"""

from __future__ import annotations

from jxinspect.core.lint import LintFinding, LintResult
from jxinspect.render.common.escape import github_data, github_property

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}
GROUP_FROM = 4
"""New findings of one file, rule and level shown as one annotation from this many on."""
EXAMPLES = 3
"""Further findings a grouped annotation names."""


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
    """Failed targets one by one; new findings grouped per file, rule and level (one
    annotation for :data:`GROUP_FROM` or more: GitHub shows only a few per step); baseline
    entries gone; the summary last."""
    lines = []
    groups: dict[tuple[str | None, str, str], list[tuple[str, LintFinding]]] = {}
    for target in result.targets:
        if target.failed:
            lines.append(
                command(
                    "error",
                    f"{target.target}: {target.error}",
                    target.file,
                    target.line,
                    "jxinspect: target failed",
                )
            )
        for finding in target.findings:
            if not finding.baselined:
                key = (finding.file, finding.code, finding.severity)
                groups.setdefault(key, []).append((target.target, finding))
    for (file, code, severity), members in groups.items():
        level = LEVELS[severity]
        if len(members) < GROUP_FROM:
            for name, finding in members:
                lines.append(command(level, f"{name}: {finding.message}", file, finding.line, code))
            continue
        name, first = members[0]
        others = ", ".join(f"{n}: {f.path}" if f.path else n for n, f in members[1 : 1 + EXAMPLES])
        rest = len(members) - 1 - EXAMPLES
        more = f" and {rest} more" if rest > 0 else ""
        message = (
            f"{len(members)} {code} findings in {file or 'the project'}, e.g. {name}: "
            f"{first.message}; also {others}{more} (every one is in the text, JSON and "
            "SARIF output)"
        )
        lines.append(command(level, message, file, first.line, f"{code} (x{len(members)})"))
    for entry in result.gone:
        message = (
            f"baseline entry gone: {entry.target} {entry.code} {entry.path or '-'} "
            f"(x{entry.count}); drop it with --write-baseline"
        )
        lines.append(command("notice", message, title="jxinspect baseline"))
    lines.append(result.summary_line())
    return "\n".join(lines) + "\n"
