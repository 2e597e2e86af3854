"""What a change did to the compiled cost per device (``diff-debug --compile``).

No JAX here. :func:`diff_cost` compares two compiled reports into a
:class:`~jxinspect.core.cost_diff.CostDiff`: memory per kind and FLOPs before → after, and
the collectives paired by kind, mesh axes and the paths they move (in program order where
several share all three); :func:`cost_changes` grades it for the gate: a collective added
and temporaries grown past ``memory_growth`` are errors, a collective removed an
improvement, one whose bytes per step or trips changed is neutral; a side whose optimized
program could not be read is an error too (its collectives are unknown, none compared).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from jxinspect.core.cost_diff import (
    MEMORY_KINDS,
    CollectiveChange,
    CollectiveChangeKind,
    CostDiff,
    MeasureChange,
    SideName,
    pair_collectives,
    pair_peaks,
)
from jxinspect.core.diff import Change, Verdict
from jxinspect.core.model import Collective, CompiledInfo, Input, Output, Report, Severity
from jxinspect.core.units import human_bytes


def _measures(before: CompiledInfo, after: CompiledInfo) -> tuple[MeasureChange, ...]:
    memory = tuple(
        MeasureChange(kind, getattr(before.memory, kind), getattr(after.memory, kind))
        for kind in MEMORY_KINDS
    )
    return (*memory, MeasureChange("flops", before.flops, after.flops))


def diff_cost(before: Report, after: Report, memory_growth: float) -> CostDiff | None:
    """Both reports' compiled cost compared; ``None`` where a side was not compiled."""
    if before.compiled is None or after.compiled is None:
        return None
    sides: tuple[tuple[SideName, CompiledInfo], ...] = (
        ("before", before.compiled),
        ("after", after.compiled),
    )
    unread = tuple((side, c.unread) for side, c in sides if c.unread is not None)
    was, now = before.compiled.collectives, after.compiled.collectives
    both = was is not None and now is not None
    collectives, same = pair_collectives(was or (), now or ()) if both else ((), 0)
    collectives = _with_declarations(collectives, _declarations(before, after))
    measures = _measures(before.compiled, after.compiled)
    old, new = before.compiled.peak, after.compiled.peak
    if old is None or new is None:
        return CostDiff(measures, collectives, same, memory_growth, unread)
    peak = MeasureChange("peak", old.bytes, new.bytes)
    readable = old.buffers is not None and new.buffers is not None
    paired = pair_peaks(old, new, (before.file, after.file)) if readable else ()
    return CostDiff((*measures, peak), collectives, same, memory_growth, unread, paired)


def _declarations(before: Report, after: Report) -> dict[str, str]:
    """``path: P() → P('data', None)`` for each argument or result path whose declared
    sharding differs between the sides (``not declared`` where a side declares none)."""

    def declared(report: Report) -> dict[str, str]:
        leaves: list[Input | Output] = [*report.inputs, *report.outputs]
        return {
            leaf.path: leaf.sharding.readable if leaf.sharding is not None else "not declared"
            for leaf in leaves
        }

    old, new = declared(before), declared(after)
    return {
        path: f"{path}: {old[path]} → {new[path]}"
        for path in old.keys() & new.keys() if old[path] != new[path]
    }  # fmt: skip


def _with_declarations(
    changes: tuple[CollectiveChange, ...], declared: dict[str, str]
) -> tuple[CollectiveChange, ...]:
    """Each added or changed collective with the changed declarations of the paths it
    moves."""
    return tuple(
        replace(c, declarations=tuple(declared[p] for p in c.collective.operand_paths
                                      if p in declared))
        if c.change != "removed" else c
        for c in changes
    )  # fmt: skip


def per_step(collective: Collective | None) -> str | None:
    """``32.0 KiB per step`` (× its trips where it runs in a loop)."""
    if collective is None:
        return None
    trips = f" ({collective.trip_count} trips)" if (collective.trip_count or 1) != 1 else ""
    return f"{human_bytes(collective.bytes_per_step)} per step{trips}"


def cost_changes(cost: CostDiff) -> Iterator[Change]:
    """The gate's view of the cost: each collective change, and temporaries grown past
    the threshold."""
    grades: dict[CollectiveChangeKind, tuple[Verdict, Severity | None]] = {
        "added": ("regression", "error"), "removed": ("improvement", None),
        "changed": ("neutral", None),
    }  # fmt: skip
    for side, why in cost.unread:
        yield Change(
            category="collective", kind="unread", verdict="regression", severity="error",
            where="collective", path=f"the {side} side's compiled program",
            before=why if side == "before" else None, after=why if side == "after" else None,
        )  # fmt: skip
    for found in cost.collectives:
        verdict, severity = grades[found.change]
        yield Change(
            category="collective", kind=found.change, verdict=verdict, severity=severity,
            where="collective", path=found.collective.described,
            before=per_step(found.before), after=per_step(found.after),
        )  # fmt: skip
    temporaries = cost.measure("temporaries")
    before, after = temporaries.before, temporaries.after
    if before is not None and after is not None and after > before * (1 + cost.memory_growth):
        grown = f"+{temporaries.percent:.1f}%" if temporaries.percent is not None else "from 0"
        yield Change(
            category="memory", kind="grew", verdict="regression", severity="error",
            where="memory", path="temporaries", before=human_bytes(int(before)),
            after=f"{human_bytes(int(after))} ({grown}, over {cost.memory_growth * 100:g}%)",
        )  # fmt: skip
