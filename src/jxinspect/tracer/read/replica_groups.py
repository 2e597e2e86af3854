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
* a ``collective-permute``'s ``source_target_pairs={{0,1},{1,2}}``.

The ids are logical (partition × replica numbers); :func:`axes_of_groups` maps groups to
the user's mesh axes, partition *p* being the mesh's *p*-th device in order.
"""

from __future__ import annotations

import itertools
import math
import re

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


def axes_of_groups(groups: Groups, mesh: Mesh) -> tuple[str, ...] | None:
    """The mesh axes whose devices each group spans (partition ids in mesh order);
    ``None`` where the groups are no set of axes."""
    import numpy as np

    sizes = [size for _, size in mesh.axes]
    if math.prod(sizes) != sum(len(g) for g in groups):
        return None
    want = sorted(sorted(g) for g in groups)
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    for count in range(len(sizes) + 1):
        for chosen in itertools.combinations(range(len(sizes)), count):
            rest = [i for i in range(len(sizes)) if i not in chosen]
            size = math.prod(sizes[i] for i in chosen)
            got = ids.transpose(rest + list(chosen)).reshape(-1, size)
            if sorted(sorted(int(d) for d in row) for row in got) == want:
                return tuple(mesh.axes[i][0] for i in chosen)
    return None


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
