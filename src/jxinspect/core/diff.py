"""The diff: what changed between two reports of the same functions, judged by a gate.

Plain data, as :mod:`jxinspect.core.model` is: :mod:`jxinspect.compare.diff` makes it
(leaves matched, changes graded), the renderers draw it, and :mod:`jxinspect.core.codec`
writes it as schema ``jxinspect.diff/1``. A :class:`DiffReport` holds every target's diff
and its gate (``fail_on``, ``allow``); each change's ``failing``, and every count, are
derived from them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields, replace
from typing import Literal, get_args

import msgspec
import msgspec.structs

from jxinspect.core.cost_diff import CostDiff
from jxinspect.core.display import Displayed
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Report, Severity, at_or_above
from jxinspect.core.profile_diff import ProfileDiff
from jxinspect.core.recording import RunGuard
from jxinspect.core.vocabulary import Partitioner, Reached, Stage

DIFF_SCHEMA: Literal["jxinspect.diff/1"] = "jxinspect.diff/1"

Verdict = Literal["regression", "improvement", "neutral"]
ChangeClass = Literal[
    "name", "path", "leaf", "shape", "sharding", "donation", "pruned", "nested", "finding",
    "static", "stage", "collective", "memory", "flops", "time",
]  # fmt: skip
CHANGE_CLASSES: tuple[str, ...] = get_args(ChangeClass)
ChangeKind = Literal[
    "lost", "degraded", "recovered", "improved", "renamed", "changed", "added", "removed",
    "dropped", "moved", "pruned", "unpruned", "more", "fewer", "grew", "shrank", "unread",
]  # fmt: skip
Where = Literal[
    "target", "input", "output", "static", "nested", "finding", "collective", "memory", "flops",
    "time",
]  # fmt: skip
MatchedBy = Literal["path", "position"]


class Change(msgspec.Struct, frozen=True, kw_only=True, rename={"category": "class"}):
    """One difference between the before and the after report (a msgspec ``Struct``, the
    one result type that is not a dataclass: its JSON key ``class`` is a Python keyword)."""

    category: ChangeClass
    """What changed (``class`` in JSON; ``--allow CLASS`` accepts it)."""
    kind: ChangeKind
    """How: ``lost``, ``degraded``, ``renamed``, ``changed``, ``dropped``…"""
    verdict: Verdict
    severity: Severity | None
    """How bad a regression is (``None`` for improvements and neutral changes)."""
    where: Where
    path: str
    """The leaf's path, a static argument, a nested jaxpr, a finding code or a field."""
    before: str | None
    after: str | None
    matched_by: MatchedBy | None = None
    """How an argument or result was paired: by ``path``, or by ``position`` and type."""
    message: str = ""
    """One line: ``argument x: name degraded: x → flat_args[0]`` (derived)."""
    failing: bool = False
    """The gate fails on it (set by the :class:`DiffReport` that holds it)."""

    def __post_init__(self) -> None:
        what = {"input": "argument ", "output": "result ", "static": "static argument ",
                "nested": "nested jaxpr ", "finding": "", "target": "", "collective": "",
                "memory": "", "flops": "", "time": ""}[self.where]  # fmt: skip
        label = "findings" if self.category == "finding" else self.category
        values = f"{_show(self.before)} → {_show(self.after)}"
        if self.matched_by == "position":
            values += " (matched by position and type)"
        line = f"{what}{self.path}: {label} {self.kind}: {values}"
        msgspec.structs.force_setattr(self, "message", line)


def _show(value: str | None) -> str:
    return "—" if value is None else value


@dataclass(frozen=True)
class Side:
    """What one side's report says about itself, for the header."""

    target: str
    function: str | None
    stage: Stage | None
    """``None``: not recorded (read from a program text)."""
    reached: Reached
    jax_version: str | None
    platform: str | None
    num_devices: int
    mesh: str | None
    partitioner: Partitioner
    inputs: int
    named_inputs: int
    outputs: int
    named_outputs: int
    error: str | None = None
    topology: str | None = None
    """The TPU topology it was compiled for (``--topology``), as the report says it."""
    axis_types: str | None = None
    """:attr:`mesh`'s axis types in words (``Explicit``, ``data Explicit, model Auto``);
    ``None`` where the report does not say them."""
    other_meshes: tuple[str, ...] = ()
    """Every other mesh the program's arguments and results are laid out over."""

    @classmethod
    def of(cls, report: Report) -> Side:
        return cls(
            target=report.target,
            function=report.function,
            stage=report.stage,
            reached=report.reached,
            jax_version=report.jax_version,
            platform=report.platform,
            num_devices=report.num_devices,
            mesh=str(report.mesh) if report.mesh is not None else None,
            partitioner=report.partitioner,
            inputs=len(report.inputs),
            named_inputs=sum(leaf.status == "ok" for leaf in report.inputs),
            outputs=len(report.outputs),
            named_outputs=sum(leaf.status == "ok" for leaf in report.outputs),
            error=report.error,
            topology=str(report.topology) if report.topology is not None else None,
            axis_types=report.mesh.typed(report.axis_types) if report.mesh else None,
            other_meshes=tuple(
                dict.fromkeys(str(m) for m in report.meshes if str(m) != str(report.mesh))
            ),
        )


@dataclass(frozen=True)
class Gate:
    """The gate: regressions at or above ``fail_on`` fail, except the classes allowed."""

    fail_on: Severity | None = "error"
    """``None``: never fail."""
    allow: frozenset[str] = frozenset()

    def fails(self, change: Change) -> bool:
        return (
            change.verdict == "regression"
            and change.severity is not None
            and at_or_above(change.severity, self.fail_on)
            and change.category not in self.allow
        )


@dataclass(frozen=True)
class Counts:
    """How many changes of each verdict, and how many of them fail the gate."""

    regressions: int = 0
    failing: int = 0
    improvements: int = 0
    neutral: int = 0


@dataclass(frozen=True)
class Unchanged:
    """Arguments and results matched on both sides with nothing changed."""

    inputs: int = 0
    outputs: int = 0


@dataclass(frozen=True)
class TargetDiff:
    """The changes for one target, regressions first."""

    name: str
    before: Side
    after: Side
    summary: Counts = field(init=False, default_factory=Counts, compare=False)
    """Its changes counted (derived, under the gate of the :class:`DiffReport`)."""
    unchanged: Unchanged = field(default_factory=Unchanged)
    changes: tuple[Change, ...] = ()
    program: ProgramComparison | None = None
    """Two recordings: the two lowerings' programs compared (the same program: JAX's
    persistent cache can hit); ``None`` for other inputs."""
    cost: CostDiff | None = None
    """``--compile``: the compiled cost per device before → after; ``None`` without."""
    profile: ProfileDiff | None = None
    """Both sides measured (``profile`` reports, or ``--profile``): the step's time by
    line and by collective before → after; ``None`` otherwise."""

    def __post_init__(self) -> None:
        verdicts = Counter(c.verdict for c in self.changes)
        counts = Counts(verdicts["regression"], sum(c.failing for c in self.changes),
                        verdicts["improvement"], verdicts["neutral"])  # fmt: skip
        object.__setattr__(self, "summary", counts)

    def of_verdict(self, verdict: Verdict) -> list[Change]:
        return [c for c in self.changes if c.verdict == verdict]

    def judged(self, gate: Gate) -> TargetDiff:
        """The same diff with each change's ``failing`` said by ``gate``."""
        changes = tuple(msgspec.structs.replace(c, failing=gate.fails(c)) for c in self.changes)
        return replace(self, changes=changes)


Never = Literal["never"]


@dataclass(frozen=True, kw_only=True, repr=False)
class DiffReport(Displayed):
    """Every target's diff, what was compared, and the gate."""

    product = "diff"

    schema: Literal["jxinspect.diff/1"] = field(init=False, default_factory=lambda: DIFF_SCHEMA)
    before: str
    """The before input as given (a file, a target, a report, StableHLO text)."""
    after: str
    fail_on: Severity | Never = "error"
    """The gate: regressions at or above it fail."""
    allow: tuple[str, ...] = ()
    """Change classes that never fail (``--allow``), sorted."""
    failed: bool = field(init=False, default=False)
    """Some change fails the gate (derived)."""
    summary: Counts = field(init=False, default_factory=Counts)
    """Every target's changes counted (derived)."""
    targets: tuple[TargetDiff, ...] = ()
    only_before: tuple[str, ...] = ()
    """Record folders: functions recorded before and not after (listed, never failing:
    a function the run no longer lowers lost no debug info)."""
    only_after: tuple[str, ...] = ()
    """Record folders: functions recorded after and not before."""
    findings: tuple[Finding, ...] = ()
    """Record folders: the comparison rules' findings (JX404: the same function with the
    same inputs lowered to different programs, in the two runs or within one)."""
    guard_before: RunGuard | None = None
    """A process's folder of a guarded run (``record --guard``): what the guard checked
    and found in the before run (``None``: not such a folder)."""
    guard_after: RunGuard | None = None
    """The same, of the after run."""

    def __post_init__(self) -> None:
        gate = self.gate
        targets = tuple(t.judged(gate) for t in self.targets)
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "allow", tuple(sorted(self.allow)))
        total = Counts(*(sum(getattr(t.summary, f.name) for t in targets)
                         for f in fields(Counts)))  # fmt: skip
        object.__setattr__(self, "summary", total)
        failing = any(at_or_above(f.severity, gate.fail_on) for f in self.findings)
        object.__setattr__(self, "failed", total.failing > 0 or failing)

    @property
    def gate(self) -> Gate:
        return Gate(None if self.fail_on == "never" else self.fail_on, frozenset(self.allow))

    @property
    def failing(self) -> list[Change]:
        return [c for t in self.targets for c in t.changes if c.failing]

    @property
    def regressions(self) -> list[Change]:
        """Every regression, failing or not, of every target."""
        return [c for t in self.targets for c in t.of_verdict("regression")]
