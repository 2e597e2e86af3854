"""A target's cost over time (``lint --history FILE``, ``jxinspect trend FILE``): one
:class:`HistoryRow` per target per run, and the :class:`Trend` of rows where a measure
changed from the row before.

:func:`history_row` is the one reader of a :class:`~jxinspect.core.model.Report` into a
row; :func:`measures` the one list of what a row measures, which the trend compares and
the charts draw. :func:`trend` reads the rows one at a time, holding each target's row
before and what it keeps (the changes; the rows where asked), at most a given number.
Plain data: the store (SQLite) is ``jxinspect.lint.history``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from jxinspect.core.model import Collective, Report

TREND_SCHEMA: Literal["jxinspect.trend/1"] = "jxinspect.trend/1"

Value = int | float | None
"""A measure's value in one row; ``None`` where the run did not measure it (not
compiled, or a collective the program did not have)."""

BYTES_MEASURES = ("arguments", "outputs", "temporaries", "aliased", "peak")
"""XLA's memory per device, by kind, then the peak, in a row's order."""


@dataclass(frozen=True)
class CollectiveBytes:
    """The collectives of one kind over one set of mesh axes in a compiled program,
    summed per device."""

    kind: str
    """``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``, a permute…"""
    axes: str
    """The mesh axes, comma-separated (``data,model``); ``?`` where the groups match no
    set of axes."""
    bytes: int
    """Operand bytes per device, each collective counted once."""
    bytes_per_step: int
    """Operand bytes per device per step: a collective inside a loop counted once per
    trip (the plain bytes where the report does not count trips)."""


@dataclass(frozen=True)
class HistoryRow:
    """One target's cost in one run."""

    target: str
    """The lint target, ``models/mlp.py:loss``."""
    time: str
    """When the run wrote its rows, UTC, ISO 8601 (``2026-12-03T08:19:29Z``)."""
    commit: str | None
    """``git rev-parse HEAD`` in the lint root; ``None`` outside a git repository."""
    jax_version: str | None
    platform: str | None
    devices: int
    """Devices the program ran on (simulated CPU devices included)."""
    arguments: int | None
    """XLA's argument bytes per device; ``None`` when not compiled."""
    outputs: int | None
    """XLA's output bytes per device; ``None`` when not compiled."""
    temporaries: int | None
    """XLA's temporary bytes per device; ``None`` when not compiled."""
    aliased: int | None
    """XLA's aliased (donated and reused) bytes per device; ``None`` when not compiled."""
    flops: float | None
    """XLA's floating-point operations per device; ``None`` when not counted."""
    bytes_accessed: float | None
    """XLA's bytes accessed per device; ``None`` when not counted."""
    peak: int | None = None
    """The bytes live per device at the compiled program's peak (``lower --memory``);
    ``None`` when not read (a history written before it was kept, or not compiled)."""
    collectives: tuple[CollectiveBytes, ...] = ()
    """Collective bytes by kind and mesh axes, in that order; none when not compiled."""


def collective_bytes(collectives: Iterable[Collective]) -> tuple[CollectiveBytes, ...]:
    """The collectives summed by kind and mesh axes, in that order."""
    totals: dict[tuple[str, str], tuple[int, int]] = {}
    for found in collectives:
        key = (found.kind, found.axes_key)
        plain, per_step = totals.get(key, (0, 0))
        totals[key] = (plain + found.bytes, per_step + found.bytes_per_step)
    return tuple(CollectiveBytes(k, a, b, s) for (k, a), (b, s) in sorted(totals.items()))


def history_row(report: Report, *, target: str, time: str, commit: str | None) -> HistoryRow:
    """What a report says of its target's cost: the one reader of a report into a row."""
    compiled = report.compiled
    memory = compiled.memory if compiled is not None else None
    return HistoryRow(
        target=target,
        time=time,
        commit=commit,
        jax_version=report.jax_version,
        platform=report.platform,
        devices=report.num_devices,
        arguments=memory.arguments if memory is not None else None,
        outputs=memory.outputs if memory is not None else None,
        temporaries=memory.temporaries if memory is not None else None,
        aliased=memory.aliased if memory is not None else None,
        flops=compiled.flops if compiled is not None else None,
        bytes_accessed=compiled.bytes_accessed if compiled is not None else None,
        peak=compiled.peak.bytes if compiled is not None and compiled.peak is not None else None,
        collectives=collective_bytes((compiled.collectives or ()) if compiled is not None else ()),
    )


def collective_measure(kind: str, axes: str) -> str:
    """A collective's measure: its bytes per step, ``all-reduce over data``."""
    return f"{kind} over {axes}"


def measures(row: HistoryRow) -> dict[str, Value]:
    """What a row measures, by name: memory per kind, FLOPs, bytes accessed, then each
    collective's bytes per step."""
    found: dict[str, Value] = {name: getattr(row, name) for name in BYTES_MEASURES}
    found["flops"] = row.flops
    found["bytes_accessed"] = row.bytes_accessed
    for c in row.collectives:
        found[collective_measure(c.kind, c.axes)] = c.bytes_per_step
    return found


def is_bytes(measure: str) -> bool:
    """Whether a measure counts bytes (every one but ``flops``)."""
    return measure != "flops"


@dataclass(frozen=True)
class TrendChange:
    """A measure that changed from a target's row before."""

    time: str
    """When the row that changed it was written."""
    commit: str | None
    jax_version: str | None
    measure: str
    """``temporaries``, ``flops``, ``all-reduce over data`` (bytes per step)…"""
    before: Value
    """In the row before; ``None`` where it was not measured."""
    after: Value
    """In this row; ``None`` where it was not measured."""
    percent: float | None
    """The change in percent of ``before``; ``None`` where ``before`` is 0 or missing."""


@dataclass(frozen=True)
class TargetTrend:
    """One target's rows, oldest first, and what changed between them."""

    target: str
    rows: tuple[HistoryRow, ...]
    """Every row, where the trend keeps them (JSON and HTML; text shows the changes only)."""
    changes: tuple[TrendChange, ...]
    count: int | None = field(default=None, compare=False, metadata={"written": False})
    """The rows the target has, where ``rows`` does not hold them (``None``: it does)."""

    @property
    def size(self) -> int:
        """The rows the target has in the history."""
        return len(self.rows) if self.count is None else self.count


@dataclass(frozen=True)
class Trend:
    """The rows of a history database, per target, and where a measure changed."""

    schema: Literal["jxinspect.trend/1"] = field(init=False, default_factory=lambda: TREND_SCHEMA)
    """The format's name and version."""
    file: str
    """The history database, as given."""
    targets: tuple[TargetTrend, ...]
    """In target order."""


def percent(before: Value, after: Value) -> float | None:
    """``after`` against ``before`` in percent, to two places; ``None`` where there is
    no ``before`` to compare with."""
    if before is None or after is None or before == 0:
        return None
    return round((after - before) / before * 100, 2)


def changed(before: HistoryRow, after: HistoryRow) -> list[TrendChange]:
    """Each measure of ``after`` that differs from ``before``."""
    return _changed(measures(before), after, measures(after))


def _changed(old: dict[str, Value], after: HistoryRow, new: dict[str, Value]) -> list[TrendChange]:
    return [
        TrendChange(after.time, after.commit, after.jax_version, name,
               old.get(name), new.get(name), percent(old.get(name), new.get(name)))
        for name in {**old, **new}
        if old.get(name) != new.get(name)
    ]  # fmt: skip


def changes(rows: Iterable[HistoryRow]) -> tuple[TrendChange, ...]:
    """Each measure that differs from the row before, row by row."""
    found: list[TrendChange] = []
    before: tuple[HistoryRow, dict[str, Value]] | None = None
    for row in rows:
        now = measures(row)
        if before is not None:
            found += _changed(before[1], row, now)
        before = (row, now)
    return tuple(found)


class TooLong(Exception):
    """A trend that would hold more than its limit of targets, rows and changes."""


@dataclass
class _Held:
    """What a trend holds of one target while it reads the rows."""

    last: dict[str, Value]
    """The measures of its row before."""
    rows: list[HistoryRow] = field(default_factory=list)
    changes: list[TrendChange] = field(default_factory=list)
    count: int = 0


def trend(
    file: str, rows: Iterable[HistoryRow], *, keep_rows: bool = True, limit: int | None = None
) -> Trend:
    """The rows (oldest first, read one at a time) grouped by target, in target order,
    with their changes, and the rows themselves where ``keep_rows``. What it holds besides
    is each target's row before; :class:`TooLong` once it would hold more than ``limit``
    targets, kept rows and changes."""
    held: dict[str, _Held] = {}
    kept = 0
    for row in rows:
        now = measures(row)
        target = held.get(row.target)
        if target is None:
            target = held[row.target] = _Held(now)
            kept += 1
        else:
            found = _changed(target.last, row, now)
            target.changes += found
            target.last = now
            kept += len(found)
        target.count += 1
        if keep_rows:
            target.rows.append(row)
            kept += 1
        if limit is not None and kept > limit:
            raise TooLong(f"more than {limit:,} targets, rows and changes")
    return Trend(
        file=file,
        targets=tuple(
            TargetTrend(name, tuple(t.rows), tuple(t.changes), None if keep_rows else t.count)
            for name, t in sorted(held.items())
        ),
    )
