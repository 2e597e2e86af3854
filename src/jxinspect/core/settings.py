"""Thresholds for the rules that take them: ``budgets:`` in ``jxinspect.yaml``."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Settings:
    """Rule thresholds; the defaults apply wherever a configuration gives none."""

    replicated_bytes: int = 2**20
    """JX201: a fully replicated argument this large (bytes per device) is reported."""
    bytes_per_device: int | None = None
    """JX302: arguments plus results per device above this are reported (``None``: off)."""
    max_compiles: int | None = None
    """JX402: a function of the user's that a recorded run compiled more times than this
    is reported (``None``: off)."""


DEFAULT_SETTINGS = Settings()
BUDGET_KEYS: tuple[str, ...] = ("replicated_bytes", "bytes_per_device", "max_compiles")
COUNT_BUDGETS: tuple[str, ...] = ("max_compiles",)
"""The budgets that count (a whole number, at least 1) rather than size in bytes."""
OPTIONAL_BUDGETS: tuple[str, ...] = ("bytes_per_device", "max_compiles")
"""The budgets that are off by default, which ``null`` turns off again."""


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
