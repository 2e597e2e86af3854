"""What changed between two reports of one function: names, result paths, shardings,
donation, pruning, nested debug info and findings; and whether it got worse.

No JAX here. :func:`diff_reports` compares a before and an after :class:`Report` into a
:class:`TargetDiff`, a list of :class:`Change` s. Leaves are matched by path; those left
over (a name lost under another JAX version, a renamed parameter, a result read from
StableHLO text) are matched by position, shape and dtype, so a lost name reads as
*lost*, not as *removed* + *added*. A :class:`DiffReport` holds every target's diff and
the gate (:class:`Policy`: ``--fail-on`` and ``--allow``) that decides the exit code;
its JSON form is schema ``jxinspect.diff/1``.

Only what both sides know is compared: a report read from StableHLO text (stage
``None``, no jaxpr) has no static arguments or nested jaxprs to compare.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal, TypeVar, get_args

from jxinspect.core.display import Displayed
from jxinspect.core.model import (
    Input,
    NestedJaxpr,
    Output,
    Report,
    Severity,
    Sharding,
    at_or_above,
)
from jxinspect.core.units import type_text
from jxinspect.core.vocabulary import Partitioner, Reached, Stage

DIFF_SCHEMA = "jxinspect.diff/1"

Verdict = Literal["regression", "improvement", "neutral"]
ChangeClass = Literal[
    "name", "path", "leaf", "shape", "sharding", "donation", "pruned", "nested", "finding",
    "static", "stage",
]  # fmt: skip
CHANGE_CLASSES: tuple[str, ...] = get_args(ChangeClass)
ChangeKind = Literal[
    "lost", "degraded", "recovered", "improved", "renamed", "changed", "added", "removed",
    "dropped", "moved", "pruned", "unpruned", "more", "fewer",
]  # fmt: skip
Where = Literal["target", "input", "output", "static", "nested", "finding"]
MatchedBy = Literal["path", "position"]

VERDICT_ORDER: dict[str, int] = {"regression": 0, "improvement": 1, "neutral": 2}
_NAME_RANK: dict[str, int] = {"ok": 2, "synthetic": 1, "mismatch": 1, "renamed": 1, "missing": 0}
_QUALITY_RANK: dict[str, int] = {"ok": 0, "partial": 1, "count_mismatch": 2, "missing": 3}
_REACHED_RANK: dict[str, int] = {"failed": 0, "traced": 1, "lowered": 2, "compiled": 2}


@dataclass(frozen=True)
class Change:
    """One difference between the before and the after report."""

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

    @property
    def message(self) -> str:
        """One line: ``argument x: name degraded: x → flat_args[0]``."""
        what = {"input": "argument ", "output": "result ", "static": "static argument ",
                "nested": "nested jaxpr ", "finding": "", "target": ""}[self.where]  # fmt: skip
        label = "findings" if self.category == "finding" else self.category
        text = f"{what}{self.path}: {label} {self.kind}"
        values = f"{_show(self.before)} → {_show(self.after)}"
        if self.matched_by == "position":
            values += " (matched by position and type)"
        return f"{text}: {values}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.category,
            "kind": self.kind,
            "verdict": self.verdict,
            "severity": self.severity,
            "where": self.where,
            "path": self.path,
            "before": self.before,
            "after": self.after,
            "matched_by": self.matched_by,
            "message": self.message,
        }


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
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Policy:
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
class TargetDiff:
    """The changes for one target, regressions first."""

    name: str
    before: Side
    after: Side
    changes: tuple[Change, ...]
    unchanged_inputs: int = 0
    """Arguments matched on both sides with nothing changed."""
    unchanged_outputs: int = 0

    def of_verdict(self, verdict: Verdict) -> list[Change]:
        return [c for c in self.changes if c.verdict == verdict]

    def counts(self, policy: Policy) -> dict[str, int]:
        return {
            "regressions": len(self.of_verdict("regression")),
            "failing": sum(policy.fails(c) for c in self.changes),
            "improvements": len(self.of_verdict("improvement")),
            "neutral": len(self.of_verdict("neutral")),
        }

    def to_dict(self, policy: Policy) -> dict[str, Any]:
        return {
            "name": self.name,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "summary": self.counts(policy),
            "unchanged": {"inputs": self.unchanged_inputs, "outputs": self.unchanged_outputs},
            "changes": [{**c.to_dict(), "failing": policy.fails(c)} for c in self.changes],
        }


@dataclass(frozen=True, repr=False)
class DiffReport(Displayed):
    """Every target's diff, what was compared, and the gate."""

    product = "diff"

    before: str
    """The before input as given (a file, a target, a report, StableHLO text)."""
    after: str
    targets: tuple[TargetDiff, ...]
    policy: Policy = field(default_factory=Policy)
    only_before: tuple[str, ...] = ()
    """Record folders: functions recorded before and not after (listed, never failing:
    a function the run no longer lowers lost no debug info)."""
    only_after: tuple[str, ...] = ()
    """Record folders: functions recorded after and not before."""

    @property
    def failing(self) -> list[Change]:
        return [c for t in self.targets for c in t.changes if self.policy.fails(c)]

    @property
    def failed(self) -> bool:
        return bool(self.failing)

    @property
    def regressions(self) -> list[Change]:
        """Every regression, failing or not, of every target."""
        return [c for t in self.targets for c in t.of_verdict("regression")]

    def counts(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for target in self.targets:
            total.update(target.counts(self.policy))
        return {key: total[key] for key in ("regressions", "failing", "improvements", "neutral")}

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": DIFF_SCHEMA,
            "before": self.before,
            "after": self.after,
            "fail_on": self.policy.fail_on or "never",
            "allow": sorted(self.policy.allow),
            "failed": self.failed,
            "summary": self.counts(),
            "targets": [t.to_dict(self.policy) for t in self.targets],
            "only_before": list(self.only_before),
            "only_after": list(self.only_after),
        }


# ---- matching --------------------------------------------------------------------------

Leaf = TypeVar("Leaf", Input, Output)


def is_placeholder(path: str) -> bool:
    """``#3`` / ``result#0``: a leaf whose path nobody knows (not matched by path)."""
    return path.startswith("#") or path.startswith("result#")


ALIGN_LIMIT = 1_000_000
"""Above this many before × after leaves left to align, align greedily, not with difflib."""


def align(old: Sequence[Hashable], new: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Order-preserving pairs of positions with equal keys: the common ends, then the
    middle by difflib's longest blocks (or, when huge, each key's next match in order)."""
    short = min(len(old), len(new))
    head = 0
    while head < short and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < short - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    pairs = [(i, i) for i in range(head)]
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    if mid_old and mid_new and len(mid_old) * len(mid_new) <= ALIGN_LIMIT:
        blocks = SequenceMatcher(None, mid_old, mid_new, autojunk=False).get_matching_blocks()
        pairs += [(head + b.a + k, head + b.b + k) for b in blocks for k in range(b.size)]
    elif mid_old and mid_new:
        positions: dict[Hashable, list[int]] = {}
        for j, key in enumerate(mid_new):
            positions.setdefault(key, []).append(j)
        last = -1
        for i, key in enumerate(mid_old):
            found = positions.get(key, [])
            k = bisect_right(found, last)
            if k < len(found):
                last = found[k]
                pairs.append((head + i, head + last))
    pairs += [(len(old) - tail + k, len(new) - tail + k) for k in range(tail)]
    return pairs


def match_leaves(
    before: Sequence[Leaf], after: Sequence[Leaf]
) -> tuple[list[tuple[Leaf, Leaf, MatchedBy]], list[Leaf], list[Leaf]]:
    """Pairs (by path, then the rest in order by shape and dtype), removed, added."""
    by_path: dict[str, list[int]] = {}
    for j, leaf in enumerate(after):
        if not is_placeholder(leaf.path):
            by_path.setdefault(leaf.path, []).append(j)
    pairs: list[tuple[Leaf, Leaf, MatchedBy]] = []
    used: set[int] = set()
    rest_before: list[Leaf] = []
    for leaf in before:
        candidates = by_path.get(leaf.path) if not is_placeholder(leaf.path) else None
        if candidates:
            j = candidates.pop(0)
            used.add(j)
            pairs.append((leaf, after[j], "path"))
        else:
            rest_before.append(leaf)
    rest_after = [leaf for j, leaf in enumerate(after) if j not in used]
    aligned = align(
        [(leaf.shape, leaf.dtype) for leaf in rest_before],
        [(leaf.shape, leaf.dtype) for leaf in rest_after],
    )
    pairs += [(rest_before[i], rest_after[j], "position") for i, j in aligned]
    matched_before, matched_after = {i for i, _ in aligned}, {j for _, j in aligned}
    pairs.sort(key=lambda pair: (pair[0].index, pair[1].index))
    removed = [leaf for i, leaf in enumerate(rest_before) if i not in matched_before]
    added = [leaf for j, leaf in enumerate(rest_after) if j not in matched_after]
    return pairs, removed, added


# ---- comparing -------------------------------------------------------------------------

Grade = tuple[Verdict, Severity | None]
ERROR: Grade = ("regression", "error")
WARNING: Grade = ("regression", "warning")
BETTER: Grade = ("improvement", None)
NEUTRAL: Grade = ("neutral", None)


@dataclass(frozen=True)
class _At:
    """Where changes are found; calling it makes one there."""

    where: Where
    path: str
    matched: MatchedBy | None = None

    def __call__(
        self, category: ChangeClass, kind: ChangeKind, grade: Grade, old: Any, new: Any
    ) -> Change:
        verdict, severity = grade
        return Change(
            category, kind, verdict, severity, self.where, self.path, old, new, self.matched
        )


def _name_change(at: _At, before: Input | Output, after: Input | Output) -> Change | None:
    """Lost / degraded / recovered / renamed: the name (argument) or path (result)."""
    if before.name == after.name:
        return None
    if before.status == after.status == "ok" and before.path == after.path:
        return None  # one name spelled by two releases (['y'] / result['y'], [<flat index 0>])
    category: ChangeClass = "name" if at.where == "input" else "path"
    rank_b, rank_a = _NAME_RANK[before.status], _NAME_RANK[after.status]
    if rank_a < rank_b:
        kind: ChangeKind = "lost" if after.status == "missing" else "degraded"
        return at(category, kind, ERROR, before.name, after.name)
    if rank_a > rank_b:
        kind = "recovered" if after.status == "ok" else "improved"
        return at(category, kind, BETTER, before.name, after.name)
    kind = "renamed" if after.status == "ok" else "changed"
    return at(category, kind, NEUTRAL, before.name, after.name)


def _same_sharding(a: Sharding | None, b: Sharding | None) -> bool:
    if a is None or b is None:
        return a is b
    if a.tiles or b.tiles or a.mesh is None or b.mesh is None:
        # One side has tile counts only (GSPMD without a mesh): compare the layout.
        return (a.kind, a.pieces(), a.replicas) == (b.kind, b.pieces(), b.replicas)
    return (a.kind, a.spec, str(a.mesh), a.replicas) == (b.kind, b.spec, str(b.mesh), b.replicas)


def _sharding_text(sharding: Sharding | None, with_mesh: bool, suffix: str) -> str | None:
    if sharding is None:
        return None
    mesh = f" on {sharding.mesh}" if with_mesh and sharding.mesh is not None else ""
    return sharding.readable + mesh + suffix


def _sharding_changes(at: _At, before: Input | Output, after: Input | Output) -> Iterator[Change]:
    """Declared shardings, and compiled ones when both sides have them."""
    compared = [(before.sharding, after.sharding, "")]
    compiled = getattr(before, "compiled_sharding", None), getattr(after, "compiled_sharding", None)
    if all(isinstance(s, Sharding) for s in compiled):
        compared.append((compiled[0], compiled[1], " (compiled)"))
    for old, new, suffix in compared:
        if not _same_sharding(old, new):
            meshes = old is not None and new is not None and str(old.mesh) != str(new.mesh)
            yield at(
                "sharding",
                "changed",
                ERROR,
                _sharding_text(old, meshes, suffix),
                _sharding_text(new, meshes, suffix),
            )


def donation_text(leaf: Input) -> str | None:
    """``aliased → out 3``, ``donor``, ``requested, unused`` or ``None``."""
    if leaf.aliased_output is not None:
        return f"aliased → out {leaf.aliased_output}"
    if leaf.buffer_donor:
        return "donor"
    return "requested, unused" if leaf.donated else None


def _donation_change(at: _At, before: Input, after: Input) -> Change | None:
    """Dropped (no longer aliased or a donor), added, or changed (e.g. another output)."""
    old, new = donation_text(before), donation_text(after)
    if old == new:
        return None
    effective_b = before.aliased_output is not None or before.buffer_donor
    effective_a = after.aliased_output is not None or after.buffer_donor
    if effective_b and not effective_a:
        return at("donation", "dropped", ERROR, old, new)
    if effective_a and not effective_b:
        return at("donation", "added", BETTER, old, new)
    return at("donation", "changed", NEUTRAL, old, new)


def _leaf_changes(at: _At, before: Input | Output, after: Input | Output) -> list[Change]:
    pruned_b, pruned_a = before.status == "pruned", after.status == "pruned"
    changes: list[Change | None] = []
    if pruned_a and not pruned_b:
        changes.append(at("pruned", "pruned", WARNING, before.name, None))
    elif pruned_b and not pruned_a:
        changes.append(at("pruned", "unpruned", BETTER, None, after.name))
    elif not pruned_b:
        changes.append(_name_change(at, before, after))
    if (before.shape, before.dtype) != (after.shape, after.dtype):
        changes.append(
            at(
                "shape",
                "changed",
                NEUTRAL,
                type_text(before.shape, before.dtype),
                type_text(after.shape, after.dtype),
            )
        )
    if not (pruned_a or pruned_b):
        changes.extend(_sharding_changes(at, before, after))
    if isinstance(before, Input) and isinstance(after, Input):
        changes.append(_donation_change(at, before, after))
    return [c for c in changes if c is not None]


def _leaf_text(leaf: Input | Output) -> str:
    name = leaf.name if leaf.name is not None else "no name"
    return f"{type_text(leaf.shape, leaf.dtype)} {name}"


def _leaves(
    before: Sequence[Leaf], after: Sequence[Leaf], where: Where
) -> tuple[list[Change], int]:
    """Changes of the matched leaves, then removed and added ones; and how many are the same."""
    pairs, removed, added = match_leaves(before, after)
    changes: list[Change] = []
    unchanged = 0
    for old, new, matched in pairs:
        label = new.path if is_placeholder(old.path) else old.path
        found = _leaf_changes(_At(where, label, matched), old, new)
        changes.extend(found)
        unchanged += not found
    for leaf in removed:
        changes.append(_At(where, leaf.path)("leaf", "removed", NEUTRAL, _leaf_text(leaf), None))
    for leaf in added:
        at = _At(where, leaf.path)
        if leaf.status in ("missing", "synthetic"):
            # unpaired or not, a leaf that carries no real name lost it (e.g. two .mlir
            # files of jit and the older pmap, whose shapes pair nothing)
            kind: ChangeKind = "lost" if leaf.status == "missing" else "degraded"
            category: ChangeClass = "name" if where == "input" else "path"
            changes.append(at(category, kind, ERROR, None, _leaf_text(leaf)))
        else:
            changes.append(at("leaf", "added", NEUTRAL, None, _leaf_text(leaf)))
    return changes, unchanged


def _static_changes(before: Report, after: Report) -> Iterator[Change]:
    if None in (before.stage, after.stage):
        return  # StableHLO text does not say
    old = {s.path: s for s in before.static_args}
    new = {s.path: s for s in after.static_args}

    def place(position: int | None) -> str:
        return "keyword" if position is None else f"position {position}"

    for path, arg in old.items():
        at = _At("static", path)
        other = new.get(path)
        if other is None:
            yield at("static", "removed", NEUTRAL, arg.value, None)
            continue
        if arg.position != other.position:
            yield at("static", "moved", NEUTRAL, place(arg.position), place(other.position))
        if arg.value != other.value:
            yield at("static", "changed", NEUTRAL, arg.value, other.value)
    for path, arg in new.items():
        if path not in old:
            yield _At("static", path)("static", "added", NEUTRAL, None, arg.value)


def _nested_key(jaxpr: NestedJaxpr) -> str:
    """``3:scan.jaxpr/0:pjit.jaxpr`` → ``scan.jaxpr/pjit.jaxpr``: equation indices shift."""
    return "/".join(part.split(":", 1)[-1] for part in jaxpr.where.split("/"))


def _keyed_jaxprs(report: Report) -> dict[str, NestedJaxpr]:
    """The top-level and nested jaxprs by place without indices (``scan.jaxpr #2``)."""
    seen: Counter[str] = Counter()
    result = {}
    for jaxpr in ([report.jaxpr] if report.jaxpr else []) + list(report.nested):
        key = "top" if jaxpr is report.jaxpr else _nested_key(jaxpr)
        seen[key] += 1
        result[key + (f" #{seen[key]}" if seen[key] > 1 else "")] = jaxpr
    return result


def _meaning(jaxpr: NestedJaxpr) -> tuple[Any, ...]:
    """What a nested jaxpr is, wherever it sits: the same scan body under ``jit`` and
    under pmap's ``shard_map``/``xla_pmap`` wrapper has the same meaning."""
    place = _nested_key(jaxpr).rsplit("/", 1)[-1]
    return (place, jaxpr.primitive, jaxpr.func_src_info, jaxpr.arg_names, jaxpr.result_paths,
            jaxpr.num_invars, jaxpr.num_outvars)  # fmt: skip


def _paired_jaxprs(
    before: Report, after: Report
) -> tuple[
    list[tuple[str, NestedJaxpr, NestedJaxpr]], dict[str, NestedJaxpr], dict[str, NestedJaxpr]
]:
    """Nested jaxprs paired by place, then the rest by meaning (a staging API that wraps
    the program, jit → pmap, moves every place); and those left on each side."""
    old, new = _keyed_jaxprs(before), _keyed_jaxprs(after)
    pairs = [(key, jaxpr, new[key]) for key, jaxpr in old.items() if key in new]
    old_rest = {k: v for k, v in old.items() if k not in new}
    new_rest = {k: v for k, v in new.items() if k not in old}
    for key, jaxpr in list(old_rest.items()):
        match = next((k for k, v in new_rest.items() if _meaning(v) == _meaning(jaxpr)), None)
        if match is not None:
            pairs.append((key, jaxpr, new_rest.pop(match)))
            del old_rest[key]
    return pairs, old_rest, new_rest


def _nested_changes(before: Report, after: Report) -> Iterator[Change]:
    if None in (before.stage, after.stage) or before.jaxpr is None or after.jaxpr is None:
        return  # no jaxpr on one side: nothing to compare
    pairs, removed, added = _paired_jaxprs(before, after)
    for key, jaxpr, other in pairs:
        at = _At("nested", key)
        rank_b, rank_a = _QUALITY_RANK[jaxpr.quality], _QUALITY_RANK[other.quality]
        if rank_a > rank_b:
            yield at("nested", "degraded", WARNING, jaxpr.quality, other.quality)
        elif rank_a < rank_b:
            yield at("nested", "improved", BETTER, jaxpr.quality, other.quality)
    for key, jaxpr in removed.items():
        if jaxpr.quality != "ok":
            yield _At("nested", key)("nested", "removed", BETTER, jaxpr.quality, None)
    for key, jaxpr in added.items():
        if jaxpr.quality != "ok":
            yield _At("nested", key)("nested", "added", WARNING, None, jaxpr.quality)


def _finding_changes(before: Report, after: Report) -> Iterator[Change]:
    """Finding counts by code; more of a code is a regression of that code's severity."""
    old = Counter(f.code for f in before.findings)
    new = Counter(f.code for f in after.findings)
    severity = {f.code: f.severity for f in (*before.findings, *after.findings)}
    for code in sorted(old.keys() | new.keys()):
        at, counts = _At("finding", code), (str(old[code]), str(new[code]))
        if new[code] > old[code]:
            yield at("finding", "more", ("regression", severity[code]), *counts)
        elif new[code] < old[code]:
            yield at("finding", "fewer", BETTER, *counts)


def _target_changes(before: Report, after: Report) -> Iterator[Change]:
    """Stage, how far staging got, and the mesh."""
    if None not in (before.stage, after.stage) and before.stage != after.stage:
        yield _At("target", "stage")("stage", "changed", NEUTRAL, before.stage, after.stage)
    rank_b, rank_a = _REACHED_RANK[before.reached], _REACHED_RANK[after.reached]
    reached = _At("target", "reached")
    if rank_a < rank_b:
        yield reached("stage", "degraded", ERROR, before.reached, after.reached)
    elif rank_a > rank_b:
        yield reached("stage", "improved", BETTER, before.reached, after.reached)
    mesh_b = str(before.mesh) if before.mesh else None
    mesh_a = str(after.mesh) if after.mesh else None
    if mesh_b != mesh_a:
        yield _At("target", "mesh")("sharding", "changed", NEUTRAL, mesh_b, mesh_a)


def diff_reports(before: Report, after: Report, name: str | None = None) -> TargetDiff:
    """Every change from ``before`` to ``after``, regressions first."""
    inputs, same_in = _leaves(before.inputs, after.inputs, "input")
    outputs, same_out = _leaves(before.outputs, after.outputs, "output")
    changes = [
        *_target_changes(before, after),
        *inputs,
        *outputs,
        *_static_changes(before, after),
        *_nested_changes(before, after),
        *_finding_changes(before, after),
    ]
    changes.sort(key=lambda c: VERDICT_ORDER[c.verdict])
    return TargetDiff(
        name=name or before.target,
        before=Side.of(before),
        after=Side.of(after),
        changes=tuple(changes),
        unchanged_inputs=same_in,
        unchanged_outputs=same_out,
    )
