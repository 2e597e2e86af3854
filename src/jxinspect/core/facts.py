"""What the rules read besides the report: named facts, each given by the path that knows
it (a recording's compiles, a lint baseline's accepted cost, the lowerings of one function
compared across processes), so that :class:`~jxinspect.core.model.Report` is only the
report. :func:`jxinspect.pipeline.judge` builds them and runs every rule once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import AcceptedCost
from jxinspect.core.recompiles import Compile
from jxinspect.core.settings import DEFAULT_SETTINGS, Settings

Read = Literal[
    "lowered", "compiled", "peak", "origins", "compiles", "accepted_cost", "comparisons"
]  # fmt: skip
"""What a rule reads: the lowered report, the compiled program, the peak's live set (part
of the compiled program, ``memory``), the partitioner's record of where each sharding came
from (``why``), a recorded run's compiles, the lint baseline's accepted cost, the
lowerings of one function compared (of processes, of runs)."""

READS: dict[Read, tuple[str, str]] = {
    "lowered": ("the lowered program", "stage it"),
    "compiled": ("the compiled program", "compile: true, or --compile"),
    "peak": ("the peak's live set", "--memory"),
    "origins": ("the partitioner's record", "why: true, or --why"),
    "compiles": ("the run's compiles", "jxinspect record, then lint --records"),
    "accepted_cost": ("the baseline's accepted cost", "lint --write-baseline, compiled"),
    "comparisons": ("the lowerings compared", "a recording of several processes or runs"),
}
"""Each read in words, and how a run gets it: what a rule that cannot judge says."""


@dataclass(frozen=True)
class Facts:
    """Everything a rule may read besides the report."""

    settings: Settings = field(default=DEFAULT_SETTINGS)
    """The thresholds of the rules that take them (``budgets:``)."""
    compiles: tuple[Compile, ...] = ()
    """A recording's compiles of the function's code (JX401, JX402); none elsewhere."""
    accepted_cost: AcceptedCost | None = None
    """The compiled cost a lint baseline accepted for the target (JX304, JX305)."""
    comparisons: tuple[ProgramComparison, ...] = ()
    """The function's lowerings compared across the processes of a run (JX403)."""
