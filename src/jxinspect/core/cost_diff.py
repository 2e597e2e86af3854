"""What a change did to a compiled program's cost per device: ``diff-debug --compile``.

Plain data, as :mod:`jxinspect.core.diff` is: :mod:`jxinspect.compare.cost` makes it from
two compiled reports, the renderers draw it, the codec writes it in the diff's JSON. The
memory per kind and FLOPs before → after with the change in %, and the collectives paired
by kind, mesh axes and the paths they move: added, removed, or changed in bytes per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, get_args

from jxinspect.core.model import BufferKind, Collective, CollectiveKey, MemoryPeak, PeakBuffer

MemoryKind = Literal["arguments", "outputs", "temporaries", "aliased"]
"""A kind of memory XLA's ``memory_analysis()`` reports per device."""
MEMORY_KINDS: tuple[MemoryKind, ...] = get_args(MemoryKind)

SideName = Literal["before", "after"]
"""A side of a comparison."""

CollectiveChangeKind = Literal["added", "removed", "changed"]
"""How a collective changed: only after, only before, or in bytes per step or trips."""

PeakChangeKind = Literal["appeared", "gone", "grew", "shrank"]
"""How what is live at the peak changed for one path or line: only after, only before,
more or fewer bytes."""

DEFAULT_MEMORY_GROWTH = 0.10
"""Temporaries growing by more than this fraction fail the diff unless the project's
``budgets: {memory_growth: ...}`` says otherwise (the settings' default reads it)."""


def growth(before: float | None, after: float | None) -> float | None:
    """``after`` as a change from ``before``, in % (``None`` where either is unknown, or
    from 0 to 0); from 0 to more it is ``inf``: growth past any budget."""
    if before is None or after is None:
        return None
    if before == 0:
        return math.inf if after > 0 else None
    return (after - before) / before * 100


Measure = MemoryKind | Literal["flops", "peak", "moved"]
"""What a :class:`MeasureChange` measures."""


@dataclass(frozen=True)
class MeasureChange:
    """One measure per device, before → after."""

    measure: Measure
    """A kind of memory (bytes), ``flops``, the bytes live at the peak, or ``moved``: the
    bytes the collectives move per step (each one's bytes per step, summed)."""
    before: float | None
    """``None``: that side's backend did not say."""
    after: float | None
    percent: float | None = field(init=False, default=None)
    """The change in % of ``before`` (derived; ``None`` where it cannot be said: a side
    unknown, or growth from 0)."""

    def __post_init__(self) -> None:
        percent = growth(self.before, self.after)
        object.__setattr__(self, "percent", percent if percent != math.inf else None)


@dataclass(frozen=True)
class CollectiveChange:
    """A collective added, removed or changed between the two compiled programs."""

    change: CollectiveChangeKind
    before: Collective | None
    """The collective before (``None``: added)."""
    after: Collective | None
    """The collective after (``None``: removed)."""
    declarations: tuple[str, ...] = ()
    """Each path it moves whose declared sharding is not the same on both sides
    (``w: P() → P('data', None)``): a fact beside it, not a cause found."""

    @property
    def collective(self) -> Collective:
        """The side that has it, the after side first."""
        found = self.after if self.after is not None else self.before
        assert found is not None, "a collective change has at least one side"
        return found


@dataclass(frozen=True)
class PeakBufferChange:
    """What is live at the peak for one argument or result path, or one source line (its
    temporaries summed), before → after."""

    holds: str
    """The path, ``file:line``, or where neither is known the instruction (after's)."""
    kind: BufferKind
    change: PeakChangeKind
    before: int
    """Bytes per device before (0: nothing of it live at the peak)."""
    after: int
    type: str
    """One buffer's type (after's, else before's); ``×N`` where several share the line."""


@dataclass(frozen=True)
class CostDiff:
    """A target's compiled cost per device, before → after."""

    measures: tuple[MeasureChange, ...]
    """Memory per kind (:data:`MEMORY_KINDS` order), FLOPs, the bytes the collectives move
    per step (where both sides' are known), then the peak (``--memory``)."""
    collectives: tuple[CollectiveChange, ...] = ()
    """Added, then removed, then changed; unchanged ones are left out."""
    unchanged_collectives: int = 0
    memory_growth: float = DEFAULT_MEMORY_GROWTH
    """The threshold: a measure that falls by more than this fraction is an improvement,
    one that grows by more a regression (temporaries: failing)."""
    unread: tuple[tuple[SideName, str], ...] = ()
    """Each side whose optimized program could not be read, and why (one line): its
    collectives are unknown, so none are compared, and the gate fails."""
    peak: tuple[PeakBufferChange, ...] = ()
    """Where both sides say their peak (``--memory``): what is live there, paired by path
    or line, the largest change first (unchanged ones left out; see :func:`pair_peaks`)."""

    def measure(self, name: Measure) -> MeasureChange | None:
        """That measure; ``None`` where it was not compared (no peak without ``--memory``,
        no bytes moved where a side's collectives are unknown)."""
        return next((m for m in self.measures if m.measure == name), None)

    def fell(self, name: Measure) -> bool:
        """That measure fell by more than the threshold."""
        found = self.measure(name)
        return (
            found is not None
            and found.percent is not None
            and (found.percent < -self.memory_growth * 100)
        )

    def rose(self, name: Measure) -> bool:
        """That measure rose by more than the threshold (from 0 to more: risen)."""
        found = self.measure(name)
        if found is None or found.before is None or found.after is None:
            return False
        return found.after > found.before * (1 + self.memory_growth)


def pair_collectives(
    before: tuple[Collective, ...], after: tuple[Collective, ...]
) -> tuple[tuple[CollectiveChange, ...], int]:
    """The collectives added, removed and changed, and how many are the same: paired by
    kind, mesh axes and the paths they move, in program order where several share all
    three (:attr:`~jxinspect.core.model.Collective.pairing_key`, which JX304 pairs a
    baseline's collectives by too)."""
    waiting: dict[CollectiveKey, list[Collective]] = {}
    for collective in before:
        waiting.setdefault(collective.pairing_key, []).append(collective)
    added: list[CollectiveChange] = []
    changed: list[CollectiveChange] = []
    same = 0
    for collective in after:
        earlier = waiting.get(collective.pairing_key)
        if not earlier:
            added.append(CollectiveChange("added", None, collective))
            continue
        old = earlier.pop(0)
        if (old.bytes_per_step, old.trip_count) != (
            collective.bytes_per_step,
            collective.trip_count,
        ):
            changed.append(CollectiveChange("changed", old, collective))
        else:
            same += 1
    removed = [CollectiveChange("removed", c, None) for left in waiting.values() for c in left]
    return (*added, *removed, *changed), same


def _peak_key(buffer: PeakBuffer, own_file: str | None) -> tuple[str, str]:
    """What pairs a buffer across versions: its path; a temporary's line (in the target's
    own file by its number alone: the two versions are often two files); else its
    instruction."""
    if buffer.path is not None:
        return buffer.kind, buffer.path
    if buffer.file is not None and buffer.line is not None:
        where = f"line {buffer.line}" if buffer.file == own_file else f"{buffer.file}:{buffer.line}"
        return "temporary", where
    return buffer.kind, buffer.instruction or buffer.type


def _by_key(
    peak: MemoryPeak, own_file: str | None
) -> dict[tuple[str, str], tuple[int, list[PeakBuffer]]]:
    grouped: dict[tuple[str, str], tuple[int, list[PeakBuffer]]] = {}
    for buffer in peak.buffers or ():
        key = _peak_key(buffer, own_file)
        total, members = grouped.get(key, (0, []))
        grouped[key] = (total + buffer.bytes, [*members, buffer])
    return grouped


def _described(members: list[PeakBuffer]) -> tuple[str, BufferKind, str]:
    """(what it holds, its kind, its type) as the side that has it says them."""
    first = members[0]
    if first.path is not None:
        holds = first.path
    elif first.file is not None:
        holds = f"{first.file}:{first.line}"
    else:
        holds = first.instruction or "?"
    kind = first.kind
    shown = first.type + (f" ×{len(members)}" if len(members) > 1 else "")
    return holds, kind, shown


def pair_peaks(
    before: MemoryPeak, after: MemoryPeak, own_files: tuple[str | None, str | None]
) -> tuple[PeakBufferChange, ...]:
    """What is live at each side's peak, paired by path or line (``own_files``: each
    side's target file, whose lines pair by number), the largest change first."""
    was, now = _by_key(before, own_files[0]), _by_key(after, own_files[1])
    changes: list[PeakBufferChange] = []
    for key in dict.fromkeys([*now, *was]):
        old, new = was.get(key, (0, [])), now.get(key, (0, []))
        if old[0] == new[0]:
            continue
        holds, kind, shown = _described(new[1] or old[1])
        change: PeakChangeKind = (
            "appeared" if not old[1] else "gone" if not new[1]
            else "grew" if new[0] > old[0] else "shrank"
        )  # fmt: skip
        changes.append(PeakBufferChange(holds, kind, change, old[0], new[0], shown))
    changes.sort(key=lambda c: -abs(c.after - c.before))
    return tuple(changes)
