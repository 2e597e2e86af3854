"""Thresholds for the rules that take them: ``budgets:`` in ``jxinspect.yaml``.

Every budget is declared once, as a field of :class:`Settings`: its type and default,
how it is written (its :data:`BudgetKind`) and what judges by it (the rules, the command),
both in the field's metadata, whether ``null`` turns it off (a default of ``None``) and
its docs line (the field's docstring). The configuration reader's keys and parsing
(:data:`BUDGET_KEYS`, :func:`parse_budget`), the ``budgets`` key's help and the
configuration reference derive from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from jxinspect.core.cost_diff import DEFAULT_MEMORY_GROWTH
from jxinspect.core.vocabulary import COLLECTIVE_KINDS, CollectiveKind

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")

BudgetKind = Literal["bytes", "count", "fraction", "collectives"]
"""How a budget is written: a size in bytes (``4096``, ``"64 MiB"``), a count (a whole
number of at least 1), a fraction (``"10%"``, ``0.1``) or a list of collective kinds,
each with a size it may move (``[all-to-all, "all-gather > 1 GiB"]``)."""


_LIMIT = re.compile(r"^\s*([A-Za-z-]+)\s*(?:>\s*(.+?))?\s*$")


@dataclass(frozen=True)
class ForbiddenCollective:
    """An entry of ``budgets.forbid_collectives``: every collective of ``kind``
    (``all-to-all``), or those of ``kind`` moving more than ``over`` bytes per device
    (``all-gather > 1 GiB``)."""

    kind: CollectiveKind
    over: int | None = None
    """Bytes per device (the collective's operands) a collective of ``kind`` may move;
    ``None``: none may be there at all."""

    def forbids(self, kind: str, moved: int) -> bool:
        """Whether a collective of ``kind`` moving ``moved`` bytes per device breaks it."""
        return kind == self.kind and (self.over is None or moved > self.over)

    def __str__(self) -> str:
        from jxinspect.core.units import human_bytes

        return self.kind if self.over is None else f"{self.kind} > {human_bytes(self.over)}"


def _budget(kind: BudgetKind, default: Any, judged_by: str) -> Any:
    """A :class:`Settings` field: a budget of ``kind`` that ``judged_by`` (a rule's code,
    a command) judges by; a default of ``None`` makes it optional (off by default, and
    ``null`` turns it off again)."""
    return field(default=default, metadata={"budget": kind, "judged_by": judged_by})


@dataclass(frozen=True)
class Settings:
    """Rule thresholds; the defaults apply wherever a configuration gives none. Each
    field's docstring goes on from what judges by it (its ``judged_by``: ``JX201: a fully
    replicated argument ...``)."""

    replicated_bytes: int = _budget("bytes", 2**20, "JX201")
    """a fully replicated argument this large (bytes per device) is reported."""
    bytes_per_device: int | None = _budget("bytes", None, "JX302")
    """arguments plus results per device above this are reported (``None``: off)."""
    max_compiles: int | None = _budget("count", None, "JX402")
    """a function of the user's that a recorded run compiled more times than this
    is reported (``None``: off)."""
    temporaries_per_device: int | None = _budget("bytes", None, "JX303")
    """XLA's temporaries per device (compiled) above this are reported (``None``:
    off)."""
    collective_bytes_per_step: int | None = _budget("bytes", None, "JX303")
    """the collectives' bytes per step (per device, summed) above this are reported
    (``None``: off)."""
    peak_per_device: int | None = _budget("bytes", None, "JX303")
    """the bytes live per device at the compiled program's peak above this are
    reported, with the largest buffers there (``None``: off; set, lint reads the peak)."""
    flops_per_device: int | None = _budget("count", None, "JX303")
    """the compiled program's FLOPs per device (XLA's ``cost_analysis``) above this
    are reported; FLOPs unknown (a kernel without a cost estimate) cannot pass it
    (``None``: off)."""
    forbid_collectives: tuple[ForbiddenCollective, ...] = _budget("collectives", (), "JX303")
    """each collective of these kinds in the compiled program is reported; a kind
    with a size (``"all-gather > 1 GiB"``) only where one moves more per device."""
    hbm_fraction: float = _budget("fraction", 1.0, "JX307")
    """a program compiled for a TPU topology (``--topology``) that needs more than
    this fraction of a device's HBM (its peak, else XLA's memory analysis) is reported;
    one the compiler refused for want of memory always is."""
    memory_growth: float = _budget(
        "fraction", DEFAULT_MEMORY_GROWTH, "``diff-debug --compile`` and JX305"
    )
    """temporaries growing by more than this fraction of the before side's, or the
    baseline's (0.10: 10%), fail; in ``diff-debug`` a cost measure that falls by more than
    it is an improvement."""


DEFAULT_SETTINGS = Settings()
BudgetValue = int | float | tuple[ForbiddenCollective, ...] | None
"""A budget as read: bytes or a count, a fraction, the forbidden collectives, or ``None``."""
BUDGET_KINDS: dict[str, BudgetKind] = {f.name: f.metadata["budget"] for f in fields(Settings)}
"""Each budget's kind, by name, in the fields' order."""
BUDGET_KEYS: tuple[str, ...] = tuple(BUDGET_KINDS)
"""The keys ``budgets:`` takes."""
JUDGED_BY: dict[str, str] = {f.name: f.metadata["judged_by"] for f in fields(Settings)}
"""What judges by each budget (a rule's code, a command), by name, in the fields' order."""
OPTIONAL_BUDGETS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.default is None)
"""The budgets that are off by default, which ``null`` turns off again."""


def parse_budget(name: str, value: object) -> BudgetValue:
    """The budget ``name`` (one of :data:`BUDGET_KEYS`) read from ``value`` by its kind;
    ``None`` for an optional one given ``null``; raises ``ValueError`` saying what is wrong."""
    if value is None and name in OPTIONAL_BUDGETS:
        return None
    return _PARSERS[BUDGET_KINDS[name]](value)


def parse_kinds(value: object) -> tuple[ForbiddenCollective, ...]:
    """``[all-to-all, "all-gather > 1 GiB"]`` → the forbidden collectives, each kind and
    size checked; raises ``ValueError``."""
    kinds = ", ".join(COLLECTIVE_KINDS)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(
            f"expected a list of collective kinds ({kinds}), each with a size it may move "
            "if you like ('all-gather > 1 GiB')"
        )
    found: list[ForbiddenCollective] = []
    for item in value:
        match = _LIMIT.match(item)
        kind = match.group(1).lower() if match else None
        if match is None or kind not in COLLECTIVE_KINDS:
            raise ValueError(f"{item!r} is no collective kind ({kinds})")
        try:
            over = parse_bytes(match.group(2)) if match.group(2) is not None else None
        except ValueError as error:
            raise ValueError(f"{item!r}: {error}") from None
        found.append(ForbiddenCollective(kind, over))
    return tuple(dict.fromkeys(found))


def parse_fraction(value: object) -> float:
    """``"10%"``, ``0.1`` → 0.1; raises ``ValueError`` (a fraction is at least 0)."""
    text = value.strip() if isinstance(value, str) else None
    if text is not None and text.endswith("%"):
        try:
            value = float(text[:-1]) / 100
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("expected a fraction such as '10%' or 0.1 (at least 0)")
    return float(value)


def parse_count(value: object) -> int:
    """``3`` → 3; raises ``ValueError`` saying what is wrong (a count is a whole number
    of at least 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("expected a whole number of at least 1")
    return value


def parse_bytes(value: object) -> int:
    """``4096``, ``"64 MiB"``, ``"1.5GB"`` → bytes; raises ``ValueError`` saying what is wrong."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as 4096, '64 MiB' or '16GiB'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    match = _SIZE.match(value) if isinstance(value, str) else None
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(
            "expected a size such as 4096, '64 MiB' or '16GiB' (units B, kB, MB, "
            "GB, TB, KiB, MiB, GiB, TiB)"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


_PARSERS: dict[BudgetKind, Callable[[object], BudgetValue]] = {
    "bytes": parse_bytes, "count": parse_count, "fraction": parse_fraction,
    "collectives": parse_kinds,
}  # fmt: skip
"""How each kind of budget is read (a test checks every kind has one)."""
