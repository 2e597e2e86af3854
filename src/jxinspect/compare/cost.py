"""What a change did to the compiled cost per device (``diff-debug --compile``).

No JAX here. :func:`diff_cost` compares two compiled reports into a
:class:`~jxinspect.core.cost_diff.CostDiff`: memory per kind and FLOPs before → after, and
the collectives paired by kind, mesh axes and the paths they move (in program order where
several share all three); :func:`cost_changes` grades it for the gate: a collective added
(a warning where the bytes moved per step fell past ``memory_growth`` all the same) and
temporaries grown past it are errors, a collective removed an
improvement, one whose bytes per step fell past the threshold too; the measures (memory
per kind, FLOPs, the bytes moved per step) that fell past it are improvements, those that
grew past it regressions; a side whose optimized program could not be read is an error
(its collectives are unknown, none compared).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from jxinspect.core.cost_diff import (
    MEMORY_KINDS,
    CollectiveChange,
    CostDiff,
    Measure,
    MeasureChange,
    SideName,
    pair_collectives,
    pair_peaks,
)
from jxinspect.core.diff import Change, ChangeClass, ChangeKind, Verdict, Where
from jxinspect.core.model import Collective, CompiledInfo, Input, Output, Report, Severity
from jxinspect.core.units import human_bytes


def moved(collectives: tuple[Collective, ...] | None) -> int | None:
    """The bytes a program's collectives move per step, summed (``None``: not read)."""
    return None if collectives is None else sum(c.bytes_per_step for c in collectives)


def _measures(before: CompiledInfo, after: CompiledInfo) -> tuple[MeasureChange, ...]:
    memory = tuple(
        MeasureChange(kind, getattr(before.memory, kind), getattr(after.memory, kind))
        for kind in MEMORY_KINDS
    )
    flops = MeasureChange("flops", before.flops, after.flops)
    was, now = moved(before.collectives), moved(after.collectives)
    traffic = (MeasureChange("moved", was, now),) if None not in (was, now) else ()
    return (*memory, flops, *traffic)


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


JUDGED: tuple[tuple[Measure, ChangeClass, Where, str], ...] = (
    ("arguments", "memory", "memory", "arguments"),
    ("outputs", "memory", "memory", "outputs"),
    ("temporaries", "memory", "memory", "temporaries"),
    ("peak", "memory", "memory", "peak"),
    ("flops", "flops", "flops", "FLOPs"),
    ("moved", "collective", "collective", "bytes moved per step"),
)
"""The measures judged past the threshold: (measure, class, where, what the row says).
Aliased bytes are the donations' (judged per argument), not a cost."""


def _value(measure: Measure, value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if measure == "flops" else human_bytes(int(value))


def _measure_changes(cost: CostDiff) -> Iterator[Change]:
    """Each measure that fell past the threshold (an improvement) or grew past it (a
    regression: an error for temporaries, the project's budget; a warning otherwise)."""
    for name, category, where, label in JUDGED:
        found = cost.measure(name)
        if found is None or not (cost.fell(name) or cost.rose(name)):
            continue
        change = f"{found.percent:+.1f}%" if found.percent is not None else "from 0"
        after = f"{_value(name, found.after)} ({change})"
        if cost.fell(name):
            verdict: Verdict = "improvement"
            severity: Severity | None = None
            kind: ChangeKind = "fewer" if name in ("flops", "moved") else "shrank"
        else:
            verdict, kind = "regression", "more" if name in ("flops", "moved") else "grew"
            severity = "error" if name == "temporaries" else "warning"
            if name == "temporaries":
                after = after[:-1] + f", over {cost.memory_growth * 100:g}%)"
        yield Change(
            category=category, kind=kind, verdict=verdict, severity=severity, where=where,
            path=label, before=_value(name, found.before), after=after,
        )  # fmt: skip


def _collective_grade(cost: CostDiff, found: CollectiveChange) -> tuple[Verdict, Severity | None]:
    """A collective added: an error, a warning where the bytes moved per step fell past
    the threshold all the same (the change moves less in all); removed: an improvement;
    its bytes per step fallen past the threshold: an improvement, grown past it: a
    warning; else neutral."""
    if found.change == "added":
        return ("regression", "warning" if cost.fell("moved") else "error")
    if found.change == "removed":
        return ("improvement", None)
    assert found.before is not None and found.after is not None
    old, new = found.before.bytes_per_step, found.after.bytes_per_step
    if new < old * (1 - cost.memory_growth):
        return ("improvement", None)
    if new > old * (1 + cost.memory_growth):
        return ("regression", "warning")
    return ("neutral", None)


def cost_changes(cost: CostDiff) -> Iterator[Change]:
    """The gate's view of the cost: each collective change, and each measure that fell or
    grew past the threshold."""
    for side, why in cost.unread:
        yield Change(
            category="collective", kind="unread", verdict="regression", severity="error",
            where="collective", path=f"the {side} side's compiled program",
            before=why if side == "before" else None, after=why if side == "after" else None,
        )  # fmt: skip
    for found in cost.collectives:
        verdict, severity = _collective_grade(cost, found)
        yield Change(
            category="collective", kind=found.change, verdict=verdict, severity=severity,
            where="collective", path=found.collective.described,
            before=per_step(found.before), after=per_step(found.after),
        )  # fmt: skip
    yield from _measure_changes(cost)
