"""What a change did to the measured step (``diff-debug`` of two profiles).

No JAX here. :func:`diff_profiles` pairs two reports' :class:`~jxinspect.core.profile.Profile`
into a :class:`~jxinspect.core.profile_diff.ProfileDiff`:

* **lines** are paired by their place (a line of the target's own file by its number
  alone: the two versions are often two files, ``before.py`` and ``after.py``; any other
  file's by file and line) where the two also share an instruction's name; then, where an
  edit above them moved them, by the instructions they became (XLA's names, ``dot.3``,
  ``ynn_fusion``), the most names in common first; then by place alone (the line's work
  now compiles to other instructions); what is still left is only before or only after
  (a line that both moved and compiles to other names is not paired);
* **collectives** by kind, mesh axes and the paths they move, in order where several
  share all three (as the compiled cost pairs them).

:func:`profile_changes` grades it for the gate: a line or collective whose time per step
grew past ``budgets.memory_growth`` (the threshold the compiled cost is judged by) is a
regression, a warning as every measured-cost growth but the budgeted temporaries is (a
time is a measurement: the same program measured twice moves by a few %); one that fell
past it an improvement. Lines and collectives under :data:`MIN_SHARE` of the measured time
on both sides are shown, never judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.diff import Change
from jxinspect.core.model import Report
from jxinspect.core.profile import CollectiveTime, LineTime, Profile
from jxinspect.core.profile_diff import LineMatch, ProfileDiff, TimeChange
from jxinspect.core.units import human_seconds


def diff_profiles(before: Report, after: Report, time_growth: float) -> ProfileDiff | None:
    """Both reports' measured steps compared; ``None`` where a side was not measured."""
    old, new = before.profile, after.profile
    if old is None or new is None:
        return None
    unread = tuple(
        f"{side}: {profile.unread or 'no instruction measured'}"
        for side, profile in (("before", old), ("after", new))
        if profile.unread is not None or profile.instruction_seconds is None
    )
    lines = () if unread else _lines(old, new, before.file, after.file)
    collectives = () if unread else _collectives(old.collectives, new.collectives)
    return ProfileDiff(
        old.step_seconds.median, new.step_seconds.median, old.instruction_seconds,
        new.instruction_seconds, lines, collectives, time_growth, unread,
    )  # fmt: skip


def _in_own_file(file: str | None, own: str | None) -> bool:
    """Whether ``file`` (as the profile wrote it: relative to the working folder where
    inside it) is the target's own file ``own`` (as the report wrote it)."""
    if file is None or own is None:
        return False
    return file == own or own.replace("\\", "/").endswith("/" + file.replace("\\", "/"))


def _place(line: LineTime, own: str | None) -> tuple[str, int | None]:
    if _in_own_file(line.file, own):
        return "", line.line
    if line.file is not None:
        return line.file, line.line
    return f"library:{line.library_file}", line.library_line


def _where(line: LineTime) -> str:
    """``prog.py:12``, ``flax/linen/linear.py:88 (library)``, ``(no line)``."""
    if line.file is not None:
        return f"{line.file}:{line.line}"
    if line.library_file is not None:
        return f"{line.library_file}:{line.library_line} (library)"
    return "(no line)"


def _change(
    what: str, was: LineTime | None, now: LineTime | None, matched: LineMatch
) -> TimeChange:
    shown = now if now is not None else was
    assert shown is not None, "a line of at least one side"
    return TimeChange(
        what, was.seconds if was else None, now.seconds if now else None,
        was.share if was else None, now.share if now else None, matched, shown.instructions,
    )  # fmt: skip


def _lines(
    old: Profile, new: Profile, own_before: str | None, own_after: str | None
) -> tuple[TimeChange, ...]:
    """Each side's lines paired: at the same place with an instruction in common, then by
    the instructions they became (the lines moved), then at the same place (the line's
    work changed its instructions), the rest on one side only."""
    before, after = list(old.by_line), list(new.by_line)
    found: list[TimeChange] = []

    def take(pairs: list[tuple[LineTime, LineTime]], matched: LineMatch) -> None:
        for earlier, later in pairs:
            found.append(_change(_where(later), earlier, later, matched))
            before.remove(earlier)
            after.remove(later)

    take(_by_place(before, after, own_before, own_after, common=True), "line")
    take(_by_instructions(before, after), "instructions")
    take(_by_place(before, after, own_before, own_after, common=False), "line")
    found += [_change(_where(line), line, None, "only") for line in before]
    found += [_change(_where(line), None, line, "only") for line in after]
    return tuple(sorted(found, key=_largest_change))


def _by_place(
    before: list[LineTime],
    after: list[LineTime],
    own_before: str | None,
    own_after: str | None,
    common: bool,
) -> list[tuple[LineTime, LineTime]]:
    """Lines at the same place (``common``: with an instruction name in common)."""
    was = {_place(line, own_before): line for line in before}
    pairs = []
    for line in after:
        earlier = was.get(_place(line, own_after))
        if earlier is not None and (
            not common or set(earlier.instructions) & set(line.instructions)
        ):
            pairs.append((earlier, line))
    return pairs


def _by_instructions(
    before: list[LineTime], after: list[LineTime]
) -> list[tuple[LineTime, LineTime]]:
    """Lines that moved, paired by the instructions they became: the most names in
    common first, each line once."""
    candidates = sorted(
        ((len(set(b.instructions) & set(a.instructions)), i, j)
         for i, b in enumerate(before) for j, a in enumerate(after)),
        key=lambda c: (-c[0], c[1], c[2]),
    )  # fmt: skip
    taken_before: set[int] = set()
    taken_after: set[int] = set()
    pairs = []
    for common, i, j in candidates:
        if common == 0:
            break
        if i in taken_before or j in taken_after:
            continue
        taken_before.add(i)
        taken_after.add(j)
        pairs.append((before[i], after[j]))
    return pairs


def _largest_change(change: TimeChange) -> float:
    return -abs((change.after_seconds or 0.0) - (change.before_seconds or 0.0))


def _collective_key(c: CollectiveTime) -> tuple[str, str, tuple[str, ...]]:
    """As :attr:`~jxinspect.core.model.Collective.pairing_key` pairs compiled ones."""
    return c.kind, ",".join(c.axes) if c.axes is not None else "?", c.moves


def _collective_what(c: CollectiveTime) -> str:
    kind, axes, moves = _collective_key(c)
    return f"{kind} over {axes} moving {', '.join(moves) or 'intermediates'}"


def _collectives(
    before: tuple[CollectiveTime, ...], after: tuple[CollectiveTime, ...]
) -> tuple[TimeChange, ...]:
    total_before = sum(c.seconds for c in before)
    total_after = sum(c.seconds for c in after)
    waiting: dict[tuple[str, str, tuple[str, ...]], list[CollectiveTime]] = {}
    for c in before:
        waiting.setdefault(_collective_key(c), []).append(c)
    found = []
    for c in after:
        earlier = waiting.get(_collective_key(c))
        old = earlier.pop(0) if earlier else None
        found.append(_collective_change(c, old, c, total_before, total_after))
    for left in waiting.values():
        found += [_collective_change(c, c, None, total_before, total_after) for c in left]
    return tuple(sorted(found, key=_largest_change))


def _collective_change(
    shown: CollectiveTime,
    was: CollectiveTime | None,
    now: CollectiveTime | None,
    total_before: float,
    total_after: float,
) -> TimeChange:
    """Its share is of the collectives' measured time on that side."""
    return TimeChange(
        _collective_what(shown), was.seconds if was else None, now.seconds if now else None,
        was.seconds / total_before if was and total_before > 0 else (0.0 if was else None),
        now.seconds / total_after if now and total_after > 0 else (0.0 if now else None),
        "line" if was and now else "only", (shown.instruction,),
    )  # fmt: skip


def _time(seconds: float | None, share: float | None) -> str | None:
    if seconds is None:
        return None
    return f"{human_seconds(seconds)} ({(share or 0.0):.1%})"


def profile_changes(diff: ProfileDiff) -> Iterator[Change]:
    """The gate's view of the measured step: each line or collective slower past the
    threshold (a regression, a warning), or faster past it (an improvement)."""
    for side in diff.unread:
        yield Change(
            category="time", kind="unread", verdict="neutral", severity=None, where="time",
            path="the measured step", before=side if side.startswith("before") else None,
            after=side if side.startswith("after") else None,
        )  # fmt: skip
    for found in (*diff.lines, *diff.collectives):
        slower, faster = diff.slower(found), diff.faster(found)
        if not (slower or faster):
            continue
        after = _time(found.after_seconds, found.after_share)
        if after is not None and found.percent is not None:
            after = after[:-1] + f", {found.percent:+.0f}%)"
        appeared = found.before_seconds is None or found.after_seconds is None
        yield Change(
            category="time",
            kind=("added" if slower else "removed") if appeared else "grew" if slower else "shrank",
            verdict="regression" if slower else "improvement",
            severity="warning" if slower else None,
            where="time",
            path=found.what,
            before=_time(found.before_seconds, found.before_share),
            after=after,
        )
