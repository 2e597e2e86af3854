"""Why a function compiled again: each compile a recorded run made of a function of the
user's, its cost, and its reasons against the nearest earlier compile of the same code
(schema ``jxinspect.compiles/1``, ``compiles.json`` of a record folder)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from jxinspect.core.vocabulary import ReasonKind

SCHEMA = "jxinspect.compiles/1"


@dataclass(frozen=True)
class Reason:
    """One difference from the nearest earlier compile of the same function."""

    kind: ReasonKind
    path: str | None
    """The pytree path it is about (``batch['x']``), the static argument's name, the
    configuration option; ``None`` for the function itself."""
    before: str | None
    after: str | None
    """What it was and is (``f32[32,128]`` → ``f32[31,128]``); ``None``: absent."""

    def __str__(self) -> str:
        where = f"{self.path} " if self.path else ""
        return f"{where}{self.kind} {self.before or '(none)'} → {self.after or '(none)'}"


@dataclass(frozen=True)
class Compile:
    """One compile of a function of the user's in a recorded run (a miss of JAX's
    tracing cache: JAX traced, lowered and compiled it)."""

    function: str
    """The function's name, as the run's records name it."""
    source: str | None
    """``step at train.py:12``: which code (compiles of one code are compared)."""
    folder: str
    """The record of the program it made (one of the index's functions)."""
    number: int
    """This code's 1st, 2nd, ... compile in the run."""
    call_site: str | None = None
    """``train.py:40``: the line that called the jitted function, where a call did."""
    trace_s: float | None = None
    lower_s: float | None = None
    compile_s: float | None = None
    """Seconds of each phase, as JAX's own duration events (``jax.monitoring``) say."""
    reasons: tuple[Reason, ...] = field(default=())
    """Empty for the first compile; for a later one, every difference found (none: the
    same program compiled again, JAX's cache having let it go)."""

    @property
    def seconds(self) -> float:
        return sum(s or 0.0 for s in (self.trace_s, self.lower_s, self.compile_s))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Compile:
        reasons = tuple(Reason(**r) for r in data.get("reasons", ()))
        return cls(**{**data, "reasons": reasons})


def by_code(compiles: Iterable[Compile]) -> list[tuple[Compile, ...]]:
    """The compiles of each code (its ``source``, else its name), in the order each code
    first compiled."""
    grouped: dict[str, list[Compile]] = {}
    for compile in compiles:
        grouped.setdefault(compile.source or compile.function, []).append(compile)
    return [tuple(items) for items in grouped.values()]
