"""The survey: what one JAX release keeps of the debug info, transformation by
transformation, as plain frozen dataclasses.

``jxinspect survey`` stages a built-in corpus of small programs (one per transformation)
and grades, for each, every level that carries names: the top jaxpr's argument names and
result paths, each kind of nested jaxpr, and ``@main``'s arguments and results. A level of
a program is a :class:`Cell` with the count of each :data:`Outcome`. Its JSON form
(schema ``jxinspect.survey/1``, written and read by :mod:`jxinspect.core.codec` from these
types alone) is what ``diff-debug`` compares across releases and what the findings' "fixed
in" advice is read from (the surveys shipped in ``jxinspect/surveys``). A field made with
``init=False`` is derived (``__post_init__`` works it out) and written for readers of the
JSON. This module never imports JAX.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

from jxinspect.core.display import Displayed
from jxinspect.core.model import Report
from jxinspect.core.vocabulary import Reached, Stage, release_key

SCHEMA: Literal["jxinspect.survey/1"] = "jxinspect.survey/1"

Outcome = Literal["kept", "pruned", "partial", "fallback", "wrong", "missing"]
"""What a level kept of one name (an argument's name, a result's path) or of one nested
jaxpr's names, best first: the user's name, or every name of the nested jaxpr (``kept``);
the argument was dropped from ``@main`` (``pruned``); a nested jaxpr that has debug info
(it names its function and source line) but lacks some or all of its argument names or
result paths (``partial``); JAX's fallback name such as ``flat_args[0]``
(``fallback``); another leaf's name, or a nested jaxpr's names that do not match its
variables (``wrong``); no name, or a nested jaxpr with no debug info at all
(``missing``)."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

MEANINGS: dict[str, str] = {
    "kept": "the user's name (a nested jaxpr: all its names)",
    "pruned": "dropped from @main (unused)",
    "partial": "a nested jaxpr with debug info that lacks some or all of its names",
    "fallback": "JAX's positional name (flat_args[0], args[1])",
    "wrong": "another leaf's name, or names that do not match the variables",
    "missing": "no name (a nested jaxpr: no debug info at all)",
    "failed": "the program did not stage",
}
"""Each verdict in a few words, for a legend."""

Verdict = Literal["kept", "pruned", "partial", "fallback", "wrong", "missing", "failed"]
"""A cell's verdict: its worst outcome, or ``failed`` when the program did not stage."""
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

LEAF_LEVELS: tuple[str, ...] = (
    "jaxpr.args", "jaxpr.results", "main.args", "main.results", "compiled.args"
)  # fmt: skip
"""The levels of a program's own names, in the survey's column order (``compiled.args``:
the compiled program's parameters, with ``--compile``); nested jaxprs add
``nested.<primitive>``."""

NESTED = "nested."
COMPILED = "compiled.args"

UNITS = "cells count names (args), result paths (results) or nested jaxprs (nested)"
"""What a cell's ``n/m`` counts, for a legend: a leaf level one per flat argument or
result, a nested level one per jaxpr of that primitive (JAX's own left out)."""


_PRIMITIVES = {"pjit": "jit", "custom_vjp_call_jaxpr": "custom_vjp_call"}
"""Primitives JAX renamed, by their older name (``pjit`` is ``jit`` from 0.7 on): one
level of the survey, and one program shape, in every release."""


def primitive_name(primitive: str) -> str:
    """The newest name of a primitive (``jit`` for ``pjit``)."""
    return _PRIMITIVES.get(primitive, primitive)


def nested_shape(primitive: str) -> str:
    """The program shape of a nested jaxpr of ``primitive`` (``nested:scan``): how a
    finding about one names the survey cells it can be advised from."""
    return f"nested:{primitive_name(primitive)}"


def leaf_shape(family: str, side: Literal["args", "results"]) -> str:
    """The program shape of ``@main``'s names in a family of programs (``pmap:args``)."""
    return f"{family}:{side}"


KEYWORDS_SHAPE = "keywords:args"
"""The shape of an argument that carries another parameter's name (JAX 0.4 named keyword
arguments in signature order, flattened them sorted)."""


def pmap_shape(report: Report, side: Literal["args", "results"]) -> str | None:
    """The program shape of a report's own names where pmap staged it, else ``None``: a
    name pmap lost is a release's doing, one jit lost is not (the survey's jit programs
    keep theirs)."""
    return leaf_shape("pmap", side) if report.stage == "pmap" else None


def parameter_of(path: str) -> str:
    """The parameter a name or path starts with: ``params`` of ``params['w']``."""
    return re.split(r"[\[.]", path, maxsplit=1)[0]


def rank(verdict: str) -> int:
    """How bad a verdict is: 0 for ``kept``, higher for worse."""
    return VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)


@dataclass(frozen=True)
class Cell:
    """One level of one program: how many of its names (or nested jaxprs) had each outcome."""

    level: str
    """One of :data:`LEAF_LEVELS`, or ``nested.<primitive>`` (``nested.scan``)."""
    verdict: Outcome = field(init=False, default="kept")
    """The worst outcome, ``kept`` when all were kept (derived)."""
    total: int = field(init=False, default=0)
    """How many names (or nested jaxprs) the level has (derived)."""
    counts: dict[Outcome, int] = field(default_factory=dict)
    """Each outcome that occurred and how often, best first."""
    shape: str | None = None
    """The program shape findings are advised by (``nested:scan``, ``pmap:args``)."""
    examples: tuple[str, ...] = ()
    """A few names that were not kept, ``params['w'] → flat_args[0]``, for a person."""

    def __post_init__(self) -> None:
        verdict = max((o for o, n in self.counts.items() if n), key=rank, default="kept")
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "total", sum(self.counts.values()))

    def count(self, outcome: Outcome) -> int:
        return self.counts.get(outcome, 0)

    @property
    def summary(self) -> str:
        """``kept 2/2``, ``fallback 2/3``: the verdict and how many had it."""
        verdict = self.verdict
        return f"{verdict} {self.count(verdict)}/{self.total}"

    @property
    def unit(self) -> str:
        """What the cell counts: ``names`` (arguments), ``paths`` (results) or ``jaxprs``
        (a nested level: one per nested jaxpr, however many names each has)."""
        if self.level.startswith(NESTED):
            return "jaxprs"
        return "paths" if self.level.endswith(".results") else "names"

    @property
    def counted(self) -> str:
        """The summary with its unit: ``partial 2/2 jaxprs``, ``fallback 2/2 names``."""
        return f"{self.summary} {self.unit}"


@dataclass(frozen=True)
class SurveyProgram:
    """One program of the corpus, as the surveyed release staged it."""

    name: str
    """The corpus function, named after the transformation it exercises."""
    stage: Stage
    reached: Reached
    error: str | None = None
    """Why it did not stage (then it has no cells: every level counts as ``failed``)."""
    unavailable: str | None = None
    """The public API this release lacks (``jax.custom_transpose``, removed in JAX 0.10):
    the program was not staged (``reached`` is ``failed``, and it has no cells), and it is
    no failure of the release."""
    reads: str | None = None
    """The jaxpr whose debug info the ``jaxpr.*`` levels read, where it is not the traced
    function's own (``jit(f).trace()``'s): pmap's, in ``make_jaxpr(pmap(f))``."""
    jax_own: dict[str, int] = field(default_factory=dict)
    """Nested jaxprs of JAX's own functions (``jnp.clip``'s jit), by primitive: found,
    and not counted in the nested levels (their names are not the user's)."""
    cells: tuple[Cell, ...] = ()
    """Each level it has, in the survey's column order."""

    def cell(self, level: str) -> Cell | None:
        return next((c for c in self.cells if c.level == level), None)

    def verdict(self, level: str) -> Verdict | None:
        """The level's verdict; ``failed`` when the program failed, ``None`` when it has
        no such level (a program with no nested jaxpr of that primitive, or one this
        release cannot stage: :attr:`unavailable`)."""
        if self.unavailable is not None:
            return None
        if self.error is not None:
            return "failed"
        found = self.cell(level)
        return found.verdict if found is not None else None

    def own(self, level: str) -> int:
        """How many nested jaxprs of JAX's own the level left out (0 for a leaf level)."""
        if not level.startswith(NESTED):
            return 0
        return self.jax_own.get(level.removeprefix(NESTED), 0)


@dataclass(frozen=True, repr=False)
class Survey(Displayed):
    """What one JAX release kept of the debug info of every program of the corpus."""

    product = "survey"

    schema: Literal["jxinspect.survey/1"] = field(init=False, default_factory=lambda: SCHEMA)
    jax_version: str
    """The surveyed release (``0.10.2``)."""
    jaxlib_version: str
    platform: str
    """The backend the corpus was staged on (``cpu``)."""
    partitioner: str
    """``shardy`` or ``gspmd``."""
    programs: tuple[SurveyProgram, ...]
    """Every program of the corpus, in the corpus's order."""

    @property
    def levels(self) -> tuple[str, ...]:
        """Every level some program has: the leaf levels, then the nested ones by name."""
        nested = sorted(
            {c.level for p in self.programs for c in p.cells if c.level.startswith(NESTED)}
        )
        return (*LEAF_LEVELS, *nested)

    @property
    def shown_levels(self) -> tuple[str, ...]:
        """The levels a matrix shows: those some program has a cell of (``compiled.args``
        only with ``--compile``), or left nested jaxprs of JAX's own out of."""
        nested = {c.level for p in self.programs for c in p.cells if c.level.startswith(NESTED)}
        nested |= {NESTED + primitive for p in self.programs for primitive in p.jax_own}
        compiled = any(c.level == COMPILED for p in self.programs for c in p.cells)
        leaves = (lv for lv in LEAF_LEVELS if compiled or lv != COMPILED)
        return (*leaves, *sorted(nested))

    def program(self, name: str) -> SurveyProgram | None:
        return next((p for p in self.programs if p.name == name), None)

    def cells_of_shape(self, shape: str) -> list[tuple[str, Cell]]:
        """Each program's cell of this program shape, with the program's name."""
        return [(p.name, c) for p in self.programs for c in p.cells if c.shape == shape]


HISTORY_SCHEMA: Literal["jxinspect.survey-history/1"] = "jxinspect.survey-history/1"

Mark = Literal["kept", "pruned", "partial", "fallback", "wrong", "missing", "failed", "own",
               "none", "unavailable", "absent"]  # fmt: skip
"""What a history's cell shows for one program, level and release: the cell's verdict
(or ``failed``); ``own`` (only nested jaxprs of JAX's own, not counted); ``none`` (no
such level: no nested jaxpr of that primitive); ``unavailable`` (that release lacks the
program's API); ``absent`` (the program is not in that release's survey)."""
MARKS: tuple[Mark, ...] = get_args(Mark)


@dataclass(frozen=True)
class HistoryCell:
    """One program's level in one release's survey."""

    release: str
    mark: Mark
    text: str
    """``partial 2/2``, ``failed``, ``JAX's own 1``; empty for ``none`` and ``absent``."""


@dataclass(frozen=True)
class Run:
    """Consecutive releases whose cell of a program's level has the same mark."""

    mark: Mark
    first: str
    """The run's oldest release."""
    last: str
    """Its newest release (``first`` for a run of one)."""

    @property
    def releases(self) -> str:
        """``0.4.35–0.4.38``, or ``0.5.3`` for one."""
        return self.first if self.first == self.last else f"{self.first}–{self.last}"


@dataclass(frozen=True)
class ProgramHistory:
    """One program's level across the releases."""

    program: str
    cells: tuple[HistoryCell, ...]
    """One per release, oldest first."""
    runs: tuple[Run, ...]
    """The cells as runs of releases with one mark each (``missing`` from 0.4.35 to
    0.4.38, then ``wrong``...)."""


@dataclass(frozen=True)
class HistoryLevel:
    """One level's matrix: a row per program that has the level in some release."""

    level: str
    programs: tuple[ProgramHistory, ...]


@dataclass(frozen=True, repr=False)
class History(Displayed):
    """The surveys of several releases side by side (``jxinspect survey --history``, the
    surveys shipped with jxinspect): for each level, a matrix of program × release, oldest
    release first, so that where each transformation's debug info appeared, moved and
    regressed reads in one picture."""

    product = "survey_history"

    surveys: tuple[Survey, ...] = field(metadata={"written": False})
    """Oldest release first."""
    only: tuple[str, ...] = field(default=(), metadata={"written": False})
    """Only these programs (``--program``), when given."""
    schema: Literal["jxinspect.survey-history/1"] = field(
        init=False, default_factory=lambda: HISTORY_SCHEMA
    )
    releases: tuple[str, ...] = field(init=False, default=())
    """Every survey's release, oldest first (derived)."""
    levels: tuple[HistoryLevel, ...] = field(init=False, default=())
    """Every level some survey shows (``compiled.args`` only where one was compiled) that
    one of the programs has, each with its matrix (derived)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "releases", tuple(s.jax_version for s in self.surveys))
        found = {level for s in self.surveys for level in s.shown_levels}
        nested = sorted(level for level in found if level.startswith(NESTED))
        matrices = (self._level(lv) for lv in (*(v for v in LEAF_LEVELS if v in found), *nested))
        object.__setattr__(self, "levels", tuple(m for m in matrices if m.programs))

    @property
    def programs(self) -> tuple[str, ...]:
        """Every program some survey has, in the newest survey's order, then the ones only
        older surveys have."""
        names: dict[str, None] = {}
        for survey in reversed(self.surveys):
            names.update((p.name, None) for p in survey.programs)
        return tuple(n for n in names if not self.only or n in self.only)

    def _level(self, level: str) -> HistoryLevel:
        """A level's matrix: the programs that have the level in some release (every
        program, for a leaf level)."""
        rows = (self._row(name, level) for name in self.programs)
        return HistoryLevel(level, tuple(
            row for row in rows
            if not level.startswith(NESTED)
            or any(c.mark not in ("none", "unavailable", "absent") for c in row.cells)
        ))  # fmt: skip

    def _row(self, name: str, level: str) -> ProgramHistory:
        cells = tuple(_history_cell(s, name, level) for s in self.surveys)
        runs: list[Run] = []
        for cell in cells:
            if runs and runs[-1].mark == cell.mark:
                runs[-1] = Run(cell.mark, runs[-1].first, cell.release)
            else:
                runs.append(Run(cell.mark, cell.release, cell.release))
        return ProgramHistory(name, cells, tuple(runs))


def _history_cell(survey: Survey, name: str, level: str) -> HistoryCell:
    """A program's level in one release's survey."""
    release = survey.jax_version
    program = survey.program(name)
    if program is None:
        return HistoryCell(release, "absent", "")
    if program.unavailable is not None:
        return HistoryCell(release, "unavailable", "not available")
    verdict = program.verdict(level)
    found = program.cell(level)
    if verdict == "failed":
        return HistoryCell(release, "failed", "failed")
    if verdict is not None and found is not None:
        return HistoryCell(release, verdict, found.summary)
    own = program.own(level)
    return (
        HistoryCell(release, "own", f"JAX's own {own}") if own else HistoryCell(release, "none", "")
    )


def history(surveys: Iterable[Survey], only: tuple[str, ...] = ()) -> History:
    """The surveys side by side, oldest release first."""
    return History(tuple(sorted(surveys, key=lambda s: release_key(s.jax_version))), only)
