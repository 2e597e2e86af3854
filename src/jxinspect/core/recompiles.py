"""Why a function compiled again: each compile a recorded run made of a function of the
user's, its cost, and its reasons against the nearest earlier compile of the same code
(schema ``jxinspect.compiles/1``, ``compiles.json`` of a record folder), and the compiles of
each code with their reasons grouped (``show``'s recompiles). Written and read by
:mod:`jxinspect.core.codec` from these types alone; a field made with ``init=False`` is
derived and written for readers of the JSON.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from jxinspect.core.vocabulary import ReasonKind

SCHEMA: Literal["jxinspect.compiles/1"] = "jxinspect.compiles/1"

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


CacheOutcome = Literal["hit", "miss", "not_written", "off"]
"""What JAX's persistent compilation cache did for one compile: gave the executable
(``hit``), had none and wrote what was compiled (``miss``), had none and wrote nothing
(``not_written``: the compile took less than ``jax_persistent_cache_min_compile_time_secs``),
or was not used (``off``)."""


@dataclass(frozen=True)
class CacheUse:
    """The persistent compilation cache's part in one compile, as JAX's own events
    (``jax.monitoring``) and configuration say."""

    outcome: CacheOutcome
    reason: str | None = None
    """Why it was ``off`` or ``not_written``, naming the setting."""
    saved_s: float | None = None
    """For a ``hit``: the compile seconds it saved, less the reading (JAX's
    ``compile_time_saved_sec``)."""
    min_compile_time_s: float | None = None
    """For ``not_written``: ``jax_persistent_cache_min_compile_time_secs`` then."""


@dataclass(frozen=True)
class CompileOptionsSeen:
    """The compile options JAX handed XLA for one compile: the part of its persistent-cache
    key they make, and what they hold that a reader can name."""

    digest: str | None
    """JAX's own digest of them as its cache key hashes them (its DEBUG log's ``hash of
    serialized compile_options``); ``None`` where this JAX could not say."""
    fields: tuple[tuple[str, str], ...] = ()
    """``("compiler options", "xla_backend_optimization_level=2")``, ``("devices", "0,1")``,
    ``("build options", ...)``: what differs is named by these."""


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
    cache: CacheUse | None = None
    """What the persistent compilation cache did for it; ``None``: not known (a record
    made before the cache was read, or a compile whose end JAX did not report)."""
    cache_held: str | None = None
    """For a persistent-cache miss: the earlier compile of the run (``step #1``) that read
    the same program (its identity) from the cache, which therefore held it: this one's
    key differed by more than the program. ``None``: none did."""
    options: CompileOptionsSeen | None = None
    """The compile options JAX compiled it with; ``None``: not seen (a recording made
    before they were, or a persistent-cache reader that never compiled)."""

    @property
    def seconds(self) -> float:
        return sum(s or 0.0 for s in (self.trace_s, self.lower_s, self.compile_s))


def with_cache_held(compiles: Sequence[Compile], identities: Mapping[str, str]) -> list[Compile]:
    """``compiles`` with :attr:`Compile.cache_held` said of each persistent-cache miss
    of a program an earlier compile of the run read from the cache (a hit: proof the
    cache held it; an earlier miss is none, JAX may have declined to write it).
    ``identities``: each record folder's program identity."""
    read: dict[str, Compile] = {}
    found = []
    for compile in compiles:
        program = identities.get(compile.folder, "")
        outcome = compile.cache.outcome if compile.cache is not None else None
        if program and outcome == "miss" and program in read:
            earlier = read[program]
            compile = replace(compile, cache_held=f"{earlier.function} #{earlier.number}")
        elif program and outcome == "hit":
            read.setdefault(program, compile)
        found.append(compile)
    return found


@dataclass(frozen=True)
class Compiles:
    """A record folder's ``compiles.json``."""

    schema: Literal["jxinspect.compiles/1"] = field(init=False, default_factory=lambda: SCHEMA)
    dropped: int = 0
    """Compiles counted and not listed (a run that compiled without end)."""
    compiles: tuple[Compile, ...] = ()
    """Every compile of the user's functions, in the run's order."""


@dataclass(frozen=True)
class Group:
    """Reasons of one kind about one path, across a function's compiles."""

    kind: ReasonKind
    path: str | None
    count: int
    before: str | None
    after: str
    """The value after, or a pattern of them (``f32[N,128], N in 1..31``)."""
    advice: str = field(init=False, default="")
    """What to do about it, one line per kind (derived)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "advice", ADVICE[self.kind])


@dataclass(frozen=True)
class FunctionCompiles:
    """One code's compiles, and their reasons grouped by kind and path."""

    function: str
    source: str | None
    count: int = field(init=False, default=0)
    """How many compiles (derived)."""
    seconds: float = field(init=False, default=0.0)
    """Their seconds, all phases (derived)."""
    groups: tuple[Group, ...] = field(init=False, default=())
    """Their reasons grouped, the most frequent first (derived)."""
    cache: dict[str, int] = field(init=False, default_factory=dict)
    """How many compiles had each persistent-cache outcome (derived; ``unknown``: not
    recorded)."""
    saved_s: float = field(init=False, default=0.0)
    """The seconds persistent-cache hits saved, summed (derived)."""
    compiles: tuple[Compile, ...] = ()

    def __post_init__(self) -> None:
        outcomes = Counter(c.cache.outcome if c.cache else "unknown" for c in self.compiles)
        object.__setattr__(self, "cache", dict(outcomes))
        saved = sum(c.cache.saved_s or 0.0 for c in self.compiles if c.cache)
        object.__setattr__(self, "saved_s", round(saved, 6))
        object.__setattr__(self, "count", len(self.compiles))
        object.__setattr__(self, "seconds", round(sum(c.seconds for c in self.compiles), 6))
        object.__setattr__(self, "groups", _groups(self.compiles))

    def call_sites(self) -> Counter[str]:
        return Counter(c.call_site for c in self.compiles if c.call_site)


@dataclass(frozen=True)
class CallSiteCompiles:
    """The compiles one line of the user's code set off (``train.py:40``), whichever
    functions it called: where the compile time of a run goes, line by line."""

    site: str
    functions: tuple[str, ...]
    """The functions compiled there, in the order each first was."""
    compiles: FunctionCompiles
    """Their count, seconds and persistent-cache outcomes."""


def by_call_site(compiles: Iterable[Compile]) -> list[CallSiteCompiles]:
    """Each call site's compiles, the most seconds first (compiles no call set off, such
    as an ahead-of-time ``.lower().compile()``, are in none)."""
    grouped: dict[str, list[Compile]] = {}
    for compile in compiles:
        if compile.call_site:
            grouped.setdefault(compile.call_site, []).append(compile)
    found = [
        CallSiteCompiles(site, tuple(dict.fromkeys(c.function for c in items)),
                         FunctionCompiles(items[0].function, site, compiles=tuple(items)))
        for site, items in grouped.items()
    ]  # fmt: skip
    return sorted(found, key=lambda s: -s.compiles.seconds)


def _groups(compiles: Iterable[Compile]) -> tuple[Group, ...]:
    by: dict[tuple[ReasonKind, str | None], list[Reason]] = {}
    for compile in compiles:
        for reason in compile.reasons:
            by.setdefault((reason.kind, reason.path), []).append(reason)
    found = []
    for (kind, path), reasons in by.items():
        befores = Counter(r.before for r in reasons)
        before = befores.most_common(1)[0][0] if len(befores) == 1 else _pattern(
            [r.before or "(none)" for r in reasons])  # fmt: skip
        after = _pattern([r.after or "(none)" for r in reasons])
        found.append(Group(kind, path, len(reasons), before, after))
    return tuple(sorted(found, key=lambda g: -g.count))


def by_code(compiles: Iterable[Compile]) -> list[tuple[Compile, ...]]:
    """The compiles of each code (its ``source``, else its name), in the order each code
    first compiled."""
    grouped: dict[str, list[Compile]] = {}
    for compile in compiles:
        grouped.setdefault(compile.source or compile.function, []).append(compile)
    return [tuple(items) for items in grouped.values()]


def by_function(compiles: Iterable[Compile]) -> list[FunctionCompiles]:
    """The compiles of each code with their reasons grouped, in the order each code
    first compiled."""
    return [FunctionCompiles(items[0].function, items[0].source, compiles=items)
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
