"""The compiled program's collectives as a plain table, with totals per mesh axis."""

from __future__ import annotations

from jxinspect.core.model import Collective, Report
from jxinspect.core.units import human_bytes, type_text
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.source import source_text
from jxinspect.render.common.table import ROWS_MOST, largest, plain_table

CELL_MOST = 48
"""A cell's most characters here: ten columns, two of them (the operands, XLA's op name)
as long as the program makes them, fit a wide terminal."""
COLUMNS = ("#", "collective", "axes", "operands (per device)", "bytes", "trips", "bytes/step",
           "moves", "op", "source")  # fmt: skip


def trips(c: Collective) -> str:
    """How many times it runs per call, and in which loops: ``1``, ``4 (while.8)``, ``?``."""
    count = str(c.trip_count) if c.trip_count is not None else "?"
    return f"{count} ({' › '.join(c.loops)})" if c.loops else count


def groups_text(c: Collective) -> str:
    """Its devices, briefly: the groups where there are a few, else their count and size
    (``[[0, 1], [2, 3]]``, ``16 groups of 4``, ``8 pairs``)."""
    if c.groups is None:
        return f"{len(c.pairs)} pairs"
    if len(c.groups) <= 4:
        return str([list(g) for g in c.groups])
    return f"{len(c.groups)} groups of {len(c.groups[0])}"


def rows(report: Report, most: int | None = None) -> list[tuple[str, ...]]:
    """One raw row per collective (escaped by the renderer that shows it); the ``most``
    that move the most bytes per step where given, in program order."""
    assert report.compiled is not None
    numbered = list(enumerate(report.compiled.collectives or ()))
    if most is not None:
        numbered, _ = largest(numbered, lambda ic: ic[1].bytes_per_step, most)
    result: list[tuple[str, ...]] = []
    for i, c in numbered:
        operands = ", ".join(type_text(o.shape, o.dtype) for o in c.operands)
        axes = ",".join(c.axes) if c.axes is not None else f"? ({groups_text(c)})"
        source = source_text(c.file, c.line, c.library_file, c.library_line)
        result.append(
            (str(i), c.kind, axes or "—", operands, human_bytes(c.bytes), trips(c),
             human_bytes(c.bytes_per_step), c.moves, c.op_name or "", source)
        )  # fmt: skip
    return result


def per_step_by_axes(report: Report) -> dict[str, int]:
    """Bytes per step (``bytes_per_step``) summed per set of mesh axes, in axes order."""
    assert report.compiled is not None
    totals: dict[str, int] = {}
    for c in report.compiled.collectives or ():
        key = ",".join(c.axes) if c.axes is not None else "?"
        totals[key] = totals.get(key, 0) + c.bytes_per_step
    return dict(sorted(totals.items()))


def totals_line(totals: dict[str, int]) -> str:
    return ", ".join(f"{axes or '—'} {human_bytes(total)}" for axes, total in totals.items())


def render(report: Report) -> str:
    """Every collective, then operand bytes per device summed per set of mesh axes, once
    and per step."""
    if report.compiled is None:
        return f"collectives: not compiled (reached {report.reached})\n"
    collectives = report.compiled.collectives
    if collectives is None:
        return f"collectives: not read: {esc(report.compiled.unread or 'unknown')}\n"
    lines = [f"collectives ({len(collectives)})"]
    if collectives:
        _, more = largest(collectives, lambda c: c.bytes_per_step)
        lines += ["  " + line for line in plain_table(COLUMNS, rows(report, ROWS_MOST), CELL_MOST)]
        lines += [f"  {more} per step (--format json lists every one)"] if more else []
        lines.append("  per axis: " + esc(totals_line(report.compiled.collective_bytes_by_axes)))
        lines.append("  per step: " + esc(totals_line(per_step_by_axes(report))))
    return "\n".join(lines) + "\n"
