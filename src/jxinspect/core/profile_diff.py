"""What a change did to the measured time of a step: ``diff-debug`` of two profiles.

Plain data, as :mod:`jxinspect.core.cost_diff` is: :mod:`jxinspect.compare.profile` makes
it from two reports that hold a :class:`~jxinspect.core.profile.Profile` (saved with
``profile --format json``, or both sides measured with ``diff-debug --profile``), the
renderers draw it, the codec writes it in the diff's JSON. Time per step by the user's line
and by collective, before → after, with each one's share of the measured time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jxinspect.core.cost_diff import DEFAULT_MEMORY_GROWTH

LineMatch = Literal["line", "instructions", "only"]
"""How a line was paired across the two versions: by its place (the target's own file by
line number, any other file by file and line), by the instructions it became (the line
moved), or not at all (only one side has it)."""

MIN_SHARE = 0.01
"""A line or collective holding less than this share of the measured time on both sides
is shown but never judged (microseconds the profiler's noise moves)."""


@dataclass(frozen=True)
class TimeChange:
    """One line's or collective's measured time per step, before → after (``None``: that
    side has none)."""

    what: str
    """``prog.py:12`` (the after side's place where both have it), or a collective as
    :attr:`~jxinspect.core.model.Collective.described` words it."""
    before_seconds: float | None
    after_seconds: float | None
    before_share: float | None
    """Of that side's measured instruction time."""
    after_share: float | None
    matched_by: LineMatch
    instructions: tuple[str, ...] = ()
    """The instructions it is made of (the after side's where it has them)."""
    percent: float | None = field(init=False, default=None)
    """The change of the time per step in % of before (derived; ``None``: a side lacks
    it)."""

    def __post_init__(self) -> None:
        was, now = self.before_seconds, self.after_seconds
        if was is not None and now is not None and was > 0:
            object.__setattr__(self, "percent", (now - was) / was * 100)

    @property
    def judged(self) -> bool:
        """Whether it holds enough of either side's time to be judged (:data:`MIN_SHARE`)."""
        return max(self.before_share or 0.0, self.after_share or 0.0) >= MIN_SHARE


@dataclass(frozen=True)
class ProfileDiff:
    """A target's measured step, before → after."""

    step_before: float
    """The median step's wall seconds."""
    step_after: float
    instructions_before: float | None
    """The instructions' measured time per step and device (``None``: none read)."""
    instructions_after: float | None
    lines: tuple[TimeChange, ...] = ()
    """Each line of either side, the largest change in time first."""
    collectives: tuple[TimeChange, ...] = ()
    """Each collective of either side, paired by kind, mesh axes and the paths it moves."""
    time_growth: float = DEFAULT_MEMORY_GROWTH
    """The threshold (``budgets.memory_growth``, the one the compiled cost is judged by):
    a line or collective whose time grew by more than this fraction is a regression, one
    whose time fell by more an improvement."""
    unread: tuple[str, ...] = ()
    """Each side whose profile measured no instruction, and why: nothing is paired."""
    step_percent: float | None = field(init=False, default=None)
    """The median step's change in % of before (derived)."""

    def __post_init__(self) -> None:
        if self.step_before > 0:
            change = (self.step_after - self.step_before) / self.step_before * 100
            object.__setattr__(self, "step_percent", change)

    def slower(self, change: TimeChange) -> bool:
        """Its time grew past the threshold (a line only after: it appeared)."""
        if not change.judged or change.after_seconds is None:
            return False
        if change.before_seconds is None:
            return True
        return change.after_seconds > change.before_seconds * (1 + self.time_growth)

    def faster(self, change: TimeChange) -> bool:
        """Its time fell past the threshold (a line only before: it is gone)."""
        if not change.judged or change.before_seconds is None:
            return False
        if change.after_seconds is None:
            return True
        return change.after_seconds < change.before_seconds * (1 - self.time_growth)
