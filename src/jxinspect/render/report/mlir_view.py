"""The annotated lowered module (``--show mlir``): StableHLO (or HLO with ``--dialect
hlo``) as JAX prints it, ``@main``'s arguments and results one per line, each labelled
with its path, status and readable sharding (``P(...)``) beside the raw attribute."""

from __future__ import annotations

from jxinspect.core.model import Report
from jxinspect.render.common.escape import text as esc
from jxinspect.render.report.code import annotated_lines


def render(report: Report, color: bool = False, max_lines: int | None = None) -> str:
    """The annotated module, or a line saying why there is none."""
    program = report.program
    text = program.module if program is not None else None
    if text is None:
        if report.reached == "traced":
            why = f"lowering failed: {report.error}" if report.error else "it was not lowered"
        else:
            why = (program.module_error if program is not None else None) or "it was not kept"
        return f"// no module: {esc(why)}\n"
    return "\n".join(annotated_lines(report, text, color, max_lines)) + "\n"
