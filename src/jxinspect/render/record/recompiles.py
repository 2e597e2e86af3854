"""The ``recompiles`` section of ``jxinspect show FOLDER``: per function that compiled
more than once, how many compiles and their seconds; under each compile the reasons it
compiled for (compiles for the same kinds of reason about the same paths in one block:
``compiles 2–32 (31×, …)`` then ``31× batch['x'] shape f32[32,128] → f32[N,128], N in
1..31``), one line of advice per kind, and the call sites."""

from __future__ import annotations

from collections.abc import Iterable

from jxinspect.core.recompiles import (
    ADVICE,
    Compile,
    FunctionCompiles,
    Group,
    by_call_site,
    by_function,
)
from jxinspect.core.units import plural
from jxinspect.render.common.source import shown_text


def group_text(group: Group) -> str:
    """``31× batch['x'] shape f32[32,128] → f32[N,128], N in 1..31``."""
    where = f"{shown_text(group.path)} " if group.path else ""
    before, after = shown_text(group.before or "(none)"), shown_text(group.after)
    return f"{group.count}× {where}{group.kind} {before} → {after}"


def render_text(compiles: list[Compile], dropped: int) -> list[str]:
    """The section's lines (none where no function compiled twice)."""
    again = [f for f in by_function(compiles) if len(f.compiles) > 1]
    if not again:
        return []
    lines = ["", "recompiles"]
    for found in again:
        phases = _phases(found.compiles)
        lines.append(f"  {shown_text(found.function)} ({shown_text(found.source or 'no source')}): "
                     f"{len(found.compiles)} compiles, {found.seconds:.2f} s{phases}")  # fmt: skip
        groups = found.groups
        if not groups:
            lines.append("    the same program each time: JAX's caches let it go")
        for caused in _by_cause(found) if groups else ():
            lines.extend(_cause_text(caused))
        for kind in dict.fromkeys(g.kind for g in groups):
            lines.append(f"    advice ({kind}): {ADVICE[kind]}")
        sites = found.call_sites()
        if len(sites) > 1:
            said = ", ".join(f"{shown_text(site)} {n}×" for site, n in sites.most_common())
            lines.append(f"    called from {said}")
    if dropped:
        lines.append(f"  {plural(dropped, 'more compile')} counted, not listed")
    return lines


def _by_cause(found: FunctionCompiles) -> list[FunctionCompiles]:
    """The function's compiles after its first, in blocks that share their reasons' kinds
    and paths (the 31 compiles of one varying shape are one block), in the order each
    first happened; the same program compiled again is a block of its own."""
    blocks: dict[tuple[tuple[str, str | None], ...], list[Compile]] = {}
    for compile in found.compiles[1:]:
        cause = tuple(dict.fromkeys((r.kind, r.path) for r in compile.reasons))
        blocks.setdefault(cause, []).append(compile)
    return [FunctionCompiles(found.function, found.source, compiles=tuple(block))
            for block in blocks.values()]  # fmt: skip


def _cause_text(caused: FunctionCompiles) -> list[str]:
    """``compile 3 (0.41 s)`` and the reasons it compiled for, beneath it."""
    numbers = _ranges([c.number for c in caused.compiles])
    which = f"compile {numbers}" if caused.count == 1 else f"compiles {numbers} ({caused.count}×"
    which += f", {caused.seconds:.2f} s)" if caused.count > 1 else f" ({caused.seconds:.2f} s)"
    if not caused.groups:
        return [f"    {which}: the same program again"]
    return [f"    {which}"] + [
        f"      {group_text(g) if caused.count > 1 else _reason_text(g)}" for g in caused.groups
    ]


def _reason_text(group: Group) -> str:
    """One compile's reason: :func:`group_text` without the count."""
    return group_text(group).split(" ", 1)[1]


def _ranges(numbers: list[int]) -> str:
    """``2–4, 7``."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


def _phases(compiles: Iterable[Compile]) -> str:
    totals = {"trace": 0.0, "lower": 0.0, "compile": 0.0}
    for c in compiles:
        totals["trace"] += c.trace_s or 0.0
        totals["lower"] += c.lower_s or 0.0
        totals["compile"] += c.compile_s or 0.0
    return " (" + ", ".join(f"{k} {v:.2f}" for k, v in totals.items()) + ")"


def cache_said(found: FunctionCompiles) -> str:
    """``2 hit, 1 miss, saved 3.10 s``: a function's persistent-cache outcomes."""
    outcomes = ", ".join(f"{n} {outcome.replace('_', ' ')}" for outcome, n in found.cache.items())
    return outcomes + (f", saved {found.saved_s:.2f} s" if found.cache.get("hit") else "")


def by_compile_time(compiles: list[Compile]) -> list[FunctionCompiles]:
    """Every function by its compile seconds, most first, for the ``compile time``
    section (text and HTML); none where no compile says what the persistent cache did."""
    if not any(c.cache is not None for c in compiles):
        return []
    return sorted(by_function(compiles), key=lambda f: -f.seconds)


def cache_text(compiles: list[Compile]) -> list[str]:
    """The ``compile time`` section: every function by its compile seconds, most first,
    with what the persistent compilation cache did (none where no compile says)."""
    ranked = by_compile_time(compiles)
    if not ranked:
        return []
    lines = ["", "compile time (and the persistent compilation cache)"]
    for found in ranked:
        source = shown_text(found.source or "no source")
        lines.append(f"  {shown_text(found.function)} ({source}): "
                     f"{plural(found.count, 'compile')}, {found.seconds:.2f} s"
                     f"{_phases(found.compiles)}; cache: {cache_said(found)}")  # fmt: skip
        reasons = dict.fromkeys(
            c.cache.reason for c in found.compiles if c.cache and c.cache.reason
        )
        lines.extend(f"    {shown_text(reason)}" for reason in reasons)
    sites = by_call_site(compiles)
    if sites:
        lines.append("  by call site")
    for site in sites:
        found = site.compiles
        functions = shown_text(", ".join(site.functions))
        lines.append(f"    {shown_text(site.site)}: {plural(found.count, 'compile')}, "
                     f"{found.seconds:.2f} s ({functions}); "
                     f"cache: {cache_said(found)}")  # fmt: skip
    return lines
