"""The compiled program's collectives as a plain table, with totals per mesh axis."""

from __future__ import annotations

from jxinspect.core.model import Report
from jxinspect.core.units import human_bytes, type_text
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.table import plain_table

COLUMNS = ("#", "collective", "axes", "operands (per device)", "bytes", "op", "source")


def rows(report: Report) -> list[tuple[str, ...]]:
    assert report.compiled is not None
    result: list[tuple[str, ...]] = []
    for i, c in enumerate(report.compiled.collectives):
        operands = ", ".join(type_text(o.shape, o.dtype) for o in c.operands)
        axes = ",".join(c.axes) if c.axes is not None else f"? ({c.groups})"
        source = f"{c.file}:{c.line}" if c.file else ""
        result.append(
            (str(i), c.kind, axes or "—", operands, human_bytes(c.bytes), c.op_name or "", source)
        )
    return result


def render(report: Report) -> str:
    """Every collective, then operand bytes per device summed per set of mesh axes."""
    if report.compiled is None:
        return f"collectives: not compiled (reached {report.reached})\n"
    collectives = report.compiled.collectives
    lines = [f"collectives ({len(collectives)})"]
    if collectives:
        lines += ["  " + line for line in plain_table(COLUMNS, rows(report))]
        totals = report.compiled.collective_bytes_by_axes
        lines.append(
            "  per axis: "
            + ", ".join(
                f"{esc(axes or '—')} {human_bytes(total)}" for axes, total in totals.items()
            )
        )
    return "\n".join(lines) + "\n"
