"""Turn parsed specs into JAX objects: abstract arguments, meshes, shardings.

Nothing is allocated: every array becomes a ``jax.ShapeDtypeStruct``, so a model of
any size can be inspected on a laptop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jxinspect.core.errors import UsageError, UserCodeError
from jxinspect.core.model import Mesh
from jxinspect.project.annotations import KEY_DTYPE
from jxinspect.project.plan import StagingPlan
from jxinspect.project.spec import ArraySpec, Constructed, OptimizerState, PSpec, Seed, Struct
from jxinspect.project.targets import describe_exception
from jxinspect.tracer import seam


def build_mesh(
    mesh: Mesh, *, abstract: bool, explicit: bool | None, devices: Sequence[Any] | None = None
) -> Any:
    """A ``jax.sharding.Mesh`` over the first devices (of ``devices``, a TPU topology's,
    else the backend's), or an ``AbstractMesh``."""
    names = tuple(name for name, _ in mesh.axes)
    sizes = tuple(size for _, size in mesh.axes)
    if abstract:
        return seam.make_abstract_mesh(sizes, names, explicit)
    if devices is not None and mesh.size > len(devices):
        raise UsageError(
            f"mesh {mesh} needs {mesh.size} devices but the topology has {len(devices)} "
            "devices: use a smaller mesh or a larger topology"
        )
    devices = devices if devices is not None else seam.devices()
    if mesh.size > len(devices):
        raise UsageError(
            f"mesh {mesh} needs {mesh.size} devices but the {devices[0].platform} backend has "
            f"{len(devices)}; use a smaller mesh, --devices {mesh.size} on CPU, or --abstract"
        )
    return seam.make_mesh(sizes, names, devices[: mesh.size], explicit)


def pmap_mesh(args: tuple[Any, ...], plan: StagingPlan) -> Mesh | None:
    """The one-axis mesh pmap maps over, named as the program names it (to read GSPMD
    shardings and the per-device programs of the older pmap)."""
    statics = plan.static_positions(len(args))
    mapped = plan.mapped_axes
    axes = mapped if isinstance(mapped, (tuple, list)) else (mapped,) * len(args)
    for i, arg in enumerate(args):
        axis = axes[i] if i < len(axes) else None
        if i in statics or not isinstance(axis, int):
            continue
        for leaf in seam.tree_leaves(arg):
            shape = getattr(leaf, "shape", ())
            if len(shape) > axis:
                return Mesh(((str(plan.axis or seam.pmap_axis_default()), int(shape[axis])),))
    return None


def partition_spec(spec: PSpec | None) -> Any:
    return seam.partition_spec(() if spec is None else spec.entries)


def check_axes(spec: PSpec, jax_mesh: Any, where: str) -> None:
    names = set(jax_mesh.axis_names)
    for entry in spec.entries:
        for axis in (entry,) if isinstance(entry, str) else entry or ():
            if axis not in names:
                raise UsageError(
                    f"{where}: unknown mesh axis {axis!r} in {spec}; the mesh has "
                    + ", ".join(repr(n) for n in jax_mesh.axis_names)
                )


def layout_tree(specs: Any, jax_mesh: Any, where: str, *, specs_only: bool) -> Any:
    """A pytree of :class:`PSpec` → the same pytree of ``NamedSharding`` over
    ``jax_mesh`` (of ``PartitionSpec`` with ``specs_only``, as shard_map takes them)."""

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, PSpec):
            check_axes(leaf, jax_mesh, where)
            return (
                partition_spec(leaf) if specs_only else seam.named_sharding(jax_mesh, leaf.entries)
            )
        if leaf is None:
            return partition_spec(None) if specs_only else None
        raise UsageError(f"{where}: expected P(...) or None, got {leaf!r}")

    return seam.tree_map(convert, specs, is_leaf=lambda x: isinstance(x, PSpec) or x is None)


def to_abstract(value: Any, jax_mesh: Any | None) -> Any:
    """Replace each :class:`ArraySpec` in a pytree with a ``ShapeDtypeStruct``, and
    build each :class:`Struct` as the class it names. A value holding none (what an
    ``--args-from`` maker returned) is the very object given: rebuilding it would part
    what its call shares (a Flax NNX optimizer holding the model's own parameters)."""
    if not any(isinstance(leaf, _SPECS) for leaf in seam.tree_leaves(value)):
        return value

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, OptimizerState):
            return build_optimizer_state(leaf, jax_mesh)
        if isinstance(leaf, Constructed):
            return build_model(leaf, jax_mesh)
        if isinstance(leaf, Struct):
            fields = {name: to_abstract(field, jax_mesh) for name, field in leaf.fields}
            if leaf.cls is not None:
                return build_known(leaf.cls, leaf.path, fields)
            return build_struct(leaf.path, fields)
        if not isinstance(leaf, ArraySpec):
            return leaf
        if not leaf.sharded:
            return _array(leaf.shape, leaf.dtype, None)
        if jax_mesh is None:
            raise UsageError(
                f"{leaf} names mesh axes but no mesh is given; add --mesh, e.g. --mesh data=8"
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
        sharding = seam.named_sharding(jax_mesh, entries)
        return _array(leaf.shape, leaf.dtype, sharding)

    return seam.tree_map(convert, value, is_leaf=lambda x: isinstance(x, _SPECS))


def laid_out_as_specs(args: tuple[Any, ...], specs: Any, jax_mesh: Any) -> tuple[Any, ...]:
    """``shard_map``'s arguments over ``Explicit`` axes: each array that declares no layout
    laid out as its ``in_specs`` entry says (JAX requires the input's type to match it,
    as the arrays of a real run over that mesh do); declared layouts are kept, for JAX
    to judge."""

    def lay(spec: Any, subtree: Any) -> Any:
        entries = () if spec is None else seam.spec_entries(spec)
        sharding = seam.named_sharding(jax_mesh, entries)
        return seam.tree_map(lambda leaf: seam.laid_out(leaf, sharding), subtree)

    specs = specs if isinstance(specs, tuple) else (specs,) * len(args)
    if len(specs) != len(args):
        return args  # JAX says what does not fit
    try:
        return tuple(
            seam.map_over_prefix(lay, spec, arg, lambda x: x is None or seam.is_partition_spec(x))
            for spec, arg in zip(specs, args)
        )
    except (ValueError, TypeError):  # the specs are not a prefix of the arguments
        return args


_SPECS = (ArraySpec, Struct, Constructed, OptimizerState)
"""What the spec language makes that :func:`to_abstract` turns into JAX's values."""


def build_model(model: Constructed, jax_mesh: Any | None) -> Any:
    """The model its constructor builds, abstractly (``eqx.filter_eval_shape``, or
    ``nnx.eval_shape``): every array a ``ShapeDtypeStruct``, nothing allocated, the
    tree exactly the one the constructor makes. Its key is drawn inside, so no random
    number is either. A ``python`` one (a method's ``self`` that is no pytree) is its
    class called with the Python values given."""
    construct = _constructor(model, jax_mesh)
    try:
        if model.library == "python":  # Python values in, a static value out
            return construct()
        if model.library == "equinox":
            import equinox as eqx

            return eqx.filter_eval_shape(construct)
        from flax import nnx

        return nnx.eval_shape(construct)
    except Exception as err:  # the model's own constructor may raise anything
        raise UserCodeError(
            f"building {model.path} from its constructor failed: {describe_exception(err)}"
            f"{_no_mesh_hint(err, jax_mesh)}"
        ) from None


def _constructor(model: Constructed, jax_mesh: Any | None) -> Any:
    """A function that calls the model's constructor, to be traced abstractly."""
    cls = model.cls or struct_class(model.path)
    given = {name: to_abstract(value, jax_mesh) for name, value in model.arguments
             if not isinstance(value, Seed)}  # fmt: skip
    seeds = [name for name, value in model.arguments if isinstance(value, Seed)]

    def construct() -> Any:
        if model.library == "equinox":
            keys = {name: seam.random_key() for name in seeds}
        else:
            from flax import nnx

            keys = {name: nnx.Rngs(0) for name in seeds}
        return cls(**seam.traced_values(given), **keys)

    return construct


def build_optimizer_state(state: OptimizerState, jax_mesh: Any | None) -> Any:
    """The state the step's own optimizer builds over its parameters, abstractly:
    ``jax.eval_shape(optim.init, params)``; over an Equinox model's arrays,
    ``eqx.filter_eval_shape(lambda m: optim.init(eqx.filter(m, eqx.is_array)), model)``;
    an ``nnx.Optimizer(model, tx, wrt=...)`` under ``nnx.eval_shape``. Nothing allocated."""
    tx: Any = state.transform
    try:
        if state.library == "nnx":
            from flax import nnx

            assert isinstance(state.params, Constructed)  # the annotations' reader checks it
            construct = _constructor(state.params, jax_mesh)
            wrt = state.wrt if state.wrt is not None else nnx.Param
            return nnx.eval_shape(lambda: nnx.Optimizer(construct(), tx, wrt=wrt))
        params = to_abstract(state.params, jax_mesh)
        if state.library == "equinox":
            import equinox as eqx

            return eqx.filter_eval_shape(lambda m: tx.init(eqx.filter(m, eqx.is_array)), params)
        return seam.eval_shape(tx.init, params)
    except UserCodeError:
        raise
    except Exception as err:  # the optimizer's own init may raise anything
        raise UserCodeError(
            f"building the state of {state.optimizer} ({state.optimizer}.init) failed: "
            f"{describe_exception(err)}{_no_mesh_hint(err, jax_mesh)}"
        ) from None


def _no_mesh_hint(err: Exception, jax_mesh: Any | None) -> str:
    """How to give the mesh a model's build asked for (``nnx.with_partitioning`` lays
    each variable out on the mesh it is built under), where none was given."""
    if jax_mesh is not None or "mesh" not in str(err).lower():
        return ""
    return "; no mesh was given to build it under: add --mesh, e.g. --mesh data=2,model=4"


def _array(shape: tuple[int, ...], dtype: str, sharding: Any) -> Any:
    if dtype == KEY_DTYPE:
        return seam.prng_key_struct(shape, sharding)
    return seam.shape_dtype_struct(shape, dtype, sharding)


def struct_class(path: str) -> type:
    """The NamedTuple or dataclass that an import path names (``optax.EmptyState``),
    looked up among the modules already imported (by the target and what it imports):
    nothing is imported for it, so no code runs but the class's own construction."""
    import dataclasses
    import sys

    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        found: Any = sys.modules.get(".".join(parts[:cut]))
        if found is None:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute, None)
        if isinstance(found, type) and (
            (issubclass(found, tuple) and hasattr(found, "_fields"))
            or dataclasses.is_dataclass(found)
        ):
            return found
        raise UsageError(f"{path} is not a NamedTuple or dataclass class; only those can be "
                         "written as Class(field=value, ...)")  # fmt: skip
    raise UsageError(f"{path}: no module the target has imported holds it; write the class's "
                     "full import path as the target imports it, e.g. "
                     "optax._src.transform.ScaleByAdamState")  # fmt: skip


def build_struct(path: str, fields: dict[str, Any]) -> Any:
    """An instance of the class ``path`` names, from its fields (abstract arrays)."""
    cls = struct_class(path)
    try:
        return cls(**fields)
    except Exception as err:  # the class's own checks may raise anything
        raise UsageError(f"{path}(...) could not be built: {type(err).__name__}: {err}") from None


def build_known(cls: type, path: str, fields: dict[str, Any]) -> Any:
    """An instance of ``cls`` (read from an annotation) holding ``fields``: a NamedTuple
    called with them; a dataclass (an ``eqx.Module``, a ``flax.struct`` or registered
    dataclass) made the way its pytree unflattening makes one, ``object.__new__`` and
    every field set, so its ``__init__`` (which may take other arguments) never runs and
    the tree is exactly the one its fields give. Where the class has its own
    ``__init__`` (the dataclass made none), a field left to its default is not set, as
    that ``__init__`` does not set it: the class attribute answers, and Equinox's tree
    (which records the fields an instance holds) is the one its constructor makes."""

    try:
        if issubclass(cls, tuple):
            return cls(**fields)
        instance = object.__new__(cls)
        for name, value in fields.items():
            if _left_to_class(cls, name, value):
                continue
            object.__setattr__(instance, name, value)
        return instance
    except Exception as err:  # the class's own code may raise anything
        raise UsageError(f"{path} could not be built: {type(err).__name__}: {err}") from None


def _left_to_class(cls: type, name: str, value: Any) -> bool:
    import dataclasses

    params = getattr(cls, "__dataclass_params__", None)
    if params is None or getattr(params, "init", True):
        return False
    found = {f.name: f for f in dataclasses.fields(cls)}.get(name)
    return found is not None and found.default is value
