"""A lint result as text: each target with its new findings, then a summary line.

Findings read ``file:line: CODE severity message`` (editors and terminals link the
location), paths as :mod:`~jxinspect.render.common.source` prints them; repeats of one
code and message shape are one line, as ``lower`` prints them
(:mod:`~jxinspect.render.common.findings`), and a target's count is every new finding, as
the summary counts them. Baselined findings are counted, not listed. Colour only when asked. Names,
paths and messages are escaped (:func:`escape.text`): they cannot colour the terminal or
start a line of their own.
"""

from __future__ import annotations

from jxinspect.core.lint import LintResult
from jxinspect.core.model import Finding
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.findings import finding_lines, grouped
from jxinspect.render.common.source import paths_shown, shown_path

_STYLES = {
    "error": "\033[1;31m",
    "warning": "\033[33m",
    "info": "\033[36m",
    "bold": "\033[1m",
    "ok": "\033[32m",
}
_RESET = "\033[0m"


def _location(finding: Finding) -> str:
    if finding.file is None:
        return ""
    file = esc(shown_path(finding.file))
    return f"{file}:{finding.line}: " if finding.line else f"{file}: "


def render(result: LintResult, color: bool = False) -> str:
    """Targets in name order; the last line is :meth:`LintResult.summary`."""

    def paint(text: str, style: str) -> str:
        return f"{_STYLES[style]}{text}{_RESET}" if color else text

    lines: list[str] = []
    for target in result.targets:
        fresh = [f for f in target.findings if not f.baselined]
        new = [f for f in fresh if not f.inside_jax]
        kept = len(target.findings) - len(fresh)
        jax_own = len(fresh) - len(new)
        tail = ", ".join(
            ([f"{kept} baselined"] if kept else [])
            + ([f"{jax_own} inside JAX's own code"] if jax_own else [])
        )
        tail = f" ({tail})" if tail else ""
        name = esc(target.target)
        if target.failed:
            lines.append(f"{paint(name, 'bold')}: {paint('failed', 'error')}")
            where = (
                f"{esc(shown_path(target.file))}:{target.line}: "
                if target.file and target.line
                else ""
            )
            lines.append(f"  {where}{esc(paths_shown(target.error or ''))}")
        elif new:
            count = f"{len(fresh)} finding{'s' if len(fresh) != 1 else ''}"
            lines.append(f"{paint(name, 'bold')}: {count}{tail}")
            for group in grouped(new):
                f = group.first
                head = f"  {_location(f)}{f.code} {f.severity:<7} "
                first, *rest = finding_lines(head, group, lambda m: esc(paths_shown(m)))
                severity = paint(f"{f.severity:<7}", f.severity)
                lines += [f"  {_location(f)}{f.code} {severity} {first[len(head) :]}", *rest]
        else:
            lines.append(f"{name}: {paint('ok', 'ok')}{tail}")
    if result.gone:
        lines += ["", "gone from the baseline (fixed; drop them with --write-baseline):"]
        for entry in result.gone:
            times = f" x{entry.count}" if entry.count > 1 else ""
            where = f"{entry.target} {entry.code} {entry.path or '-'}"
            lines.append(f"  {esc(where)}{times}")
    lines += ["", paint(result.summary_line(), "bold")]
    return "\n".join(lines) + "\n"


def describe(result: LintResult) -> str:
    """The result's ``repr``: targets, findings and failures, on one line."""
    failed = sum(1 for t in result.targets if t.error)
    findings = sum(len(t.findings) for t in result.targets)
    return (
        f"<LintResult {len(result.targets)} targets · {findings} findings · "
        f"{failed} failed to stage · fail on {result.fail_on}>"
    )
