"""Read sharding attributes into :class:`jxinspect.core.model.Sharding`.

Shardy's ``#sdy.sharding<@mesh, [{"data"}, {}]>`` is read through jaxlib's ``sdy``
dialect bindings; GSPMD's ``mhlo.sharding = "{devices=[2,1,4]<=[8]
last_tile_dim_replicate}"`` through XLA's own ``HloSharding`` parser. A GSPMD tile
assignment is mapped back to mesh axis names when the mesh is known, so the same
layout reads ``P('data', None)`` under both partitioners.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from jxinspect.core.model import Mesh, Sharding, ShardingKind, ShardingSource
from jxinspect.tracer import seam


def mesh_from_sdy(attr: Any, abstract: bool = False) -> Mesh:
    """An ``#sdy.mesh<[...]>`` attribute → :class:`Mesh`."""
    sdy = seam.sdy()

    mesh = sdy.MeshAttr(attr)
    axes = tuple(
        (seam.mesh_axis_name(sdy.MeshAxisAttr(a).name), sdy.MeshAxisAttr(a).size) for a in mesh.axes
    )
    return Mesh(axes, abstract)


def is_maximal_mesh(attr: Any) -> bool:
    """A mesh of no axes that names its device (``<[], device_ids=[0]>``): one device
    holds the whole array. Without device ids (``@empty_mesh = <[]>``) it is replicated."""
    mesh = seam.sdy().MeshAttr(attr)
    return not list(mesh.axes) and bool(list(mesh.device_ids))


def _axis_name(ref: Any) -> str:
    sdy = seam.sdy()

    axis = sdy.AxisRefAttr(ref)
    info = axis.sub_axis_info
    if info is None:
        return seam.mesh_axis_name(str(axis.name))
    # A sub-axis prints as name:(pre-size)size, as Shardy writes it.
    text = str(info)
    return f"{axis.name}:{text[text.find('(') :].rstrip('>')}" if "(" in text else axis.name


def from_sdy(attr: Any, meshes: dict[str, Mesh], maximal: frozenset[str] = frozenset()) -> Sharding:
    """A ``#sdy.sharding<...>`` attribute → :class:`Sharding` (``meshes`` by symbol name;
    ``maximal``: the names of the meshes that are one device)."""
    sdy = seam.sdy()

    sharding = sdy.TensorShardingAttr(attr)
    mesh_ref = sharding.mesh_or_ref
    mesh: Mesh | None
    try:
        mesh = mesh_from_sdy(mesh_ref)
        one_device = is_maximal_mesh(mesh_ref)
    except (TypeError, ValueError):
        name = str(mesh_ref).lstrip("@").strip('"')
        mesh, one_device = meshes.get(name), name in maximal
    spec = tuple(
        tuple(_axis_name(ref) for ref in sdy.DimensionShardingAttr(dim).axes)
        for dim in sharding.dimension_shardings
    )
    raw = str(attr)
    if one_device:
        return Sharding("maximal", spec=spec, mesh=mesh, source="sdy", raw=raw)
    if mesh is not None and not mesh.axes:
        # the empty mesh: a copy on every device, and JAX's own (see seam.meshes)
        return Sharding("replicated", spec=spec, mesh=None, source="jax_default", raw=raw)
    used = {axis.split(":")[0] for axes in spec for axis in axes}
    replicas = math.prod(size for name, size in mesh.axes if name not in used) if mesh else 1
    kind: ShardingKind = "tiled" if used else "replicated"
    return Sharding(kind, spec=spec, mesh=mesh, replicas=replicas, source="sdy", raw=raw)


def from_partition_spec(spec: Any, rank: int, mesh: Mesh, source: ShardingSource) -> Sharding:
    """A JAX ``PartitionSpec`` on ``mesh`` → :class:`Sharding` (padded to ``rank``); a spec
    with ``unreduced`` axes is of kind ``unknown`` (partial sums: no copies, no tiles),
    its text in ``raw``."""
    partitions = seam.spec_entries(spec)
    entries = partitions + (None,) * (rank - len(partitions))
    axes = tuple(
        () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        for entry in entries
    )
    if seam.unreduced_axes(spec):
        return Sharding("unknown", spec=axes, mesh=mesh, source=source, raw=str(spec))
    used = {axis for dim in axes for axis in dim}
    replicas = math.prod(size for name, size in mesh.axes if name not in used)
    kind: ShardingKind = "tiled" if used else "replicated"
    return Sharding(kind, spec=axes, mesh=mesh, replicas=replicas, source=source, raw=str(spec))


def from_hlo_text(text: str, rank: int, mesh: Mesh | None, device_ids: Any = None) -> Sharding:
    """An ``mhlo.sharding`` string → :class:`Sharding`, named by ``mesh`` where it fits.

    ``device_ids`` is the mesh's device order (an array shaped like the mesh); ``None``
    means the plain iota order of an abstract or freshly made mesh.
    """
    hlo = seam.parse_hlo_sharding(text)
    if hlo.tuple_elements():
        return Sharding("unknown", source="gspmd", raw=text)
    if hlo.is_manual():
        return Sharding("manual", source="gspmd", raw=text)
    if hlo.is_replicated():
        unsplit = tuple(() for _ in range(rank))
        copies = mesh.size if mesh else 1
        return Sharding(
            "replicated", spec=unsplit, mesh=mesh, source="gspmd", replicas=copies, raw=text
        )
    if not hlo.is_tiled():  # maximal (one device)
        return Sharding("maximal", source="gspmd", raw=text)
    dims = list(hlo.tile_assignment_dimensions())
    devices = list(hlo.tile_assignment_devices())
    subgroups = len(hlo.subgroup_types())
    last_replicated = hlo.replicate_on_last_tile_dim()
    tile_dims = tuple(dims[:rank])
    replicas = math.prod(dims[rank:]) if (last_replicated or subgroups) else 1
    if mesh is not None:
        spec = _name_tiles(tile_dims, devices, mesh, device_ids)
        if spec is not None:
            return Sharding(
                "tiled", spec=spec, mesh=mesh, replicas=replicas, source="gspmd", raw=text
            )
    return Sharding("tiled", spec=tuple(() for _ in tile_dims), mesh=mesh, tiles=tile_dims,
                    replicas=replicas, source="gspmd", raw=text)  # fmt: skip


def _name_tiles(
    tile_dims: tuple[int, ...], devices: list[int], mesh: Mesh, device_ids: Any
) -> tuple[tuple[str, ...], ...] | None:
    """The mesh axes per dim whose device layout equals the tile assignment, if any.

    JAX builds a tile assignment by transposing the mesh's device array so the axes of
    dim 0 come first, then those of dim 1, …, then the unused (replicated) axes. Try each
    way of giving axes to dims whose sizes multiply out to the tile counts.
    """
    import numpy as np

    names = [name for name, _ in mesh.axes]
    sizes = [size for _, size in mesh.axes]
    ids = (
        np.arange(math.prod(sizes)).reshape(sizes)
        if device_ids is None
        else np.asarray(device_ids).reshape(sizes)
    )
    want = np.asarray(devices)
    rank = len(tile_dims)
    # each axis goes to one dim or to "replicated" (index rank); an axis of size 1 splits
    # nothing, so it always goes to "replicated"; big meshes stay tractable
    if (rank + 1) ** sum(size > 1 for size in sizes) > 20000:
        return None
    places = [range(rank + 1) if size > 1 else (rank,) for size in sizes]
    for choice in itertools.product(*places):
        per_dim = [[i for i, d in enumerate(choice) if d == dim] for dim in range(rank + 1)]
        if any(math.prod(sizes[i] for i in per_dim[d]) != tile_dims[d] for d in range(rank)):
            continue
        for orders in itertools.product(*(itertools.permutations(axes) for axes in per_dim[:rank])):
            order = [i for axes in orders for i in axes] + per_dim[rank]
            if want.size == ids.size and np.array_equal(ids.transpose(order).reshape(-1), want):
                return tuple(tuple(names[i] for i in axes) for axes in orders)
    return None
