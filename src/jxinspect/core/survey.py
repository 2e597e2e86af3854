"""The survey: what one JAX release keeps of the debug info, transformation by
transformation, as plain frozen dataclasses.

``jxinspect survey`` stages a built-in corpus of small programs (one per transformation)
and grades, for each, every level that carries names: the top jaxpr's argument names and
result paths, each kind of nested jaxpr, and ``@main``'s arguments and results. A level of
a program is a :class:`Cell` with the count of each :data:`Outcome`. Its JSON form
(schema ``jxinspect.survey/1``) is what ``diff-debug`` compares across releases and what
the findings' "fixed in" advice is read from (the surveys shipped in ``jxinspect/surveys``).
This module never imports JAX.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from jxinspect.core.display import Displayed
from jxinspect.core.model import Report
from jxinspect.core.vocabulary import Reached, Stage, release_key

SCHEMA = "jxinspect.survey/1"

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
    counts: tuple[tuple[Outcome, int], ...]
    """Each outcome that occurred and how often, best first."""
    shape: str | None = None
    """The program shape findings are advised by (``nested:scan``, ``pmap:args``)."""
    examples: tuple[str, ...] = ()
    """A few names that were not kept, ``params['w'] → flat_args[0]``, for a person."""

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)

    @property
    def verdict(self) -> Outcome:
        """The worst outcome (``kept`` when all were kept)."""
        return max((o for o, n in self.counts if n), key=rank, default="kept")

    def count(self, outcome: Outcome) -> int:
        return dict(self.counts).get(outcome, 0)

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "verdict": self.verdict,
            "total": self.total,
            "counts": {outcome: n for outcome, n in self.counts},
            "shape": self.shape,
            "examples": list(self.examples),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cell:
        counts = data.get("counts", {})
        return cls(
            level=data["level"],
            counts=tuple((o, int(counts[o])) for o in OUTCOMES if counts.get(o)),
            shape=data.get("shape"),
            examples=tuple(data.get("examples", [])),
        )


@dataclass(frozen=True)
class SurveyProgram:
    """One program of the corpus, as the surveyed release staged it."""

    name: str
    """The corpus function, named after the transformation it exercises."""
    stage: Stage
    reached: Reached
    cells: tuple[Cell, ...] = ()
    error: str | None = None
    """Why it did not stage (then it has no cells: every level counts as ``failed``)."""
    reads: str | None = None
    """The jaxpr whose debug info the ``jaxpr.*`` levels read, where it is not the traced
    function's own (``jit(f).trace()``'s): pmap's, in ``make_jaxpr(pmap(f))``."""
    jax_own: tuple[tuple[str, int], ...] = ()
    """Nested jaxprs of JAX's own functions (``jnp.clip``'s jit), by primitive: found,
    and not counted in the nested levels (their names are not the user's)."""
    unavailable: str | None = None
    """The public API this release lacks (``jax.custom_transpose``, removed in JAX 0.10):
    the program was not staged (``reached`` is ``failed``, and it has no cells), and it is
    no failure of the release."""

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
        return dict(self.jax_own).get(level.removeprefix(NESTED), 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "stage": self.stage,
            "reached": self.reached,
            "error": self.error,
            "unavailable": self.unavailable,
            "reads": self.reads,
            "jax_own": {primitive: n for primitive, n in self.jax_own},
            "cells": [c.to_dict() for c in self.cells],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SurveyProgram:
        own = data.get("jax_own") or {}
        return cls(
            name=data["name"],
            stage=data["stage"],
            reached=data["reached"],
            cells=tuple(Cell.from_dict(c) for c in data.get("cells", [])),
            error=data.get("error"),
            reads=data.get("reads"),
            jax_own=tuple((str(p), int(own[p])) for p in sorted(own)),
            unavailable=data.get("unavailable"),
        )


@dataclass(frozen=True, repr=False)
class Survey(Displayed):
    """What one JAX release kept of the debug info of every program of the corpus."""

    product = "survey"

    jax_version: str
    jaxlib_version: str
    platform: str
    partitioner: str
    programs: tuple[SurveyProgram, ...]

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
        nested |= {NESTED + primitive for p in self.programs for primitive, _ in p.jax_own}
        compiled = any(c.level == COMPILED for p in self.programs for c in p.cells)
        leaves = (lv for lv in LEAF_LEVELS if compiled or lv != COMPILED)
        return (*leaves, *sorted(nested))

    def program(self, name: str) -> SurveyProgram | None:
        return next((p for p in self.programs if p.name == name), None)

    def cells_of_shape(self, shape: str) -> list[tuple[str, Cell]]:
        """Each program's cell of this program shape, with the program's name."""
        return [(p.name, c) for p in self.programs for c in p.cells if c.shape == shape]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "jax_version": self.jax_version,
            "jaxlib_version": self.jaxlib_version,
            "platform": self.platform,
            "partitioner": self.partitioner,
            "programs": [p.to_dict() for p in self.programs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Survey:
        """Read back :meth:`to_dict`'s output (``KeyError``/``TypeError`` if it is not one)."""
        if data.get("schema") != SCHEMA:
            raise KeyError(f"schema {data.get('schema')!r} is not {SCHEMA}")
        return cls(
            jax_version=data["jax_version"],
            jaxlib_version=data["jaxlib_version"],
            platform=data["platform"],
            partitioner=data["partitioner"],
            programs=tuple(SurveyProgram.from_dict(p) for p in data["programs"]),
        )


HISTORY_SCHEMA = "jxinspect.survey-history/1"

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

    def to_dict(self) -> dict[str, Any]:
        return {"release": self.release, "mark": self.mark, "text": self.text}


@dataclass(frozen=True)
class Run:
    """Consecutive releases whose cell of a program's level has the same mark."""

    mark: Mark
    first: str
    last: str

    @property
    def releases(self) -> str:
        """``0.4.35–0.4.38``, or ``0.5.3`` for one."""
        return self.first if self.first == self.last else f"{self.first}–{self.last}"


@dataclass(frozen=True, repr=False)
class History(Displayed):
    """The surveys of several releases side by side (``jxinspect survey --history``, the
    surveys shipped with jxinspect): for each level, a matrix of program × release, oldest
    release first, so that where each transformation's debug info appeared, moved and
    regressed reads in one picture."""

    product = "survey_history"

    surveys: tuple[Survey, ...]
    """Oldest release first."""
    only: tuple[str, ...] = ()
    """Only these programs (``--program``), when given."""

    @property
    def releases(self) -> tuple[str, ...]:
        return tuple(s.jax_version for s in self.surveys)

    @property
    def programs(self) -> tuple[str, ...]:
        """Every program some survey has, in the newest survey's order, then the ones only
        older surveys have."""
        names: dict[str, None] = {}
        for survey in reversed(self.surveys):
            names.update((p.name, None) for p in survey.programs)
        return tuple(n for n in names if not self.only or n in self.only)

    @property
    def levels(self) -> tuple[str, ...]:
        """Every level some survey shows (``compiled.args`` only where one was compiled)
        that one of the programs has."""
        found = {level for s in self.surveys for level in s.shown_levels}
        nested = sorted(level for level in found if level.startswith(NESTED))
        levels = (*(lv for lv in LEAF_LEVELS if lv in found), *nested)
        return tuple(level for level in levels if self.rows(level))

    def cell(self, survey: Survey, name: str, level: str) -> HistoryCell:
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
            HistoryCell(release, "own", f"JAX's own {own}")
            if own
            else HistoryCell(release, "none", "")
        )

    def row(self, name: str, level: str) -> tuple[HistoryCell, ...]:
        """A program's cells of a level, one per release, oldest first."""
        return tuple(self.cell(s, name, level) for s in self.surveys)

    def rows(self, level: str) -> tuple[str, ...]:
        """The programs a level's matrix has: those that have the level in some release
        (every program, for a leaf level)."""
        return tuple(
            name
            for name in self.programs
            if not level.startswith(NESTED)
            or any(c.mark not in ("none", "unavailable", "absent") for c in self.row(name, level))
        )

    def runs(self, name: str, level: str) -> tuple[Run, ...]:
        """A program's level as runs of releases with one mark each (``missing`` from
        0.4.35 to 0.4.38, then ``wrong``...)."""
        runs: list[Run] = []
        for cell in self.row(name, level):
            if runs and runs[-1].mark == cell.mark:
                runs[-1] = Run(cell.mark, runs[-1].first, cell.release)
            else:
                runs.append(Run(cell.mark, cell.release, cell.release))
        return tuple(runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": HISTORY_SCHEMA,
            "releases": list(self.releases),
            "levels": [
                {
                    "level": level,
                    "programs": [
                        {
                            "program": name,
                            "cells": [c.to_dict() for c in self.row(name, level)],
                            "runs": [
                                {"mark": r.mark, "first": r.first, "last": r.last}
                                for r in self.runs(name, level)
                            ],
                        }
                        for name in self.rows(level)
                    ],
                }
                for level in self.levels
            ],
        }


def history(surveys: Iterable[Survey], only: tuple[str, ...] = ()) -> History:
    """The surveys side by side, oldest release first."""
    return History(tuple(sorted(surveys, key=lambda s: release_key(s.jax_version))), only)
