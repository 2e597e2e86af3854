"""The ``recompiles`` section of ``jxinspect show FOLDER``: per function that compiled
more than once, how many compiles and their seconds, the reasons grouped by kind and
path (``31× batch['x'] shape f32[32,128] → f32[N,128], N in 1..31``), one line of
advice per kind, and the call sites."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jxinspect.core.recompiles import Compile, Reason, by_code
from jxinspect.core.vocabulary import ReasonKind
from jxinspect.render.common.escape import text as esc

ADVICE: dict[ReasonKind, str] = {
    "shape": "pad or bucket the dimension that varies (the last batch: pad it, or drop it)",
    "dtype": "cast the input to one dtype before the call",
    "weak_type": "pass an array (jnp.asarray(x, dtype)), not a Python scalar, or mark it static",
    "sharding": "give the input one sharding every call (device_put it, or set in_shardings)",
    "static": "mark it static only where it takes a few values; otherwise pass an array",
    "structure": "keep the pytree's keys, lengths and None leaves the same every call",
    "function": "hoist the jit out of the loop: make the jitted function (or lambda) once",
    "constants": "pass the closed-over values that change as arguments",
    "context": "set the configuration (or the mesh) once, before the first call",
}
"""One line of advice per reason kind."""


@dataclass(frozen=True)
class Group:
    """Reasons of one kind about one path, across a function's compiles."""

    kind: ReasonKind
    path: str | None
    count: int
    before: str | None
    after: str
    """The value after, or a pattern of them (``f32[N,128], N in 1..31``)."""

    def __str__(self) -> str:
        where = f"{esc(self.path)} " if self.path else ""
        return (
            f"{self.count}× {where}{self.kind} {esc(self.before or '(none)')} → {esc(self.after)}"
        )


@dataclass(frozen=True)
class FunctionCompiles:
    """One code's compiles."""

    function: str
    source: str | None
    compiles: tuple[Compile, ...]

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.compiles)

    def groups(self) -> list[Group]:
        by: dict[tuple[ReasonKind, str | None], list[Reason]] = {}
        for compile in self.compiles:
            for reason in compile.reasons:
                by.setdefault((reason.kind, reason.path), []).append(reason)
        found = []
        for (kind, path), reasons in by.items():
            befores = Counter(r.before for r in reasons)
            before = befores.most_common(1)[0][0] if len(befores) == 1 else _pattern(
                [r.before or "(none)" for r in reasons])  # fmt: skip
            after = _pattern([r.after or "(none)" for r in reasons])
            found.append(Group(kind, path, len(reasons), before, after))
        return sorted(found, key=lambda g: -g.count)

    def call_sites(self) -> Counter[str]:
        return Counter(c.call_site for c in self.compiles if c.call_site)


def by_function(compiles: Iterable[Compile]) -> list[FunctionCompiles]:
    """The compiles of each code, in the order each first compiled."""
    return [FunctionCompiles(items[0].function, items[0].source, items)
            for items in by_code(compiles)]  # fmt: skip


_NUMBER = re.compile(r"\d+")


def _pattern(values: list[str]) -> str:
    """One value, the few distinct ones, or where they differ only in one number, that
    number as ``N`` and its range: ``f32[N,128], N in 1..31``."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return distinct[0]
    parts = [_NUMBER.split(v) for v in distinct]
    numbers = [_NUMBER.findall(v) for v in distinct]
    if all(p == parts[0] for p in parts) and all(len(n) == len(numbers[0]) for n in numbers):
        varying = [i for i in range(len(numbers[0])) if len({n[i] for n in numbers}) > 1]
        if len(varying) == 1:
            i = varying[0]
            sizes = sorted(int(n[i]) for n in numbers)
            template = "".join(
                part + ("N" if k == i else numbers[0][k]) if k < len(numbers[0]) else part
                for k, part in enumerate(parts[0])
            )
            return f"{template}, N in {sizes[0]}..{sizes[-1]}"
    if len(distinct) <= 3:
        return " | ".join(distinct)
    return f"{' | '.join(distinct[:2])} | … ({len(distinct)} values)"


def render_text(compiles: list[Compile], dropped: int) -> list[str]:
    """The section's lines (none where no function compiled twice)."""
    again = [f for f in by_function(compiles) if len(f.compiles) > 1]
    if not again:
        return []
    lines = ["", "recompiles"]
    for found in again:
        phases = _phases(found.compiles)
        lines.append(f"  {esc(found.function)} ({esc(found.source or 'no source')}): "
                     f"{len(found.compiles)} compiles, {found.seconds:.2f} s{phases}")  # fmt: skip
        groups = found.groups()
        lines.extend(f"    {group}" for group in groups)
        if not groups:
            lines.append("    the same program each time: JAX's caches let it go")
        for kind in dict.fromkeys(g.kind for g in groups):
            lines.append(f"    advice ({kind}): {ADVICE[kind]}")
        sites = found.call_sites()
        if len(sites) > 1:
            said = ", ".join(f"{esc(site)} {n}×" for site, n in sites.most_common())
            lines.append(f"    called from {said}")
    if dropped:
        lines.append(f"  {dropped} more compiles were counted, not listed")
    return lines


def _phases(compiles: Iterable[Compile]) -> str:
    totals = {"trace": 0.0, "lower": 0.0, "compile": 0.0}
    for c in compiles:
        totals["trace"] += c.trace_s or 0.0
        totals["lower"] += c.lower_s or 0.0
        totals["compile"] += c.compile_s or 0.0
    return " (" + ", ".join(f"{k} {v:.2f}" for k, v in totals.items()) + ")"


def to_json(compiles: list[Compile]) -> list[dict[str, Any]]:
    """Each function that compiled: its compiles (each with its reasons and seconds)
    and its grouped reasons."""
    return [
        {
            "function": found.function,
            "source": found.source,
            "count": len(found.compiles),
            "seconds": round(found.seconds, 6),
            "groups": [
                {
                    "kind": g.kind,
                    "path": g.path,
                    "count": g.count,
                    "before": g.before,
                    "after": g.after,
                    "advice": ADVICE[g.kind],
                }
                for g in found.groups()
            ],  # fmt: skip
            "compiles": [c.to_dict() for c in found.compiles],
        }
        for found in by_function(compiles)
    ]
