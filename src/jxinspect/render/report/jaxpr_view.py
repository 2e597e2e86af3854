"""The annotated jaxpr (``--show jaxpr``): the jaxpr as JAX prints it, each input labelled
by its path, each output by its result path, static arguments stated, nested jaxprs
labelled with their own debug info (and where it was dropped), and with ``--source`` the
user's ``file:line`` beside each equation JAX recorded one for."""

from __future__ import annotations

from jxinspect.core.model import Report
from jxinspect.render.common.escape import text as esc
from jxinspect.render.report.code import annotated_lines


def static_lines(report: Report) -> list[str]:
    """``# static n = 3 (position 1): baked into the program, not an input`` (escaped)."""
    return [
        f"# static {esc(arg.path)} = {esc(arg.value)} ("
        + (f"position {arg.position}" if arg.position is not None else "keyword")
        + "): baked into the program, not an input"
        for arg in report.static_args
    ]


def render(report: Report, color: bool = False, max_lines: int | None = None) -> str:
    """The annotated jaxpr, or a line saying why there is none."""
    text = report.program.jaxpr if report.program is not None else None
    if text is None:
        return "# no jaxpr: it was not kept for this report\n"
    lines = static_lines(report) + annotated_lines(report, text, color, max_lines)
    return "\n".join(lines) + "\n"
