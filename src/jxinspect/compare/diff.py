"""What changed between two reports of one function: names, result paths, shardings,
donation, pruning, nested debug info and findings; and whether it got worse.

No JAX here. :func:`diff_reports` compares a before and an after :class:`Report` into a
:class:`~jxinspect.core.diff.TargetDiff`, a list of changes (the types live in
:mod:`jxinspect.core.diff`). Leaves are matched by path; those left
over (a name lost under another JAX version, a renamed parameter, a result read from
StableHLO text) are matched by position, shape and dtype, so a lost name reads as
*lost*, not as *removed* + *added*. A :class:`~jxinspect.core.diff.DiffReport` holds
every target's diff and the gate (``--fail-on`` and ``--allow``) that decides the exit
code; its JSON form is schema ``jxinspect.diff/1``.

Only what both sides know is compared: a report read from StableHLO text (stage
``None``, no jaxpr) has no static arguments or nested jaxprs to compare.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, TypeVar

from jxinspect.compare.cost import cost_changes, diff_cost
from jxinspect.compare.profile import diff_profiles, profile_changes
from jxinspect.core.diff import (
    Change,
    ChangeClass,
    ChangeKind,
    MatchedBy,
    Side,
    TargetDiff,
    Unchanged,
    Verdict,
    Where,
)
from jxinspect.core.model import (
    Input,
    NestedJaxpr,
    NestedQuality,
    Output,
    Report,
    Severity,
    Sharding,
    shard_bytes,
)
from jxinspect.core.units import human_bytes, type_text
from jxinspect.core.vocabulary import Reached, Status
from jxinspect.rules.jx301_unusable_donation import can_take

VERDICT_ORDER: dict[Verdict, int] = {"regression": 0, "improvement": 1, "neutral": 2}
_NAME_RANK: dict[Status, int] = {"ok": 2, "synthetic": 1, "mismatch": 1, "renamed": 1, "missing": 0}
"""How good a name is (a pruned leaf's is compared apart)."""
_QUALITY_RANK: dict[NestedQuality, int] = {"ok": 0, "partial": 1, "count_mismatch": 2, "missing": 3}
_REACHED_RANK: dict[Reached, int] = {"failed": 0, "traced": 1, "lowered": 2, "compiled": 2}
_NO_REAL_NAME: tuple[Status, ...] = ("missing", "synthetic")
"""A leaf of these carries no name of the user's: added so, it lost one."""


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
            category=category, kind=kind, verdict=verdict, severity=severity,
            where=self.where, path=self.path, before=old, after=new, matched_by=self.matched,
        )  # fmt: skip


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


_SIZED_KINDS = ("tiled", "replicated")
"""Layouts whose bytes per device are known from the spec (a manual or maximal one's are
not: judged as before, a change of unknown effect)."""


def per_device_bytes(sharding: Sharding | None, leaf: Input | Output) -> int | None:
    """The bytes one device holds of ``leaf`` laid out by ``sharding`` (the after side's
    shape and dtype, so two layouts compare even where the shape changed too); ``None``
    where the layout or a dimension is not known."""
    if sharding is None or sharding.kind not in _SIZED_KINDS:
        return None
    return shard_bytes(sharding.shard_shape(leaf.shape), leaf.dtype)


def _sharding_text(
    sharding: Sharding | None, with_mesh: bool, suffix: str, size: int | None
) -> str | None:
    if sharding is None:
        return None
    mesh = f" on {sharding.mesh}" if with_mesh and sharding.mesh is not None else ""
    sized = f", {human_bytes(size)} per device" if size is not None else ""
    return sharding.readable + mesh + sized + suffix


def _sharding_grade(old: int | None, new: int | None) -> Grade:
    """A layout judged by its effect: fewer bytes per device better, more worse, the same
    neutral; an error where a side's bytes are not known (not judged: fail closed)."""
    if old is None or new is None:
        return ERROR
    return BETTER if new < old else ERROR if new > old else NEUTRAL


def _sharding_changes(at: _At, before: Input | Output, after: Input | Output) -> Iterator[Change]:
    """Declared shardings, and compiled ones when both sides have them: one change where
    both say the same (the compiled one only where it says something else), graded by
    the bytes per device (the collectives it brings are the compiled cost's to judge)."""
    compared = [(before.sharding, after.sharding, "")]
    compiled = getattr(before, "compiled_sharding", None), getattr(after, "compiled_sharding", None)
    if all(isinstance(s, Sharding) for s in compiled):
        compared.append((compiled[0], compiled[1], " (compiled)"))
    said: set[tuple[str | None, str | None]] = set()
    for old, new, suffix in compared:
        if _same_sharding(old, new):
            continue
        shown = (old.readable if old else None, new.readable if new else None)
        if shown in said:
            continue  # the compiler kept the declared change: one change, said once
        said.add(shown)
        meshes = old is not None and new is not None and str(old.mesh) != str(new.mesh)
        sizes = per_device_bytes(old, after), per_device_bytes(new, after)
        grade = _sharding_grade(*sizes)
        sized = grade != NEUTRAL and None not in sizes
        yield at(
            "sharding",
            "changed",
            grade,
            _sharding_text(old, meshes, suffix, sizes[0] if sized else None),
            _sharding_text(new, meshes, suffix, sizes[1] if sized else None),
        )


def donation_text(leaf: Input) -> str | None:
    """``aliased → out 3``, ``donor``, ``requested, unused`` or ``None``."""
    if leaf.aliased_output is not None:
        return f"aliased → out {leaf.aliased_output}"
    if leaf.buffer_donor:
        return "donor"
    return "requested, unused" if leaf.donated else None


def _donation_change(
    at: _At, before: Input, after: Input, unusable: frozenset[str]
) -> Change | None:
    """Dropped (no longer aliased or a donor), added, or changed (e.g. another output).
    A donation dropped where the before side's compiler could not use it (JX301 on that
    path) is neutral: nothing it did is lost."""
    old, new = donation_text(before), donation_text(after)
    if old == new:
        return None
    effective_b = before.aliased_output is not None or before.buffer_donor
    effective_a = after.aliased_output is not None or after.buffer_donor
    if effective_b and not effective_a:
        grade = NEUTRAL if before.path in unusable else ERROR
        return at("donation", "dropped", grade, old, new)
    if effective_a and not effective_b:
        return at("donation", "added", BETTER, old, new)
    return at("donation", "changed", NEUTRAL, old, new)


def unusable_donations(report: Report) -> frozenset[str]:
    """The paths whose donation the compiler cannot use: the report's JX301 says so, or
    (lowered, where JAX leaves the donation to the compiler) no output has the
    argument's type and per-device shape."""
    found = {f.path for f in report.findings if f.code == "JX301" and f.path}
    found |= {
        leaf.path
        for leaf in report.inputs
        if leaf.buffer_donor and leaf.aliased_output is None and not can_take(leaf, report)
    }
    return frozenset(found)  # fmt: skip


def _leaf_changes(
    at: _At, before: Input | Output, after: Input | Output, unusable: frozenset[str]
) -> list[Change]:
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
        changes.append(_donation_change(at, before, after, unusable))
    return [c for c in changes if c is not None]


def _leaf_text(leaf: Input | Output) -> str:
    name = leaf.name if leaf.name is not None else "no name"
    return f"{type_text(leaf.shape, leaf.dtype)} {name}"


def _leaves(
    before: Sequence[Leaf],
    after: Sequence[Leaf],
    where: Where,
    unusable: frozenset[str] = frozenset(),
) -> tuple[list[Change], int]:
    """Changes of the matched leaves, then removed and added ones; and how many are the same."""
    pairs, removed, added = match_leaves(before, after)
    changes: list[Change] = []
    unchanged = 0
    for old, new, matched in pairs:
        label = new.path if is_placeholder(old.path) else old.path
        found = _leaf_changes(_At(where, label, matched), old, new, unusable)
        changes.extend(found)
        unchanged += not found
    for leaf in removed:
        changes.append(_At(where, leaf.path)("leaf", "removed", NEUTRAL, _leaf_text(leaf), None))
    for leaf in added:
        at = _At(where, leaf.path)
        if leaf.status in _NO_REAL_NAME:
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
    for key, jaxpr in removed.items():  # a change of structure, not of its debug info
        if jaxpr.quality != "ok":
            yield _At("nested", key)("nested", "removed", NEUTRAL, jaxpr.quality, None)
    for key, jaxpr in added.items():
        if jaxpr.quality != "ok":
            yield _At("nested", key)("nested", "added", WARNING, None, jaxpr.quality)


def _finding_changes(before: Report, after: Report) -> Iterator[Change]:
    """Finding counts by code; more of a code is a regression of that code's severity.
    Fewer findings about nested jaxprs where nested jaxprs went away (a ``jax.checkpoint``
    removed) are a change of structure, neutral: nothing was fixed."""
    old = Counter(f.code for f in before.findings)
    new = Counter(f.code for f in after.findings)
    severity = {f.code: f.severity for f in (*before.findings, *after.findings)}
    gone = bool(_paired_jaxprs(before, after)[1]) if before.jaxpr and after.jaxpr else False
    for code in sorted(old.keys() | new.keys()):
        at, counts = _At("finding", code), (str(old[code]), str(new[code]))
        if new[code] > old[code]:
            yield at("finding", "more", ("regression", severity[code]), *counts)
        elif new[code] < old[code]:
            about = [f for f in before.findings if f.code == code]
            nested = all((f.shape or "").startswith("nested:") for f in about)
            yield at("finding", "fewer", NEUTRAL if gone and nested else BETTER, *counts)


def _target_changes(before: Report, after: Report, sides: tuple[Side, Side]) -> Iterator[Change]:
    """Stage, how far staging got, the mesh and its axis types (a leaf laid out over
    another mesh is that leaf's sharding change, naming both meshes)."""
    if None not in (before.stage, after.stage) and before.stage != after.stage:
        yield _At("target", "stage")("stage", "changed", NEUTRAL, before.stage, after.stage)
    rank_b, rank_a = _REACHED_RANK[before.reached], _REACHED_RANK[after.reached]
    reached = _At("target", "reached")
    if rank_a < rank_b:
        yield reached("stage", "degraded", ERROR, before.reached, after.reached)
    elif rank_a > rank_b:
        yield reached("stage", "improved", BETTER, before.reached, after.reached)
    old, new = sides
    if old.mesh != new.mesh:
        yield _At("target", "mesh")("sharding", "changed", NEUTRAL, old.mesh, new.mesh)
    if None not in (old.axis_types, new.axis_types) and old.axis_types != new.axis_types:
        # Auto → Explicit: JAX types every operation over the axes (and writes the
        # constraints that say so); what that does is the compiled cost's to judge
        at = _At("target", "mesh axes")
        yield at("sharding", "changed", NEUTRAL, old.axis_types, new.axis_types)


def diff_reports(
    before: Report,
    after: Report,
    name: str | None = None,
    memory_growth: float | None = None,
    time_growth: float | None = None,
) -> TargetDiff:
    """Every change from ``before`` to ``after``, regressions first; with
    ``memory_growth`` (``--compile``) their compiled cost too, temporaries growing by more
    than that fraction failing; with ``time_growth``, where both sides were measured,
    their measured step (lines and collectives slower by more than it)."""
    inputs, same_in = _leaves(before.inputs, after.inputs, "input", unusable_donations(before))
    outputs, same_out = _leaves(before.outputs, after.outputs, "output")
    cost = diff_cost(before, after, memory_growth) if memory_growth is not None else None
    measured = diff_profiles(before, after, time_growth) if time_growth is not None else None
    sides = Side.of(before), Side.of(after)
    changes = [
        *_target_changes(before, after, sides),
        *inputs,
        *outputs,
        *_static_changes(before, after),
        *_nested_changes(before, after),
        *_finding_changes(before, after),
        *(cost_changes(cost) if cost is not None else ()),
        *(profile_changes(measured) if measured is not None else ()),
    ]
    changes.sort(key=lambda c: VERDICT_ORDER[c.verdict])
    return TargetDiff(
        name=name or before.target,
        before=sides[0],
        after=sides[1],
        unchanged=Unchanged(same_in, same_out),
        changes=tuple(changes),
        cost=cost,
        profile=measured,
    )
