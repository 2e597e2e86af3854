"""The devices a collective of the optimized HLO runs over, from every spelling XLA
writes, decoded in one place (:func:`decode`):

* explicit lists, ``replica_groups={{0,1,2,3},{4,5,6,7}}`` (``{}``: all devices);
* iota, ``replica_groups=[2,4]<=[4,2]T(1,0)``: ``iota(8).reshape(4,2).transpose(1,0)``
  cut into 2 groups of 4;
* the mesh form (JAX 0.10 on), ``replica_groups=mesh['axis_0'=4,'axis_1'=1,'axis_2'=2],
  device_ids=([2,4]T(1,0)) {'axis_0'}``: the device ids (iota, ``[2,4]T(1,0)``, or
  listed; absent: iota) laid on the mesh, one group per position of the other axes, along
  the named axes in the order given; an axis may be a sub-axis, ``'x':(2)4``: size 4 of
  the axis cut as ``[2, 4, rest]``;
* a ``collective-permute``'s ``source_target_pairs={{0,1},{1,2}}``;
* a multi-slice program's transfer across slices (:func:`across_slices`), by device id.

The ids are logical (partition × replica numbers); :func:`axes_of_groups` maps groups to
the user's mesh axes, partition *p* being the mesh's *p*-th device in order.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from jxinspect.core.model import Mesh
from jxinspect.tracer.read.hlo_text import UnreadHlo

Groups = list[list[int]]

_EXPLICIT = re.compile(r"\breplica_groups=\{((?:\{[\d,\s]*\},?\s*)*)\}")
_IOTA = re.compile(r"\breplica_groups=\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")
_MESH = re.compile(
    r"\breplica_groups=mesh\[([^\]]*)\](?:,\s*device_ids=\(([^()]*(?:\([^()]*\))?)\))?"
    r"\s*\{([^{}]*)\}"
)
_MESH_AXIS = re.compile(r"'?([^'=,\s]+)'?=(\d+)")
_AXIS_REF = re.compile(r"'?([^':,\s]+)'?(?::\((\d+)\)(\d+))?")
_PAIRS = re.compile(r"\bsource_target_pairs=\{((?:\{\s*\d+\s*,\s*\d+\s*\},?\s*)*)\}")
_ROW = re.compile(r"\{([\d,\s]*)\}")
_ACROSS_LISTED = re.compile(r"\b_xla_megascale_target=\{((?:\{[\d,\s]*\},?\s*)*)\}")
_ACROSS_RANGE = re.compile(r'\b_xla_megascale_target="\{([\d,\s]*)\}x\{(\d+):(\d+)\}"')
SLICE_STRIDE = 100_000
"""A multi-slice topology's device ids: device ``d`` of slice ``k`` (``slice_index`` k - 1)
is ``k * 100000 + d`` (libtpu 0.0.42.1 and 0.0.50.1: 100000-100003, 200000-200003)."""


def _iota(dims: list[int], perm: list[int] | None) -> list[int]:
    """``iota(prod(dims)).reshape(dims).transpose(perm)``, flattened."""
    import numpy as np

    ids = np.arange(math.prod(dims)).reshape(dims)
    return [int(d) for d in (ids.transpose(perm) if perm else ids).reshape(-1)]


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def _device_ids(text: str | None, total: int) -> list[int]:
    """A mesh's ``device_ids=(...)``: iota ``[2,4]T(1,0)``, or the ids listed."""
    if text is None:
        return list(range(total))
    iota = re.fullmatch(r"\s*\[([\d,]+)\](?:T\(([\d,]+)\))?\s*", text)
    if iota is not None and math.prod(_numbers(iota.group(1))) == total:
        perm = _numbers(iota.group(2)) if iota.group(2) else None
        return _iota(_numbers(iota.group(1)), perm)
    listed = _numbers(text)
    if sorted(listed) != list(range(total)):
        raise UnreadHlo(f"mesh device_ids=({text[:60]}) not read")
    return listed


def _mesh_groups(axes_text: str, ids_text: str | None, refs_text: str) -> Groups:
    """The mesh form's groups: ids on the mesh, grouped along the referenced (sub-)axes."""
    import numpy as np

    names = [name for name, _ in _MESH_AXIS.findall(axes_text)]
    sizes = [int(size) for _, size in _MESH_AXIS.findall(axes_text)]
    total = math.prod(sizes)
    ids = np.array(_device_ids(ids_text, total))
    refs = [r for r in _AXIS_REF.findall(refs_text) if r[0]]
    # each mesh axis cut into the pieces its sub-axes name, by pre-size: [(start, size)]
    pieces: dict[int, list[tuple[int, int]]] = {i: [] for i in range(len(sizes))}
    for name, pre, size in refs:
        if name not in names:
            raise UnreadHlo(f"mesh axis {name!r} not in mesh[{axes_text[:60]}]")
        axis = names.index(name)
        pieces[axis].append((int(pre), int(size)) if pre else (1, sizes[axis]))
    dims: list[int] = []
    where: dict[tuple[int, int], int] = {}  # (axis, pre-size) → reshaped dimension
    for axis, size in enumerate(sizes):
        done = 1
        for pre, part in sorted(pieces[axis]):
            if pre != done:
                dims.append(pre // done)
            where[axis, pre] = len(dims)
            dims.append(part)
            done = pre * part
        if done != size or not pieces[axis]:
            dims.append(size // done)
    if math.prod(dims) != total:
        raise UnreadHlo(f"mesh sub-axes {{{refs_text[:60]}}} do not cut mesh[{axes_text[:60]}]")
    grouped = [where[names.index(name), int(pre) if pre else 1] for name, pre, _ in refs]
    rest = [d for d in range(len(dims)) if d not in grouped]
    size = math.prod(dims[d] for d in grouped)
    rows = ids.reshape(dims).transpose(rest + grouped).reshape(-1, size)
    return [[int(d) for d in row] for row in rows]


def decode(attributes: str, devices: int, name: str = "") -> tuple[str, Groups] | None:
    """A collective's participants from its attributes: ``("groups", groups)`` or
    ``("pairs", source-target pairs)``, as logical device ids; ``None`` where it names
    none (it runs over every device); :class:`UnreadHlo` for a spelling not known here.
    ``devices``: the module's partitions × replicas."""
    found = _MESH.search(attributes)
    if found is not None:
        return "groups", _mesh_groups(found.group(1), found.group(2), found.group(3))
    found = _IOTA.search(attributes)
    if found is not None:
        count, size = int(found.group(1)), int(found.group(2))
        dims = _numbers(found.group(3))
        perm = _numbers(found.group(4)) if found.group(4) else None
        flat = _iota(dims, perm)
        if count * size != len(flat):
            raise UnreadHlo(f"%{name}: iota replica groups [{count},{size}] of {len(flat)} ids")
        return "groups", [flat[i * size : (i + 1) * size] for i in range(count)]
    found = _EXPLICIT.search(attributes)
    if found is not None:
        rows = [_numbers(row) for row in _ROW.findall(found.group(1))]
        return "groups", rows if rows else [list(range(devices))]
    found = _PAIRS.search(attributes)
    if found is not None:
        return "pairs", [_numbers(row) for row in _ROW.findall(found.group(1))]
    if "replica_groups=" in attributes or "source_target_pairs=" in attributes:
        at = attributes.find("replica_groups=")
        at = at if at >= 0 else attributes.find("source_target_pairs=")
        raise UnreadHlo(f"%{name}: participants not read: {attributes[at:][:80]}")
    return None


def across_slices(attributes: str, name: str = "") -> Groups:
    """The devices a transfer across slices runs over, by device id, as libtpu writes its
    target: listed, ``_xla_megascale_target={{100000,300000},{100001,300001}}``, or slices
    by a range of each one's devices, ``"{1,2}x{0:3}"`` (devices 0 to 3 of slices 1 and 2:
    one group per device, of that device in every slice named). :class:`UnreadHlo` for
    any other spelling."""
    found = _ACROSS_LISTED.search(attributes)
    if found is not None:
        return [_numbers(row) for row in _ROW.findall(found.group(1))]
    found = _ACROSS_RANGE.search(attributes)
    if found is not None:
        slices, first, last = _numbers(found.group(1)), int(found.group(2)), int(found.group(3))
        return [[k * SLICE_STRIDE + d for k in slices] for d in range(first, last + 1)]
    at = attributes.find("_xla_megascale_target=")
    raise UnreadHlo(f"%{name}: devices across slices not read: {attributes[at:][:80]}")


def axes_of_groups(groups: Groups, mesh: Mesh) -> tuple[str, ...] | None:
    """The mesh axes whose devices each group spans (partition ids in mesh order);
    ``None`` where the groups are no set of axes."""
    sizes = [size for _, size in mesh.axes]
    if math.prod(sizes) != sum(len(g) for g in groups):
        return None
    want = sorted(sorted(g) for g in groups)
    whole = [Piece(name, 1, size, size) for name, size in mesh.axes]
    found = _spanned(whole, want)
    if found is None:  # a part of an axis (a multi-slice mesh's axis split across slices)
        parts = [Piece(axis.name, pre, factor, axis.axis_size)
                 for axis in whole for pre, factor in _factors(axis.size)]  # fmt: skip
        found = _spanned(parts, want)
    return _named(found) if found is not None else None


@dataclass(frozen=True)
class Piece:
    """A mesh axis, or a part of one: the ``size`` devices after every ``pre`` of them."""

    name: str
    pre: int
    size: int
    axis_size: int


def _factors(size: int) -> list[tuple[int, int]]:
    """``size`` cut into its prime factors, major first: ``[(pre-size, factor)]``."""
    found, pre, left, p = [], 1, size, 2
    while left > 1:
        while left % p == 0:
            found.append((pre, p))
            pre, left = pre * p, left // p
        p += 1
    return found


def _spanned(pieces: list[Piece], want: Groups) -> list[Piece] | None:
    """The fewest of ``pieces`` (laid out in order) whose devices each of the groups
    ``want`` spans; ``None`` where none do."""
    import numpy as np

    sizes = [piece.size for piece in pieces]
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    for count in range(len(sizes) + 1):
        for chosen in itertools.combinations(range(len(sizes)), count):
            rest = [i for i in range(len(sizes)) if i not in chosen]
            size = math.prod(sizes[i] for i in chosen)
            got = ids.transpose(rest + list(chosen)).reshape(-1, size)
            if sorted(sorted(int(d) for d in row) for row in got) == want:
                return [pieces[i] for i in chosen]
    return None


def _named(pieces: list[Piece]) -> tuple[str, ...]:
    """Axes as Shardy names them: a whole axis by its name, a part by ``name:(pre)size``
    (parts of one axis next to each other made one)."""
    merged: list[Piece] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        if last is not None and last.name == piece.name and last.pre * last.size == piece.pre:
            merged[-1] = Piece(last.name, last.pre, last.size * piece.size, last.axis_size)
        else:
            merged.append(piece)
    return tuple(piece.name if piece.size == piece.axis_size else
                 f"{piece.name}:({piece.pre}){piece.size}" for piece in merged)  # fmt: skip


def axes_of_pairs(pairs: Groups, mesh: Mesh) -> tuple[str, ...] | None:
    """The mesh axes along which a permute moves data: the coordinates that differ."""
    import numpy as np

    sizes = [size for _, size in mesh.axes]
    total = math.prod(sizes)
    moved: set[int] = set()
    for source, target in pairs:
        if not (0 <= source < total and 0 <= target < total):
            return None
        a, b = np.unravel_index(source, sizes), np.unravel_index(target, sizes)
        moved |= {i for i in range(len(sizes)) if a[i] != b[i]}
    return tuple(mesh.axes[i][0] for i in sorted(moved))
