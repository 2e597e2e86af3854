"""Turn parsed specs into JAX objects: abstract arguments, meshes, shardings.

Nothing is allocated: every array becomes a ``jax.ShapeDtypeStruct``, so a model of
any size can be inspected on a laptop.
"""

from __future__ import annotations

from typing import Any

from jxinspect.errors import UsageError
from jxinspect.model import Mesh
from jxinspect.spec import ArraySpec, PSpec


def build_mesh(mesh: Mesh, *, abstract: bool, explicit: bool) -> Any:
    """A ``jax.sharding.Mesh`` over the first devices, or an ``AbstractMesh``."""
    import jax
    from jax.sharding import AbstractMesh, AxisType

    names = tuple(name for name, _ in mesh.axes)
    sizes = tuple(size for _, size in mesh.axes)
    kind = AxisType.Explicit if explicit else AxisType.Auto
    types = (kind,) * len(names)
    if abstract:
        return AbstractMesh(sizes, names, axis_types=types)
    devices = jax.devices()
    if mesh.size > len(devices):
        raise UsageError(
            f"mesh {mesh} needs {mesh.size} devices but the {devices[0].platform} backend has "
            f"{len(devices)}; use a smaller mesh, --devices {mesh.size} on CPU, or --abstract"
        )
    return jax.make_mesh(sizes, names, axis_types=types, devices=devices[: mesh.size])


def partition_spec(spec: PSpec | None) -> Any:
    from jax.sharding import PartitionSpec

    return PartitionSpec() if spec is None else PartitionSpec(*spec.entries)


def check_axes(spec: PSpec, jax_mesh: Any, where: str) -> None:
    names = set(jax_mesh.axis_names)
    for entry in spec.entries:
        for axis in (entry,) if isinstance(entry, str) else entry or ():
            if axis not in names:
                raise UsageError(
                    f"{where}: unknown mesh axis {axis!r} in {spec}; the mesh has "
                    + ", ".join(repr(n) for n in jax_mesh.axis_names)
                )


def to_sharding_tree(specs: Any, jax_mesh: Any, where: str) -> Any:
    """A pytree of :class:`PSpec` → the same pytree of ``NamedSharding``."""
    import jax
    from jax.sharding import NamedSharding

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, PSpec):
            check_axes(leaf, jax_mesh, where)
            return NamedSharding(jax_mesh, partition_spec(leaf))
        if leaf is None:
            return None
        raise UsageError(f"{where}: expected P(...) or None, got {leaf!r}")

    return jax.tree_util.tree_map(convert, specs, is_leaf=lambda x: isinstance(x, PSpec))


def to_pspec_tree(specs: Any, jax_mesh: Any, where: str) -> Any:
    """A pytree of :class:`PSpec` → the same pytree of ``PartitionSpec`` (for shard_map)."""
    import jax

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, PSpec):
            check_axes(leaf, jax_mesh, where)
        return partition_spec(leaf)

    return jax.tree_util.tree_map(
        convert, specs, is_leaf=lambda x: isinstance(x, PSpec) or x is None
    )


def to_abstract(value: Any, jax_mesh: Any | None) -> Any:
    """Replace each :class:`ArraySpec` in a pytree with a ``ShapeDtypeStruct``."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec

    def convert(leaf: Any) -> Any:
        if not isinstance(leaf, ArraySpec):
            return leaf
        dtype = jnp.dtype(leaf.dtype)
        if not leaf.sharded:
            return jax.ShapeDtypeStruct(leaf.shape, dtype)
        if jax_mesh is None:
            raise UsageError(
                f"{leaf} names mesh axes but no mesh is given; add --mesh, e.g. "
                "--mesh data=8"
            )
        entries = [None if not axes else axes[0] if len(axes) == 1 else axes
                   for axes in leaf.axes]  # fmt: skip
        pspec = PSpec(tuple(entries))
        check_axes(pspec, jax_mesh, str(leaf))
        for dim, axes in zip(leaf.shape, leaf.axes):
            pieces = 1
            for axis in axes:
                pieces *= jax_mesh.shape[axis]
            if dim % pieces:
                raise UsageError(
                    f"{leaf}: dimension {dim} does not divide over {'×'.join(axes)} "
                    f"({pieces} devices); pick a multiple of {pieces}"
                )
        sharding = NamedSharding(jax_mesh, PartitionSpec(*entries))
        return jax.ShapeDtypeStruct(leaf.shape, dtype, sharding=sharding)

    return jax.tree_util.tree_map(convert, value, is_leaf=lambda x: isinstance(x, ArraySpec))
