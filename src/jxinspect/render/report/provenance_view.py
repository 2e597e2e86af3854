"""Why each collective is there (``lower --why``): for the operation that needs it, its
result's and its operands' shardings, and the declaration each mesh axis came from."""

from __future__ import annotations

from jxinspect.core.model import Collective, Origin, Report, ValueOrigins
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.source import at_source_text, paths_shown, source_text

TITLE = "why each collective (Shardy's record of where each sharding came from)"
VALUES_TITLE = "why these values are sharded so (--why-of)"
UNMATCHED = (
    "not known: none of its line's operations lined up with the partitioner's record, or "
    "several alike there that what it moves does not tell apart"
)


HOPS_SHOWN = 4
"""The user's hops a route names: the first two and the last two."""


def route(origin: Origin) -> str:
    """`` via tanh at model.py:16 → dot_general at model.py:18 (+3 in libraries)``: the
    hops at the user's lines (the first two and the last two of many), the library's
    counted."""
    user = [hop for hop in origin.via if hop.file is not None]  # the user's line, or none
    hops = [", ".join(h.operations) + at_source_text(h.file, h.line) for h in user]
    if len(hops) > HOPS_SHOWN:
        hops = [*hops[:2], f"… {len(hops) - HOPS_SHOWN} more", *hops[-2:]]
    library = len(origin.via) - len(user)
    said = f" via {' → '.join(hops)}" if hops else ""
    if library:
        said += f" (+{library} in libraries)" if hops else f" via {library} hops in libraries"
    return said


LINE_MOST = 160
"""The most characters a value's line of axes runs to before each axis takes a line of
its own (two routes of four hops each ran to 390)."""


def axis_parts(origins: tuple[Origin, ...]) -> list[str]:
    """``data ← argument `x``` and ``model ← argument `w` via tanh at model.py:5``: each
    axis, its declaration and the operations that carried it; axes declared and carried
    alike said once (``data, model ← ...``)."""
    said: dict[str, list[str]] = {}
    for origin in origins:
        said.setdefault(f"{origin.declaration}{route(origin)}", []).append(origin.axis)
    return [f"{', '.join(axes)} ← {how}" for how, axes in said.items()]


def axes_from(origins: tuple[Origin, ...]) -> str:
    """The :func:`axis_parts` on one line, ``; `` apart."""
    return "; ".join(axis_parts(origins))


def asked_lines(value: ValueOrigins) -> list[str]:
    """A value asked about: what it is, its sharding, the declaration of each axis."""
    if value.value is None:
        return [f"{value.asked}: not found: {value.unfound or 'unknown'}"]
    if value.origins:
        said = axes_from(value.origins)
    elif value.declared:
        said = "declared so (its own sharding)"
    elif value.sharding == "replicated":
        said = "no declaration reaches it"
    else:
        said = "the partitioner's record names no declaration for it"
    return [value.value, f"  {value.sharding}: {said}"]


def _values(c: Collective) -> list[str]:
    """One line per value (the result, each operand): its sharding, then each axis and
    the declaration it came from."""
    lines: list[str] = []
    by_value: dict[str, list[Origin]] = {}
    for origin in c.origins or ():
        by_value.setdefault(origin.value, []).append(origin)
    for value, origins in by_value.items():
        head, parts = f"{value:<10} {origins[0].sharding}:", axis_parts(tuple(origins))
        line = f"{head} {'; '.join(parts)}"
        lines += [line] if len(line) <= LINE_MOST else [head, *(f"  {part}" for part in parts)]
    return lines


def render(report: Report) -> str:
    """Each collective and, under it, where its operation's shardings came from."""
    compiled = report.compiled
    if compiled is None:
        return f"why: not compiled (reached {report.reached})\n"
    if compiled.collectives is None:
        return f"why: collectives not read: {esc(compiled.unread or 'unknown')}\n"
    if compiled.origins_unread is not None:
        return f"why: not known: {esc(compiled.origins_unread)}\n"
    lines = [TITLE]
    if not compiled.collectives:
        lines.append("  none: the compiled program has no collectives")
    for i, c in enumerate(compiled.collectives):
        axes = ",".join(c.axes) if c.axes else "?"
        said = source_text(c.file, c.line, c.library_file, c.library_line)
        at = f" at {said}" if said else ""
        lines.append(f"  #{i} {c.kind} over {axes}, moves {c.moves}{at}")
        if c.origins is None and not compiled.origins_read:
            lines.append("     not asked for (lower --why)")
        elif c.origins is None:
            lines.append(f"     {UNMATCHED}")
        elif not c.origins:
            lines.append("     the partitioner's record names no declaration for its operation")
        lines += [f"     {esc(paths_shown(line))}" for line in _values(c)]
    if compiled.why_of:
        lines += ["", VALUES_TITLE]
        lines += [
            f"  {esc(paths_shown(line))}"
            for value in compiled.why_of
            for line in asked_lines(value)
        ]
    return "\n".join(lines) + "\n"
