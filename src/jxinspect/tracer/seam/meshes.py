"""Meshes and shardings, with each release's constructors.

* **Meshes**: ``AbstractMesh(((name, size), ...))`` up to 0.5 (lowering for one works
  from 0.4.38, not in 0.4.35, whose constructor has no ``axis_types``),
  ``AbstractMesh(sizes, names, axis_types=...)`` from 0.6; ``AxisType`` from 0.5 (0.5.3),
  ``jax.set_mesh`` (explicit sharding) from 0.7. ``jax.make_mesh`` makes ``Auto`` axes up
  to 0.8 (0.8 warns that this changes), ``Explicit`` ones from 0.9.
* **An abstract value's sharding** (0.5 on; none in 0.4.x) is a layout only on a mesh
  whose axes are all ``Explicit`` (0.7 on, staged under ``jax.set_mesh``): there the
  type carries the spec. An argument that declares nothing is typed ``P(None, …)`` on
  the empty mesh, and one on ``Auto`` axes ``P(None, …)`` whatever it declared: neither
  says anything of the layout, and ``@main`` carries no sharding for it.
* **JAX's own replicated sharding**: from 0.8, a program over several devices gives
  each scalar argument that declares no sharding a replicated ``GSPMDSharding`` of its
  own (``pxla``), which Shardy writes on the empty mesh, ``#sdy.sharding<@empty_mesh,
  []>`` (GSPMD: ``{replicated}``); a ``NamedSharding`` is always written on its own
  mesh, so a sharding on the empty mesh is JAX's, never the user's (0.4.35 and 0.7.2
  write none).
* **A ``PartitionSpec``'s entries**: a spec may also name ``unreduced`` and ``reduced``
  axes (0.6.2 on); from 0.10.2 such a spec refuses to be iterated or indexed ("Using
  pspec is dangerous") and its entries are its ``partitions`` property.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from jxinspect.core import host
from jxinspect.core.errors import UsageError
from jxinspect.core.units import human_bytes
from jxinspect.tracer.seam import release
from jxinspect.tracer.seam.objects import (
    AxisType,
    Device,
    DeviceIds,
    HloSharding,
    JaxMesh,
    Leaf,
    PartitionSpec,
    Sharding,
)

_EXPLICIT = "explicit sharding axes (--explicit)"
"""What needs 0.7: explicit axes are staged under ``jax.set_mesh`` (0.6 makes meshes
with ``AxisType.Explicit`` but cannot stage under one)."""


def _axis_types(count: int, explicit: bool | None) -> tuple[AxisType, ...] | None:
    """``count`` axis types: ``Explicit`` or ``Auto`` as asked, else those ``jax.make_mesh``
    makes on this release (``None`` where it has no axis types)."""
    axis_type = _axis_type()
    if axis_type is None:
        if explicit:
            raise release.unsupported(_EXPLICIT, "0.7")
        return None
    if explicit is None:
        return default_axis_types(count)
    kind = axis_type.Explicit if explicit else axis_type.Auto
    return (kind,) * count


def default_axis_types(count: int) -> tuple[AxisType, ...] | None:
    """The axis types ``jax.make_mesh`` gives ``count`` axes when told none (``Auto`` up
    to 0.8, which warns that this changes, ``Explicit`` from 0.9: read from the release,
    on one device, its warning kept from the user); ``None`` where it has no axis types."""
    import warnings

    import jax

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = jax.make_mesh((1,), ("axis",), devices=jax.devices()[:1])
    types = tuple(getattr(made, "axis_types", None) or ())
    return (types[0],) * count if types else None


def make_mesh(
    sizes: tuple[int, ...], names: tuple[str, ...], chosen: Sequence[Device], explicit: bool | None
) -> JaxMesh:
    """A ``jax.sharding.Mesh`` over ``chosen`` devices, its axes ``Explicit`` or ``Auto``
    as ``explicit`` says, or (``None``) as ``jax.make_mesh`` makes them. Devices
    ``jax.make_mesh`` refuses to lay out (a v4 topology's, one per core: it asks for one
    per chip) are laid out in the order given, as ``jax.sharding.Mesh`` takes them."""
    import jax

    types = _axis_types(len(names), explicit)  # read once, without make_mesh's warning
    extra = {"axis_types": types} if types is not None else {}
    slices = len({slice_of(device) for device in chosen})
    if slices > 1:
        return jax.sharding.Mesh(_over_slices(sizes, chosen, slices), names, **extra)
    try:
        return jax.make_mesh(sizes, names, devices=list(chosen), **extra)
    except AssertionError:  # a TPU topology's devices per core (v4): it wants one per chip
        import numpy as np

        laid = np.array(list(chosen), dtype=object).reshape(sizes)
        return jax.sharding.Mesh(laid, names, **extra)


def slice_of(device: Device) -> int:
    """The slice a device is in (a multi-slice TPU topology's ``slice_index``; 0 for a
    device that has none)."""
    return int(getattr(device, "slice_index", 0) or 0)


def axes_across_slices(jax_mesh: Any) -> tuple[str, ...]:
    """The axes of ``jax_mesh`` along which its devices' slice changes (a multi-slice
    topology's ``slice_index``); ``()`` for one slice or a mesh without devices."""
    import numpy as np

    devices = getattr(jax_mesh, "devices", None)
    if not isinstance(devices, np.ndarray) or devices.dtype != object:
        return ()
    slices = np.vectorize(slice_of, otypes=[int])(devices)
    names = tuple(getattr(jax_mesh, "axis_names", ()))
    crossing = [devices.shape[axis] > 1 and bool((np.diff(slices, axis=axis) != 0).any())
                for axis in range(len(names))]  # fmt: skip
    return tuple(name for name, crosses in zip(names, crossing, strict=True) if crosses)


def slice_split(sizes: tuple[int, ...], slices: int) -> tuple[int, ...] | None:
    """How many slices each mesh axis spans: the first axes that divide ``slices`` take
    them (``(2, 4)`` over 2 slices: ``(2, 1)``; ``(4, 4)`` over 2: ``(2, 1)``, two slices
    of two rows each); ``None`` where the axes cannot share them out."""
    left, split = slices, []
    for size in sizes:
        taken = math.gcd(left, size)
        split.append(taken)
        left //= taken
    return tuple(split) if left == 1 else None


def _over_slices(sizes: tuple[int, ...], chosen: Sequence[Device], slices: int) -> Any:
    """The devices of several slices laid over a mesh as ``mesh_utils.
    create_hybrid_device_mesh`` lays them (each slice a block of the mesh, along the axes
    :func:`slice_split` says span them); a v4's devices (per core), which it refuses, in
    the order given within each slice."""
    import numpy as np
    from jax.experimental import mesh_utils

    by_slice: dict[int, list[Device]] = {}
    for device in chosen:
        by_slice.setdefault(slice_of(device), []).append(device)
    split = slice_split(sizes, slices)
    mesh = "x".join(map(str, sizes))
    if len({len(devices) for devices in by_slice.values()}) > 1:
        each = max(len(devices) for devices in by_slice.values())
        raise UsageError(
            f"a mesh of {mesh} devices does not fill whole slices ({each} devices each): "
            f"use a mesh of a multiple of {each} devices"
        )
    if split is None:
        raise UsageError(
            f"a mesh of {mesh} devices cannot be laid over {slices} slices: its first axes "
            f"must divide the slice count (e.g. --mesh data={slices},... for data across "
            "slices)"
        )
    within = tuple(size // taken for size, taken in zip(sizes, split, strict=True))
    try:
        return mesh_utils.create_hybrid_device_mesh(within, split, list(chosen))
    except (AssertionError, ValueError):  # a v4's devices per core: laid as given
        blocks: Any = np.empty(split, dtype=object)
        for at, index in zip(np.ndindex(*split), sorted(by_slice), strict=True):
            blocks[at] = np.array(by_slice[index], dtype=object).reshape(within)
        return np.block(blocks.tolist())


def axis_type_names(jax_mesh: Any) -> tuple[str, ...] | None:
    """``("Explicit", "Auto")``: each axis's type, as JAX names it; ``None`` where the
    mesh (or the release) has none."""
    types = tuple(getattr(jax_mesh, "axis_types", None) or ())
    if not types or len(types) != len(getattr(jax_mesh, "axis_names", ())):
        return None
    return tuple(str(getattr(t, "name", t)) for t in types)


def all_explicit(jax_mesh: Any) -> bool:
    """Whether every axis of ``jax_mesh`` is ``Explicit`` (staged under ``jax.set_mesh``)."""
    names = axis_type_names(jax_mesh)
    return bool(names) and all(name == "Explicit" for name in names or ())


ABSTRACT_SINCE = "0.4.38"
"""The first release tested to lower for an ``AbstractMesh`` (0.4.35 cannot)."""


def abstract_meshes_lower() -> bool:
    """Whether this release lowers for an ``AbstractMesh`` (0.4.38 on; 0.4.35's
    constructor, the one without ``axis_types``, belongs to the releases that cannot)."""
    from jax.sharding import AbstractMesh

    params = inspect.signature(AbstractMesh.__init__).parameters
    return "shape_tuple" not in params or "axis_types" in params


BYTES_PER_ABSTRACT_DEVICE = 8
"""What JAX holds for each device of an abstract mesh while it lowers a program sharded
over it (measured with jax 0.10.2, raw JAX and jxinspect alike: 1.2 GB of memory at
2**27 devices, 8.5 GB and 29 s at 2**30)."""


def make_abstract_mesh(
    sizes: tuple[int, ...], names: tuple[str, ...], explicit: bool | None
) -> JaxMesh:
    """An ``AbstractMesh`` with each release's constructor, its axis types as
    :func:`make_mesh`'s; a usage error where lowering for it would take more memory than
    this process can have."""
    from jax.sharding import AbstractMesh

    types = _axis_types(len(names), explicit)
    if not abstract_meshes_lower():
        raise release.unsupported("lowering for an abstract mesh (--abstract)", ABSTRACT_SINCE)
    _check_memory(math.prod(sizes))
    if "shape_tuple" in inspect.signature(AbstractMesh.__init__).parameters:  # up to 0.5
        return AbstractMesh(tuple(zip(names, sizes)))
    if types is None:
        return AbstractMesh(sizes, names)
    return AbstractMesh(sizes, names, axis_types=types)


def _check_memory(devices: int) -> None:
    needed = devices * BYTES_PER_ABSTRACT_DEVICE
    if needed < 1 << 28 or devices > MAX_SHARDING_DEVICES:
        return  # a quarter of a GiB is not worth reading the system for; past 32 bits,
        # JAX cannot make a sharding over the mesh at all (named_sharding says so)
    available = host.available_memory()
    if available is not None and needed > available:
        raise UsageError(
            f"an abstract mesh of {devices} devices: JAX holds about "
            f"{BYTES_PER_ABSTRACT_DEVICE} bytes per device while it lowers for one "
            f"({human_bytes(needed)}), more than the {human_bytes(available)} of memory "
            "this process can have; use a smaller mesh, or run where there is more memory"
        )


def is_abstract_mesh(value: object) -> bool:
    from jax.sharding import AbstractMesh

    return isinstance(value, AbstractMesh)


def is_mesh(value: object) -> bool:
    from jax.sharding import AbstractMesh, Mesh

    return isinstance(value, (Mesh, AbstractMesh))


def mesh_axes(jax_mesh: JaxMesh) -> tuple[tuple[str, int], ...]:
    """``(("data", 4), ("model", 2))`` of a concrete or abstract mesh."""
    shape = jax_mesh.shape
    return tuple((str(name), int(shape[name])) for name in jax_mesh.axis_names)


def mesh_device_ids(jax_mesh: JaxMesh) -> DeviceIds | None:
    return None if is_abstract_mesh(jax_mesh) else jax_mesh.device_ids


def use_mesh(jax_mesh: JaxMesh) -> AbstractContextManager[object]:
    """A context manager that makes ``jax_mesh`` the ambient mesh, as a real run sets it
    around its code: the one ``jax.sharding.get_abstract_mesh()`` returns (what Flax's
    ``nnx.with_partitioning`` lays a new variable out on) and explicit sharding stages
    under. ``jax.set_mesh`` from 0.7; before it ``jax.sharding.use_mesh`` (0.5.1–0.6),
    else the mesh itself (the resource environment of 0.4.x), which ``Auto`` axes need
    only; explicit axes need ``jax.set_mesh``."""
    import contextlib

    import jax

    if is_abstract_mesh(jax_mesh):  # set_mesh takes a concrete one only
        if hasattr(jax.sharding, "use_abstract_mesh"):  # 0.7.2 on
            abstract: AbstractContextManager[object] = jax.sharding.use_abstract_mesh(jax_mesh)
            return abstract
        if all_explicit(jax_mesh):
            raise release.unsupported("explicit axes on an abstract mesh", "0.7.2")
        return contextlib.nullcontext()
    if hasattr(jax, "set_mesh"):
        context: AbstractContextManager[object] = jax.set_mesh(jax_mesh)
        return context
    if all_explicit(jax_mesh):
        raise release.unsupported(_EXPLICIT, "0.7")
    older = getattr(jax.sharding, "use_mesh", None)
    made: AbstractContextManager[object] = older(jax_mesh) if older is not None else jax_mesh
    return made


MAX_SHARDING_DEVICES = 2**31 - 1
"""The largest mesh a ``NamedSharding`` can be made over: jaxlib counts its devices in 32
bits and throws ``std::bad_cast`` past it (measured with jax 0.10.2 on abstract meshes:
``a=2147483647`` works, ``a=2147483648`` and ``a=65536,b=32768`` do not)."""


def named_sharding(jax_mesh: JaxMesh, entries: Sequence[Any]) -> Sharding:
    from jax.sharding import NamedSharding, PartitionSpec

    size = 1
    for axis_size in dict(jax_mesh.shape).values():
        size *= int(axis_size)
    if size > MAX_SHARDING_DEVICES:
        raise UsageError(
            f"a sharding over a mesh of {size} devices: JAX counts a sharding's devices in "
            f"32 bits (at most {MAX_SHARDING_DEVICES}); use a smaller mesh"
        )
    return NamedSharding(jax_mesh, PartitionSpec(*entries))


def partition_spec(entries: Sequence[Any]) -> PartitionSpec:
    from jax.sharding import PartitionSpec

    return PartitionSpec(*entries)


def sharding_of_leaf(leaf: Leaf) -> tuple[PartitionSpec, JaxMesh] | None:
    """``(spec, mesh)`` when ``leaf`` is or carries a ``NamedSharding``."""
    from jax.sharding import NamedSharding

    sharding = leaf if isinstance(leaf, NamedSharding) else getattr(leaf, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.spec, sharding.mesh
    return None


def on_abstract_mesh(leaf: Leaf) -> bool:
    """Whether ``leaf`` is laid out on an ``AbstractMesh`` (what ``nnx.eval_shape`` gives
    a variable built under a mesh): JAX stages such a value only under a concrete mesh
    of those axes (``jax.set_mesh``), as a real run does."""
    found = sharding_of_leaf(leaf)
    return found is not None and is_abstract_mesh(found[1])


def is_partition_spec(value: object) -> bool:
    import jax.sharding

    return type(value) is jax.sharding.PartitionSpec


def spec_entries(spec: Any) -> tuple[Any, ...]:
    """A ``PartitionSpec``'s entry per dimension (its ``partitions`` where it has them)."""
    if isinstance(getattr(type(spec), "partitions", None), property):
        return tuple(spec.partitions)
    return tuple(spec)


def unreduced_axes(spec: Any) -> frozenset[str]:
    """The axes a ``PartitionSpec`` names ``unreduced`` (each device then holds a partial
    sum over them: neither a copy nor a tile); none in a release without them."""
    return frozenset(getattr(spec, "unreduced", None) or ())


def typed_spec(aval: Any) -> PartitionSpec | None:
    """The ``PartitionSpec`` an abstract value's type carries where it is a layout (its
    mesh's axes all ``Explicit``); ``None`` on ``Auto`` axes, on the empty mesh, and in
    releases whose abstract values carry no sharding."""
    sharding = getattr(aval, "sharding", None)
    types = tuple(getattr(getattr(sharding, "mesh", None), "axis_types", None) or ())
    explicit = getattr(_axis_type(), "Explicit", None)
    if not types or explicit is None or any(t != explicit for t in types):
        return None
    return getattr(sharding, "spec", None)


def _axis_type() -> Any:
    import jax.sharding

    return getattr(jax.sharding, "AxisType", None)


def hlo_sharding_text(sharding: Sharding, rank: int) -> str | None:
    """A JAX ``Sharding`` object as an HLO sharding string (``{devices=[2,1]<=[2]}``)."""
    try:
        return str(sharding._to_xla_hlo_sharding(rank))
    except (AttributeError, TypeError, ValueError):
        return None


def parse_hlo_sharding(text: str) -> HloSharding:
    """XLA's ``HloSharding`` for a GSPMD string; ``ValueError`` when unreadable."""
    from jax._src.lib import xla_client as xc

    try:
        return xc.HloSharding.from_string(text)
    except Exception as err:  # XLA raises its own runtime error type
        raise ValueError(f"unreadable mhlo.sharding {text!r}: {err}") from None


def is_unspecified(value: Any) -> bool:
    """Whether ``value`` is JAX's "no sharding given" (``UnspecifiedValue``)."""
    from jax._src import sharding_impls

    return isinstance(value, sharding_impls.UnspecifiedValue)
