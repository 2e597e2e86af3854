"""Why it compiled again, inside the recorded run: each lowering of a function of the
user's is remembered by what JAX's tracing cache tells calls apart (the function object,
each leaf's type and sharding by its path, the static values, the tracing context, the
program made), and a later lowering of the same code gets every difference from the
nearest earlier one (the one it differs from least, the earliest of those, as JAX's own
explanation picks its closest key).

Nothing here traces, lowers or compiles: it reads the lowering JAX just made, and the
durations JAX itself reports (``jax.monitoring``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from jxinspect.core.recompiles import CacheUse, Compile, CompileOptionsSeen, Reason
from jxinspect.record.fingerprint import Fingerprint
from jxinspect.tracer import seam

MAX_REMEMBERED = 32
"""Earlier lowerings of one code a new one is compared with (the latest ones)."""

MAX_COMPILES = 20_000
"""Compiles a recording lists (it counts the rest)."""


NOT_PASSED = "not passed (its default)"
"""A static argument's value in a call that left it to its default."""


def reasons(before: Fingerprint, now: Fingerprint) -> list[Reason]:
    """Every difference between two lowerings of one code, in the order JAX checks them:
    the function, the tracing context, the pytree and static values, the leaves' types,
    and the program itself."""
    found: list[Reason] = []
    if not now.same_function(before):
        found.append(Reason("function", None, "an earlier function object",
                            "a new function object of the same code"))  # fmt: skip
    for name in sorted(before.context.keys() | now.context.keys()):
        if before.context.get(name) != now.context.get(name):
            found.append(Reason("context", name, before.context.get(name), now.context.get(name)))
    for name in sorted(before.statics.keys() | now.statics.keys()):
        was, is_ = before.statics.get(name), now.statics.get(name)
        if was != is_:
            if was is not None and is_ is not None:
                found.append(Reason("static", name, *_where_they_differ(was, is_)))
            elif now.static_arguments and before.static_arguments:
                # a static argument passed in one call and left to its default in the
                # other: JAX keys them apart even where the value is the default's
                found.append(Reason("static", name, was or NOT_PASSED, is_ or NOT_PASSED))
            else:  # a wrapper's static leaf that one call's pytree has and the other not
                found.append(Reason("structure", name, was, is_))
    for path in [*before.leaves, *(p for p in now.leaves if p not in before.leaves)]:
        was_leaf, is_leaf = before.leaves.get(path), now.leaves.get(path)
        if was_leaf is None or is_leaf is None:
            found.append(Reason("structure", path, was_leaf.text if was_leaf else None,
                                is_leaf.text if is_leaf else None))  # fmt: skip
            continue
        if was_leaf.shape != is_leaf.shape:
            found.append(Reason("shape", path, was_leaf.text, is_leaf.text))
        if was_leaf.dtype != is_leaf.dtype:
            found.append(Reason("dtype", path, was_leaf.text, is_leaf.text))
        if was_leaf.weak_type != is_leaf.weak_type:
            found.append(Reason("weak_type", path, _weak(was_leaf), _weak(is_leaf)))
        if before.layouts.get(path) != now.layouts.get(path):  # not a respelling
            found.append(Reason("sharding", path, before.shardings.get(path),
                                now.shardings.get(path)))  # fmt: skip
    if not found and before.program != now.program:
        found.append(Reason("constants", None, f"program {before.program[:12]}",
                            f"program {now.program[:12]}"))  # fmt: skip
    return found


_CONTEXT = 16
"""Characters kept on each side of where two long values differ."""


def _where_they_differ(before: str, after: str) -> tuple[str, str]:
    """Two long ``repr`` texts cut to where they differ (``…((True,), …`` → ``…((False,), …``):
    a library's static tree (Equinox's) is one value holding every static leaf."""
    if len(before) <= 60 and len(after) <= 60:
        return before, after
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    begin = max(0, start - _CONTEXT)

    def cut(text: str) -> str:
        stop = len(text) - max(0, end - _CONTEXT)
        return ("…" if begin else "") + text[begin:stop] + ("…" if stop < len(text) else "")

    return cut(before), cut(after)


def _weak(leaf: seam.LeafType) -> str:
    return f"{leaf.text} (weak: a Python scalar)" if leaf.weak_type else f"{leaf.text} (an array)"


_INTERNAL = -1
"""``CompileLog.pending.last`` of a lowering of JAX's own."""


@dataclass
class CompileLog:
    """The compiles of the run so far, their reasons and their seconds."""

    compiles: list[Compile] = field(default_factory=list)
    dropped: int = 0
    """Compiles past :data:`MAX_COMPILES`, counted only."""
    remembered: dict[str, list[Fingerprint]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    pending: threading.local = field(default_factory=threading.local)
    """This thread's trace and lowering seconds not yet given to a compile, and its
    last compile (whose backend compile JAX reports after the lowering)."""
    internal_s: float = 0.0
    """Seconds of the compiles of JAX's own computations (never given to the user's)."""
    cache_settings: Callable[[], dict[str, object]] | None = None
    """Reads JAX's persistent-cache configuration when a compile ends; ``None``: the
    cache's part is not recorded (no cache listener)."""

    def _last(self) -> int | None:
        index = getattr(self.pending, "last", None)
        return index if index is not None and 0 <= index < len(self.compiles) else None

    def on_cache_event(self, kind: str) -> None:
        """A persistent-cache event JAX recorded for the compile under way: it asked the
        cache (``used``), or the cache had it (``hit``: no backend compile follows)."""
        if kind == "used":
            self.pending.asked = True
        elif kind == "hit" and (index := self._last()) is not None:
            self.compiles[index] = replace(self.compiles[index], cache=CacheUse("hit"))

    def compile_starts(self) -> int | None:
        """A backend compile starts: the compile it is for (this thread's last)."""
        return self._last()

    def compile_ended(self, index: object, options: CompileOptionsSeen) -> None:
        """The compile that started for ``index`` ended: the options it was made with."""
        if isinstance(index, int) and 0 <= index < len(self.compiles):
            self.compiles[index] = replace(self.compiles[index], options=options)

    def on_duration(self, phase: str, seconds: float) -> None:
        """A duration JAX reported: trace and lower come before the lowering is seen,
        the backend compile (or, for a persistent-cache hit, the seconds it saved) after
        it."""
        state = self.pending
        if phase == "saved":
            if (index := self._last()) is not None and (hit := self.compiles[index].cache):
                self.compiles[index] = replace(
                    self.compiles[index], cache=replace(hit, saved_s=seconds)
                )
            state.last, state.asked = None, False
            return
        if phase == "compile":
            index = getattr(state, "last", None)
            if index is _INTERNAL:
                self.internal_s += seconds
            elif (index := self._last()) is not None:
                done = self.compiles[index]
                if done.compile_s is None:
                    cache = self._cache_use(getattr(state, "asked", False), seconds)
                    self.compiles[index] = replace(done, compile_s=seconds, cache=cache)
            state.last, state.asked = None, False
            return
        times: dict[str, float] = getattr(state, "times", None) or {}
        times[phase] = times.get(phase, 0.0) + seconds
        state.times = times

    def _cache_use(self, asked: bool, seconds: float) -> CacheUse | None:
        """What the persistent cache did for a compile that ran: missed (and wrote it, or
        not, as the minimum compile time says), or was not asked, and why."""
        if self.cache_settings is None:
            return None
        settings = self.cache_settings()
        if settings.get("jax_enable_compilation_cache") is False:
            return CacheUse("off", "jax_enable_compilation_cache is False")
        if not settings.get("jax_compilation_cache_dir"):
            # JAX may still ask its cache, which has nothing to read or write: not
            # enabled, as jax._src.compilation_cache.is_persistent_cache_enabled says
            return CacheUse("off", "no cache folder: jax_compilation_cache_dir is not set")
        if asked:
            least = settings.get("jax_persistent_cache_min_compile_time_secs")
            if isinstance(least, (int, float)) and seconds < least:
                said = f"jax_persistent_cache_min_compile_time_secs ({least} s)"
                return CacheUse("not_written", f"it compiled in {seconds:.2f} s, under {said}",
                                min_compile_time_s=float(least))  # fmt: skip
            return CacheUse("miss")
        return CacheUse("off", "JAX did not ask the cache for this compile")

    def add_internal(self) -> None:
        """A lowering of JAX's own: its trace and lowering seconds, and the backend
        compile JAX reports next, are JAX's own (they went to the user's next compile)."""
        times: dict[str, float] = getattr(self.pending, "times", None) or {}
        self.pending.times = {}
        self.internal_s += sum(times.values())
        self.pending.last, self.pending.asked = _INTERNAL, False

    def add(self, code: str, function: str, folder: str, now: Fingerprint,
            call_site: str | None) -> Compile:  # fmt: skip
        """Record a compile of ``code``: its reasons against the nearest earlier one."""
        earlier = self.remembered.setdefault(code, [])
        # the one it differs from least; of those, the earliest (the run's steady shape)
        found = min((reasons(b, now) for b in earlier), key=len, default=[])
        earlier.append(now)
        del earlier[:-MAX_REMEMBERED]
        self.counts[code] = number = self.counts.get(code, 0) + 1
        times: dict[str, float] = getattr(self.pending, "times", None) or {}
        self.pending.times, self.pending.asked = {}, False
        done = Compile(
            function, code, folder, number, call_site,
            trace_s=times.get("trace"), lower_s=times.get("lower"), reasons=tuple(found),
        )  # fmt: skip
        if len(self.compiles) >= MAX_COMPILES:
            self.dropped += 1
            self.pending.last = None
        else:
            self.compiles.append(done)
            self.pending.last = len(self.compiles) - 1
        return done
