"""Two surveys compared cell by cell: what a JAX release (or a JAX change) improved or
broke in the debug info it keeps, program by program and level by level (the result,
:class:`~jxinspect.core.survey_diff.SurveyDiff`, is a core type)."""

from __future__ import annotations

from pathlib import Path

from jxinspect.core import codec
from jxinspect.core.errors import UsageError
from jxinspect.core.survey import SCHEMA as SURVEY_SCHEMA
from jxinspect.core.survey import Survey, SurveyProgram, rank
from jxinspect.core.survey_diff import CellChange, ChangeKind, SurveyDiff


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
    ``diff-debug`` say what it is). Read by the one artifact reader: a file that is not
    regular or is over the JSON bound is one line, whatever it holds."""
    path = Path(text)
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        return codec.read_file(path, Survey, shown=text, schema=SURVEY_SCHEMA)
    except FileNotFoundError:
        return None
    except codec.DecodeError as err:
        if err.malformed or err.found != SURVEY_SCHEMA:
            return None  # not JSON, or another file: the report reader says what it is
        raise UsageError(
            f"{text} is not a survey jxinspect can read ({err.problem}); "
            "make it again with `jxinspect survey --format json -o FILE`"
        ) from None
