"""Two surveys compared cell by cell (schema ``jxinspect.survey-diff/1``): what a JAX
release (or a JAX change) improved or broke in the debug info it keeps, program by program
and level by level. ``jxinspect.compare.survey`` works it out; the renderers draw it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, get_args

from jxinspect.core.display import Displayed
from jxinspect.core.survey import Verdict

SCHEMA: Literal["jxinspect.survey-diff/1"] = "jxinspect.survey-diff/1"

ChangeKind = Literal["regressed", "improved", "changed"]
"""A cell's verdict got worse, better, or stayed while its counts moved."""
KINDS: tuple[ChangeKind, ...] = get_args(ChangeKind)


@dataclass(frozen=True)
class CellChange:
    """One program's level as two surveys saw it (``None``: that survey has no such cell)."""

    program: str
    level: str
    kind: ChangeKind
    before: Verdict | None
    after: Verdict | None
    before_counts: str = ""
    """``partial 2/2``: the verdict and how many had it (empty where there is no cell)."""
    after_counts: str = ""


@dataclass(frozen=True, kw_only=True, repr=False)
class SurveyDiff(Displayed):
    """What changed between two surveys; ``failed`` when a cell regressed (and the gate
    is on)."""

    product = "survey_diff"

    schema: Literal["jxinspect.survey-diff/1"] = field(init=False, default_factory=lambda: SCHEMA)
    before: str
    """The first survey's file, as given."""
    after: str
    before_release: str
    after_release: str
    improved: int = field(init=False, default=0)
    """How many cells improved (derived)."""
    regressed: int = field(init=False, default=0)
    changed: int = field(init=False, default=0)
    failed: bool = field(init=False, default=False)
    """A cell regressed and the gate is on (derived)."""
    changes: tuple[CellChange, ...]
    only_before: tuple[str, ...] = ()
    """Programs only the first survey has staged (the corpus changed between them, or the
    second release lacks the program's API: ``unavailable``)."""
    only_after: tuple[str, ...] = ()
    gate: bool = field(default=True, metadata={"written": False})
    """Whether a regression fails the run (``--fail-on never``: no)."""

    def __post_init__(self) -> None:
        kinds = Counter(c.kind for c in self.changes)
        for kind in KINDS:
            object.__setattr__(self, kind, kinds[kind])
        object.__setattr__(self, "failed", self.gate and kinds["regressed"] > 0)

    def of_kind(self, kind: ChangeKind) -> tuple[CellChange, ...]:
        return tuple(c for c in self.changes if c.kind == kind)
