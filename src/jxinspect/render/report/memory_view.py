"""The peak's live set (``lower --memory``): where the peak is reached, the bytes live over
the schedule as a sparkline, and the largest buffers live there, largest first (the rest
counted: ``and K more (X MiB)``; JSON and HTML list every one)."""

from __future__ import annotations

from jxinspect.core.model import (
    BUFFER_KINDS,
    MemoryPeak,
    PeakBuffer,
    PeakPoint,
    Placed,
    Recomputed,
    Report,
    Residual,
)
from jxinspect.core.units import human_bytes
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.source import source_text
from jxinspect.render.common.table import largest, plain_table

COLUMNS = ("bytes", "kind", "type", "holds", "role", "loop", "source")
"""The source last: a path's length never moves the other columns."""
BARS = "▁▂▃▄▅▆▇█"
WIDTH = 60
"""The sparkline's most columns: a longer schedule is drawn by its largest value per column."""


def holds(buffer: PeakBuffer) -> str:
    """What a buffer holds, as the user names it: an argument's or result's path (donated
    said), else the optimized program's instruction."""
    if buffer.path is not None:
        return buffer.path + (" (donated)" if buffer.donated else "")
    if buffer.kind == "result" and buffer.type.startswith("("):
        return "the results' tuple"
    return buffer.instruction or "?"


def source(at: Placed) -> str:
    """The user's line of a value, the library's beside it."""
    return source_text(at.file, at.line, at.library_file, at.library_line)


def where(point: PeakPoint | None) -> str:
    """``at dot.5 (model.py:40), step 33 of 37``; empty where no temporary is live."""
    if point is None:
        return ""
    at = f"at {point.instruction}"
    said = source_text(point.file, point.line, point.library_file, point.library_line)
    if said:
        at += f" ({said})"
    if point.position is not None and point.of is not None:
        at += f", step {point.position + 1} of {point.of}"
    return at


def sparkline(timeline: tuple[int, ...], width: int = WIDTH) -> str:
    """The bytes live at each step, one bar per step (per group of steps, their most)."""
    if not timeline:
        return ""
    groups = -(-len(timeline) // width)
    values = [max(timeline[i : i + groups]) for i in range(0, len(timeline), groups)]
    low, high = min(values), max(values)
    span = high - low
    return "".join(BARS[(v - low) * (len(BARS) - 1) // span] if span else BARS[0] for v in values)


def summary(peak: MemoryPeak) -> str:
    """One line, raw (escaped where shown): the peak, where it is reached, what XLA
    allocated (on a TPU, always: what the chip needs free to run the program)."""
    if peak.bytes is None:
        return f"not read: {peak.unread or 'unknown'}"
    said = f"{human_bytes(peak.bytes)} per device"
    said += f" (HBM, with the code: {human_bytes(peak.code)})" if peak.code is not None else ""
    said += f" {where(peak.at)}" if peak.at else ""
    if peak.allocated is not None and peak.code is not None:  # a TPU: what it must have free
        said += f"; needs {human_bytes(peak.allocated)} free to run it (XLA's allocations)"
    elif peak.allocated is not None and human_bytes(peak.allocated) != human_bytes(peak.bytes):
        said += f"; XLA allocated {human_bytes(peak.allocated)}"
    return said + (f"; {peak.unread}" if peak.unread else "")


def on_chip(peak: MemoryPeak) -> str:
    """``on chip (not HBM): VMEM 4.0 MiB in 4 buffers, SMEM 8 B in 2 buffers``, each at its
    own peak; empty where every buffer is in the main memory (a CPU's)."""
    if peak.on_chip is None:
        return "on chip (not HBM): unknown (this analysis does not say a buffer's memory space)"
    said = [f"{s.space} {human_bytes(s.bytes)} in {len(s.buffers)} buffer"
            + ("s" if len(s.buffers) != 1 else "") for s in peak.on_chip]  # fmt: skip
    return "on chip (not HBM): " + ", ".join(said) if said else ""


def rows(peak: MemoryPeak) -> list[tuple[str, ...]]:
    """One raw row per buffer (escaped by the table)."""
    return rows_of(peak.buffers or ())


def _table(
    columns: tuple[str, ...], rows: list[tuple[str, ...]], more: str | None, indent: str = "  "
) -> list[str]:
    """A text table, and the line that counts the rows it leaves out."""
    return [indent + line for line in plain_table(columns, rows)] + (
        [f"{indent}{more}"] if more else []
    )


def rows_of(buffers: tuple[PeakBuffer, ...]) -> list[tuple[str, ...]]:
    return [
        (human_bytes(b.bytes), b.kind, b.type, holds(b), b.role or "", b.loop or "",
         source_text(b.file, b.line, b.library_file, b.library_line))
        for b in buffers
    ]  # fmt: skip


def per_kind(peak: MemoryPeak) -> str:
    """Bytes per kind of buffer, in :data:`~jxinspect.core.model.BUFFER_KINDS` order."""
    totals = {kind: 0 for kind in BUFFER_KINDS}
    for b in peak.buffers or ():
        totals[b.kind] += b.bytes
    return ", ".join(f"{kind} {human_bytes(total)}" for kind, total in totals.items() if total)


RESIDUAL_COLUMNS = ("bytes", "type", "from", "name", "source")


def residual_lines(residuals: tuple[Residual, ...] | None) -> list[str]:
    """What the forward pass keeps for the backward pass, as ``print_saved_residuals``
    says it (global sizes); none where the program does not differentiate."""
    if residuals is None:
        return ["kept for the backward pass: not known (this JAX's jaxprs do not say which "
                "pass an operation is in)"]  # fmt: skip
    if not residuals:
        return []
    total = human_bytes(sum(r.bytes for r in residuals))
    shown, more = largest(sorted(residuals, key=lambda r: -r.bytes), lambda r: r.bytes)
    rows: list[tuple[str, ...]] = [
        (human_bytes(r.bytes), r.type, r.source, r.name or "", source(r)) for r in shown
    ]
    return [
        f"kept for the backward pass: {len(residuals)} residuals, {total} (global), largest first",
        *_table(RESIDUAL_COLUMNS, rows, more),
    ]


RECOMPUTED_COLUMNS = ("bytes", "type", "value", "source", "loop")


def recomputed_lines(recomputed: tuple[Recomputed, ...] | None) -> list[str]:
    """What checkpoint policies run again in the backward pass instead of keeping it
    (global sizes); none where nothing is."""
    if not recomputed:
        return []
    total = human_bytes(sum(r.bytes for r in recomputed))
    shown, more = largest(recomputed, lambda r: r.bytes)
    rows: list[tuple[str, ...]] = [
        (human_bytes(r.bytes), r.type, f"'{r.name}'" if r.name else r.operation,
         source(r),
         "each trip" if r.looped else "")
        for r in shown
    ]  # fmt: skip
    return [
        f"recomputed in the backward pass (checkpoint): {len(recomputed)} values, {total} (global)",
        *_table(RECOMPUTED_COLUMNS, rows, more),
    ]


def render(report: Report) -> str:
    """The peak, the bytes over the schedule and the buffers live at the peak."""
    if report.compiled is None:
        return f"memory: not compiled (reached {report.reached})\n"
    peak = report.compiled.peak
    if peak is None:
        return "memory: the peak was not asked for (lower --memory)\n"
    if peak.buffers is None or peak.bytes is None:
        return f"memory at the peak: {esc(summary(peak))}\n"
    lines = [f"memory at the peak: {len(peak.buffers)} buffers, {esc(summary(peak))}"]
    if peak.timeline:
        lines.append(f"  over the schedule: {sparkline(peak.timeline)}")
    shown, more = largest(peak.buffers, lambda b: b.bytes)
    lines += _table(COLUMNS, rows_of(tuple(shown)), more)
    lines.append(
        "  per kind: "
        + per_kind(peak)
        + (f", code {human_bytes(peak.code)}" if peak.code is not None else "")
    )
    if chip := on_chip(peak):
        lines.append("  " + chip)
        for space in peak.on_chip or ():
            lines.append(f"  {space.space} at its own peak:")
            shown, more = largest(space.buffers, lambda b: b.bytes)
            lines += _table(COLUMNS, rows_of(tuple(shown)), more, "    ")
    lines += residual_lines(report.compiled.residuals)
    lines += recomputed_lines(report.compiled.recomputed)
    return "\n".join(lines) + "\n"
