"""Two surveys compared cell by cell: what a JAX release (or a JAX change) improved or
broke in the debug info it keeps, program by program and level by level."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from jxinspect.core.display import Displayed
from jxinspect.core.errors import UsageError
from jxinspect.core.survey import SCHEMA as SURVEY_SCHEMA
from jxinspect.core.survey import Survey, SurveyProgram, Verdict, rank

SCHEMA = "jxinspect.survey-diff/1"

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

    def to_dict(self) -> dict[str, Any]:
        return {"program": self.program, "level": self.level, "kind": self.kind,
                "before": self.before, "after": self.after,
                "before_counts": self.before_counts,
                "after_counts": self.after_counts}  # fmt: skip


@dataclass(frozen=True, repr=False)
class SurveyDiff(Displayed):
    """What changed between two surveys; ``failed`` when a cell regressed (and the gate
    is on)."""

    product = "survey_diff"

    before: str
    """The first survey's file, as given."""
    after: str
    before_release: str
    after_release: str
    changes: tuple[CellChange, ...]
    only_before: tuple[str, ...] = ()
    """Programs only the first survey has staged (the corpus changed between them, or the
    second release lacks the program's API: ``unavailable``)."""
    only_after: tuple[str, ...] = ()
    gate: bool = True
    """Whether a regression fails the run (``--fail-on never``: no)."""

    def of_kind(self, kind: ChangeKind) -> tuple[CellChange, ...]:
        return tuple(c for c in self.changes if c.kind == kind)

    @property
    def failed(self) -> bool:
        return self.gate and bool(self.of_kind("regressed"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "before": self.before,
            "after": self.after,
            "before_release": self.before_release,
            "after_release": self.after_release,
            "improved": len(self.of_kind("improved")),
            "regressed": len(self.of_kind("regressed")),
            "changed": len(self.of_kind("changed")),
            "failed": self.failed,
            "changes": [c.to_dict() for c in self.changes],
            "only_before": list(self.only_before),
            "only_after": list(self.only_after),
        }


def _counts(program: SurveyProgram, level: str) -> str:
    if program.error is not None:
        return "failed"
    cell = program.cell(level)
    return cell.summary if cell is not None else ""


def _change(old: SurveyProgram, new: SurveyProgram, level: str) -> CellChange | None:
    before, after = old.verdict(level), new.verdict(level)
    old_counts, new_counts = _counts(old, level), _counts(new, level)
    if before == after and old_counts == new_counts:
        return None
    kind: ChangeKind = "changed"
    if before is None or after is None:
        # a level only one side has: a lossy one appearing is a regression, going an
        # improvement; a kept one coming or going is only a change
        present = after if before is None else before
        if present != "kept":
            kind = "regressed" if before is None else "improved"
    elif rank(after) < rank(before):
        kind = "improved"
    elif rank(after) > rank(before):
        kind = "regressed"
    return CellChange(old.name, level, kind, before, after, old_counts, new_counts)


def diff_surveys(
    before: Survey, after: Survey, before_text: str, after_text: str, gate: bool = True
) -> SurveyDiff:
    """Every cell of the programs both surveys have whose verdict or counts changed."""
    changes: list[CellChange] = []
    levels = dict.fromkeys((*before.levels, *after.levels))
    for old in before.programs:
        new = after.program(old.name)
        if new is None or old.unavailable is not None or new.unavailable is not None:
            continue
        for level in levels:
            change = _change(old, new, level)
            if change is not None:
                changes.append(change)
    names_before = {p.name for p in before.programs if p.unavailable is None}
    names_after = {p.name for p in after.programs if p.unavailable is None}
    return SurveyDiff(
        before=before_text,
        after=after_text,
        before_release=before.jax_version,
        after_release=after.jax_version,
        changes=tuple(changes),
        only_before=tuple(
            p.name for p in before.programs if p.name in names_before and p.name not in names_after
        ),
        only_after=tuple(
            p.name for p in after.programs if p.name in names_after and p.name not in names_before
        ),
        gate=gate,
    )


def read_survey(text: str) -> Survey | None:
    """The survey saved in the file ``text`` (``jxinspect survey --format json``);
    ``None`` when it holds none (not a JSON file, or another schema: the other readers of
    ``diff-debug`` say what it is)."""
    path = Path(text)
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("schema") != SURVEY_SCHEMA:
        return None
    try:
        return Survey.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UsageError(
            f"{text} is not a survey jxinspect can read ({type(err).__name__}: {err}); "
            "make it again with `jxinspect survey --format json -o FILE`"
        ) from None
