"""The JAX seam: the one module that touches JAX's internals and release differences.

Everything else in jxinspect calls the small typed functions here. Nothing outside this
module imports ``jax._src``, reads a config option by name, or relies on a detail of
jaxlib's MLIR bindings that changed between releases. JAX is imported inside functions
only, so ``jxinspect --help`` never loads it. Supported: JAX 0.4.35 to the newest.

Each difference is detected by feature, not by version number; the releases named are
the ones where it was observed (0.4.35, 0.7.2 and 0.10.2 are tested in CI):

* **Simulated CPU devices**: the ``jax_num_cpu_devices`` option (0.5.0 on); before it,
  the XLA flag ``--xla_force_host_platform_device_count`` set before the backend starts.
* **Argument names in ``@main``**: block-argument locations everywhere; the bindings
  expose ``BlockArgument.location`` from 0.5 on, and in 0.4.35 they are read from the
  printed header of a body-less copy of ``@main``.
* **Locations**: ``ir.NameLoc``/``CallSiteLoc``/… classes (0.8 on), ``Location.is_a_name()``
  and friends (0.5–0.7), only the printed form (0.4.35).
* **Result paths**: ``result['y']`` from 0.6 on, ``['y']`` (and ``""`` for a lone result)
  up to 0.5; :func:`normalize_result_path` maps both to the newer spelling.
* **Keys of nodes without key paths**: ``p[<flat index 0>]`` in 0.4.35, ``p[0]`` later;
  :func:`newer_spelling` reads both alike.
* **Partitioner**: GSPMD (``mhlo.sharding``) is the default up to 0.6, Shardy
  (``sdy.sharding``) from 0.7 on; ``jax_use_shardy_partitioner`` switches either way.
* **Meshes**: ``AbstractMesh(((name, size), ...))`` up to 0.5 (lowering for one works
  from 0.5.0; 0.4.35's constructor has no ``axis_types``), ``AbstractMesh(sizes, names,
  axis_types=...)`` from 0.6; ``AxisType`` from 0.6, ``jax.set_mesh`` (explicit sharding)
  from 0.7.
* **shard_map**: ``jax.experimental.shard_map.shard_map(check_rep=, auto=)`` up to 0.6,
  ``jax.shard_map(check_vma=, axis_names=)`` from 0.7 on.
* **pmap**: a ``PmapFunction`` with ``.trace`` (0.4.35), without it (0.7), a function
  built on shard_map (0.10: global shapes, ``flat_args[i]`` names). Up to 0.7 the program
  is one replica's (per-device shapes); it keeps the real names up to 0.6 and none in 0.7.
  ``Lowered.out_info`` of the older pmap raises ``KeyError('global_out_avals')``; it is rebuilt from
  ``make_jaxpr(..., return_shape=True)``.
* **Static argument names**: 0.4.35 matches keyword names against ``static_argnames`` by
  identity; names read from a declaration are interned before they reach ``jit``.
* **``Lowered.as_text(debug_info=)``**: absent in 0.4.35; the module is printed with
  the MLIR bindings instead.
* **Optimized HLO → StableHLO**: ``_jax.mlir.hlo_to_stablehlo`` (0.5 on); in 0.4.35
  ``xla_computation_to_mlir_module``. HLO text: ``_hlo.hlo_module_from_text`` (0.8 on),
  ``xla_extension``/``xla_client._xla`` before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from jxinspect.core.errors import UsageError
from jxinspect.core.units import source_parts

# ---- the release ------------------------------------------------------------------------


def jax_version() -> str:
    import jax

    return str(jax.__version__)


def import_jax() -> None:
    """Load JAX and ``jax.numpy`` (what every target needs)."""
    import jax.numpy  # noqa: F401


def unsupported(feature: str, since: str) -> UsageError:
    """The one-line error for a feature this JAX release does not have."""
    return UsageError(
        f"{feature} needs JAX {since} or newer; this is JAX {jax_version()} "
        "(upgrade JAX, or leave the option out)"
    )


def _config_has(option: str) -> bool:
    import jax

    return option in jax.config.values


def warm_up() -> None:
    """Lower one tiny program: what JAX sets up for its first lowering (a second or so
    of a fresh process) is then done before a target needs it."""
    import jax
    import jax.numpy as jnp

    jax.jit(lambda x: x + 1).lower(jax.ShapeDtypeStruct((), jnp.float32)).as_text()


def config_values() -> dict[str, Any]:
    """JAX's configuration now (``jax.config.values``, public in every supported
    release), to put back with :func:`restore_config`."""
    import jax

    return dict(jax.config.values)


def restore_config(values: dict[str, Any]) -> None:
    """Put back what user code changed (``jax.config.update`` at import) since
    :func:`config_values`; an option that cannot change once the backend started is
    left as it is."""
    import jax

    for name, value in jax.config.values.items():
        if name in values and values[name] != value:
            with contextlib.suppress(Exception):
                jax.config.update(name, values[name])


# ---- devices and the backend ----------------------------------------------------------

_DEVICE_FLAG = "--xla_force_host_platform_device_count"


def backend_started() -> bool:
    from jax._src import xla_bridge

    return bool(xla_bridge.backends_are_initialized())


def default_backend() -> str:
    import jax

    return str(jax.default_backend())


def device_count() -> int:
    import jax

    return int(jax.device_count())


def devices() -> list[Any]:
    import jax

    return list(jax.devices())


def platforms_setting() -> str:
    """The ``jax_platforms`` setting (``""`` when JAX chooses)."""
    import jax

    return str(jax.config.jax_platforms or "")


def simulate_cpu_devices(count: int) -> None:
    """Ask for ``count`` CPU devices; call before the backend starts."""
    import jax

    if _config_has("jax_num_cpu_devices"):
        jax.config.update("jax_num_cpu_devices", count)
        return
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith(_DEVICE_FLAG)]
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"{_DEVICE_FLAG}={count}"])


@contextlib.contextmanager
def partitioner(name: str | None) -> Iterator[str]:
    """Use Shardy (``"shardy"``) or GSPMD inside the block; JAX's setting is restored."""
    import jax

    option = "jax_use_shardy_partitioner"  # in every supported release
    before = bool(jax.config.values[option])
    wanted = before if name is None else name == "shardy"
    if wanted != before:
        jax.config.update(option, wanted)
    try:
        yield "shardy" if wanted else "gspmd"
    finally:
        if wanted != before:
            jax.config.update(option, before)


def shardy_default() -> bool:
    """Whether this release partitions with Shardy unless told otherwise (0.7 on)."""
    import jax

    return bool(jax.config.values.get("jax_use_shardy_partitioner", False))


# ---- meshes and shardings ---------------------------------------------------------------


def _axis_types(count: int, explicit: bool) -> tuple[Any, ...] | None:
    """``(AxisType.Auto,) * count`` where the release has axis types, else ``None``."""
    import jax.sharding

    axis_type = getattr(jax.sharding, "AxisType", None)
    if axis_type is None:
        if explicit:
            raise unsupported("explicit sharding axes (--explicit)", "0.7")
        return None
    kind = axis_type.Explicit if explicit else axis_type.Auto
    return (kind,) * count


def make_mesh(
    sizes: tuple[int, ...], names: tuple[str, ...], chosen: Sequence[Any], explicit: bool
) -> Any:
    """A ``jax.sharding.Mesh`` over ``chosen`` devices, every axis ``Auto`` unless
    ``explicit`` (newer releases default to ``Explicit``)."""
    import jax

    types = _axis_types(len(names), explicit)
    extra = {"axis_types": types} if types is not None else {}
    return jax.make_mesh(sizes, names, devices=list(chosen), **extra)


def abstract_meshes_lower() -> bool:
    """Whether this release lowers for an ``AbstractMesh`` (0.5.0 on; 0.4.x's constructor,
    the one without ``axis_types``, belongs to the releases that cannot)."""
    from jax.sharding import AbstractMesh

    params = inspect.signature(AbstractMesh.__init__).parameters
    return "shape_tuple" not in params or "axis_types" in params


def make_abstract_mesh(sizes: tuple[int, ...], names: tuple[str, ...], explicit: bool) -> Any:
    """An ``AbstractMesh`` with each release's constructor."""
    from jax.sharding import AbstractMesh

    types = _axis_types(len(names), explicit)
    if not abstract_meshes_lower():
        raise unsupported("lowering for an abstract mesh (--abstract)", "0.5.0")
    if "shape_tuple" in inspect.signature(AbstractMesh.__init__).parameters:  # up to 0.5
        return AbstractMesh(tuple(zip(names, sizes)))
    if types is None:
        return AbstractMesh(sizes, names)
    return AbstractMesh(sizes, names, axis_types=types)


def is_abstract_mesh(value: Any) -> bool:
    from jax.sharding import AbstractMesh

    return isinstance(value, AbstractMesh)


def is_mesh(value: Any) -> bool:
    from jax.sharding import AbstractMesh, Mesh

    return isinstance(value, (Mesh, AbstractMesh))


def mesh_axes(jax_mesh: Any) -> tuple[tuple[str, int], ...]:
    """``(("data", 4), ("model", 2))`` of a concrete or abstract mesh."""
    shape = jax_mesh.shape
    return tuple((str(name), int(shape[name])) for name in jax_mesh.axis_names)


def mesh_device_ids(jax_mesh: Any) -> Any:
    return None if is_abstract_mesh(jax_mesh) else jax_mesh.device_ids


def use_mesh(jax_mesh: Any) -> Any:
    """A context manager that makes ``jax_mesh`` the ambient mesh (explicit sharding)."""
    import jax

    if not hasattr(jax, "set_mesh"):
        raise unsupported("explicit sharding (jax.set_mesh)", "0.7")
    return jax.set_mesh(jax_mesh)


MAX_SHARDING_DEVICES = 2**31 - 1
"""The largest mesh a ``NamedSharding`` can be made over: jaxlib counts its devices in 32
bits and throws ``std::bad_cast`` past it (measured with jax 0.10.2 on abstract meshes:
``a=2147483647`` works, ``a=2147483648`` and ``a=65536,b=32768`` do not)."""


def named_sharding(jax_mesh: Any, entries: Sequence[Any]) -> Any:
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


def partition_spec(entries: Sequence[Any]) -> Any:
    from jax.sharding import PartitionSpec

    return PartitionSpec(*entries)


def sharding_of_leaf(leaf: Any) -> tuple[Any, Any] | None:
    """``(spec, mesh)`` when ``leaf`` is or carries a ``NamedSharding``."""
    from jax.sharding import NamedSharding

    sharding = leaf if isinstance(leaf, NamedSharding) else getattr(leaf, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.spec, sharding.mesh
    return None


def hlo_sharding_text(sharding: Any, rank: int) -> str | None:
    """A JAX ``Sharding`` object as an HLO sharding string (``{devices=[2,1]<=[2]}``)."""
    try:
        return str(sharding._to_xla_hlo_sharding(rank))
    except (AttributeError, TypeError, ValueError):
        return None


def parse_hlo_sharding(text: str) -> Any:
    """XLA's ``HloSharding`` for a GSPMD string; ``ValueError`` when unreadable."""
    from jax._src.lib import xla_client as xc

    try:
        return xc.HloSharding.from_string(text)
    except Exception as err:  # XLA raises its own runtime error type
        raise ValueError(f"unreadable mhlo.sharding {text!r}: {err}") from None


# ---- pytrees and arrays -----------------------------------------------------------------


def tree_leaves(tree: Any, none_is_leaf: bool = False) -> list[Any]:
    import jax

    if none_is_leaf:
        return list(jax.tree_util.tree_leaves(tree, is_leaf=lambda x: x is None))
    return list(jax.tree_util.tree_leaves(tree))


def tree_leaves_with_path(tree: Any) -> list[tuple[tuple[Any, ...], Any]]:
    import jax

    return list(jax.tree_util.tree_flatten_with_path(tree)[0])


def tree_map(fun: Any, tree: Any, is_leaf: Any = None) -> Any:
    import jax

    return jax.tree_util.tree_map(fun, tree, is_leaf=is_leaf)


def keystr(path: tuple[Any, ...]) -> str:
    """``['w'][0].b``; a flat-index key (a node without key paths) prints as ``[i]``."""
    import jax

    parts = []
    for key in path:
        if isinstance(key, jax.tree_util.FlattenedIndexKey):
            parts.append(f"[{key.key}]")
        else:
            parts.append(jax.tree_util.keystr((key,)))
    return "".join(parts)


def shape_dtype_struct(shape: tuple[int, ...], dtype: str, sharding: Any = None) -> Any:
    import jax
    import jax.numpy as jnp

    if sharding is None:
        return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype), sharding=sharding)


# ---- staging ----------------------------------------------------------------------------


def is_array_leaf(leaf: Any) -> bool:
    """An array the program receives: a JAX or NumPy array, a NumPy scalar, or a
    ``ShapeDtypeStruct`` standing for one (what ``eqx.is_array`` accepts, plus the
    abstract values jxinspect builds)."""
    import jax
    import numpy as np

    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct))


def is_jax_value(leaf: Any) -> bool:
    """A leaf plain ``jax.jit`` accepts: an array (:func:`is_array_leaf`), a Python number,
    or an object that converts itself (``__jax_array__``)."""
    return (
        is_array_leaf(leaf)
        or isinstance(leaf, (bool, int, float, complex))
        or hasattr(leaf, "__jax_array__")
    )


def stand_in_array(leaf: Any) -> Any:
    """A NumPy array of a ``ShapeDtypeStruct``'s shape and dtype that allocates nothing
    (one zero, broadcast with zero strides): for wrappers that stage only real arrays
    (``eqx.filter_jit`` treats any other leaf as static). Other leaves are returned as
    they are."""
    import jax
    import numpy as np

    if not isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf
    return np.broadcast_to(np.zeros((), dtype=leaf.dtype), tuple(leaf.shape))


def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    import jax

    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return list(leaves), treedef


def tree_unflatten(treedef: Any, leaves: Sequence[Any]) -> Any:
    import jax

    return jax.tree_util.tree_unflatten(treedef, list(leaves))


def inner_traced(staged: Any) -> Any:
    """JAX's ``Traced`` inside a library's own (``flax.nnx``'s ``Traced`` keeps it in
    ``.traced``); JAX's own is returned as it is."""
    inner = getattr(staged, "traced", None)
    return inner if inner is not None and hasattr(inner, "jaxpr") else staged


def is_jit_wrapped(fun: Any) -> bool:
    """A ``jax.jit``/``pjit`` object (not pmap, which some releases also give ``trace``)."""
    if is_pmap_wrapped(fun):
        return False
    return callable(getattr(fun, "trace", None)) and callable(getattr(fun, "lower", None))


def is_pmap_wrapped(fun: Any) -> bool:
    """A ``jax.pmap`` object of any release."""
    if type(fun).__name__ == "PmapFunction":
        return True
    return callable(getattr(fun, "lower", None)) and not hasattr(fun, "trace")


@functools.cache
def pmap_axis_default() -> str:
    """What the program calls pmap's axis when no ``axis_name`` is given: pmap built on
    shard_map (0.10) names it ``_internal_pmap_axis_name`` in its mesh; the older pmap's
    axis is an anonymous object that no program names, shown as ``(unnamed)``."""
    import jax

    if type(jax.pmap(lambda x: x)).__name__ == "PmapFunction":
        return "(unnamed)"
    return "_internal_pmap_axis_name"


def pmap_global_shapes() -> bool:
    """Whether pmap lowers one global program (0.10, built on shard_map) rather than one
    replica's, with per-device shapes."""
    return pmap_axis_default() != "(unnamed)"


_ARGNAMES = ("static_argnames", "donate_argnames")


def _interned(options: dict[str, Any]) -> dict[str, Any]:
    """Argument names as interned strings: 0.4.35's C++ argument parser matches keyword
    names against ``static_argnames`` by identity, so a name read from a file (not a
    literal in the user's code) would be taken for a dynamic argument."""
    result = dict(options)
    for key in _ARGNAMES:
        names = result.get(key)
        if isinstance(names, str):
            result[key] = sys.intern(names)
        elif names is not None:
            result[key] = tuple(sys.intern(n) if isinstance(n, str) else n for n in names)
    return result


def jit(fun: Any, options: dict[str, Any]) -> Any:
    import jax

    return jax.jit(fun, **_interned(options))


def pjit(fun: Any, options: dict[str, Any]) -> Any:
    import warnings

    from jax.experimental.pjit import pjit as make

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return make(fun, **_interned(options))


def pmap(fun: Any, options: dict[str, Any]) -> Any:
    import jax

    return jax.pmap(fun, **options)


def shard_map(fun: Any, options: dict[str, Any]) -> Any:
    """``jax.shard_map`` where it exists, else ``jax.experimental.shard_map``
    (``check_vma`` → ``check_rep``, ``axis_names`` → ``auto``, its complement)."""
    import jax

    if hasattr(jax, "shard_map"):
        return jax.shard_map(fun, **options)
    from jax.experimental.shard_map import shard_map as old_shard_map

    options = dict(options)
    if "check_vma" in options:
        options["check_rep"] = options.pop("check_vma")
    if "axis_names" in options:
        manual = set(options.pop("axis_names"))
        options["auto"] = frozenset(set(options["mesh"].axis_names) - manual)
    return old_shard_map(fun, **options)


def make_jaxpr(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], statics: Any) -> Any:
    """``(closed_jaxpr, out_shape_tree)`` of ``fun(*args, **kwargs)``."""
    import jax

    return jax.make_jaxpr(fun, static_argnums=statics, return_shape=True)(*args, **kwargs)


def jaxpr_of(traced: Any) -> Any:
    """The top-level ``Jaxpr`` of a ``Traced``."""
    return traced.jaxpr.jaxpr


def in_avals(jaxpr: Any) -> list[Any]:
    """The abstract values of a ``Jaxpr``'s inputs (``Jaxpr.in_avals`` is newer than 0.4.35)."""
    return [v.aval for v in jaxpr.invars]


def out_avals(jaxpr: Any) -> list[Any]:
    return [v.aval for v in jaxpr.outvars]


def donated_flags(
    stage: Any, args: tuple[Any, ...], kwargs: dict[str, Any], donate_argnums: Any
) -> tuple[bool, ...]:
    """Per flat argument: donated, from a ``Traced`` or ``Lowered``'s ``args_info``; from
    ``donate_argnums`` over the call's own leaves when a user's pytree node refuses the
    ``ArgInfo`` leaves that ``args_info`` rebuilds it with (a validating constructor)."""
    import jax

    try:
        return tuple(bool(a.donated) for a in jax.tree_util.tree_leaves(stage.args_info))
    except Exception:  # the user's tree_unflatten raised
        nums = {donate_argnums} if isinstance(donate_argnums, int) else set(donate_argnums or ())
        nums = {n + len(args) if n < 0 else n for n in nums}
        flags = [i in nums for i, arg in enumerate(args) for _ in jax.tree_util.tree_leaves(arg)]
        return (*flags, *(False for _ in jax.tree_util.tree_leaves(kwargs)))


def out_info(stage: Any) -> Any | None:
    """``out_info`` of a ``Traced``/``Lowered``; ``None`` where the release has none for
    it (the older pmap's lowering)."""
    try:
        return stage.out_info
    except (KeyError, AttributeError):
        return None


def lower(staged_or_traced: Any, args: Any, kwargs: Any, platform: str | None) -> Any:
    """``Traced.lower()`` (args ``None``) or ``staged.lower(*args, **kwargs)``."""
    extra = {"lowering_platforms": (platform,)} if platform else {}
    if args is None:
        return staged_or_traced.lower(**extra)
    return staged_or_traced.lower(*args, **kwargs, **extra)


def kept_inputs(lowered: Any) -> list[int] | None:
    """Indices of the flat inputs that survived lowering, as JAX recorded them."""
    lowering = getattr(lowered, "_lowering", None)
    args = getattr(lowering, "compile_args", None)
    kept = args.get("kept_var_idx") if isinstance(args, dict) else None
    return sorted(int(i) for i in kept) if kept is not None else None


def stablehlo_module(lowered: Any) -> Any:
    return lowered.compiler_ir("stablehlo")


def lowered_text(lowered: Any, dialect: str, debug_info: bool) -> str:
    """The lowered module as JAX prints it, with locations when ``debug_info``."""
    if not debug_info:
        return str(lowered.as_text(dialect=dialect))
    if "debug_info" in inspect.signature(lowered.as_text).parameters:
        return str(lowered.as_text(dialect=dialect, debug_info=True))
    if dialect != "stablehlo":
        return str(lowered.as_text(dialect=dialect))  # HLO text of 0.4.35 keeps no names
    module = lowered.compiler_ir("stablehlo")
    return str(module.operation.get_asm(enable_debug_info=True, large_elements_limit=20))


# ---- jaxprs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DebugInfo:
    """A jaxpr's debug info as every release spells it (``JaxprDebugInfo`` in 0.4.x)."""

    traced_for: str
    func_src_info: str | None
    arg_names: tuple[str, ...] | None
    result_paths: tuple[str, ...] | None


def debug_info(jaxpr: Any) -> DebugInfo | None:
    info = getattr(jaxpr, "debug_info", None)
    if info is None:
        return None
    names = getattr(info, "arg_names", None)
    paths = getattr(info, "result_paths", None)
    if callable(paths):  # some releases compute them lazily
        paths = paths()
    return DebugInfo(
        traced_for=str(info.traced_for),
        func_src_info=str(info.func_src_info) if info.func_src_info is not None else None,
        arg_names=tuple(str(n) for n in names) if names is not None else None,
        result_paths=tuple(str(p) for p in paths) if paths is not None else None,
    )


def sub_jaxprs(params: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(label, jaxpr)`` for each jaxpr in an equation's parameters (``branches[1]``)."""
    from jax._src import core

    for key, value in params.items():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for i, item in enumerate(items):
            label = f"{key}[{i}]" if isinstance(value, (tuple, list)) else key
            if isinstance(item, core.ClosedJaxpr):
                yield label, item.jaxpr
            elif isinstance(item, core.Jaxpr):
                yield label, item


def user_source_line(eqn: Any) -> tuple[str, int] | None:
    """``(file, line)`` of the user's frame that an equation came from."""
    from jax._src import source_info_util

    info = eqn.source_info
    try:
        frame = source_info_util.user_frame(info.traceback)
    except AttributeError:  # 0.4.35 takes the SourceInfo itself
        frame = source_info_util.user_frame(info)
    if frame is None:
        return None
    return str(frame.file_name), int(frame.start_line)


@functools.cache
def result_paths_prefixed() -> bool:
    """Whether this release writes ``result['a']`` (0.5 on) rather than ``['a']`` (0.4.x),
    found by tracing a one-line function (about a millisecond)."""
    import jax

    info = debug_info(jax.make_jaxpr(lambda x: {"a": x})(1.0).jaxpr)
    paths = info.result_paths if info is not None else None
    return not paths or paths[0].startswith("result")


_FLAT_INDEX = re.compile(r"\[<flat index (\d+)>\]")


def newer_spelling(name: str) -> str:
    """A name or path in the newer releases' spelling: 0.4.x printed the key of a pytree
    node without key paths as ``[<flat index 0>]`` where newer releases print ``[0]``."""
    return _FLAT_INDEX.sub(r"[\1]", name)


def normalize_result_path(carried: str, prefixed: bool) -> str:
    """A result path in the newer spelling: up to 0.5 JAX wrote ``['y']`` (``""`` for a
    lone result) where newer releases write ``result['y']`` (``result``); ``prefixed``
    says whether the release that wrote ``carried`` uses the newer spelling. Flat-index
    keys are respelled too (:func:`newer_spelling`)."""
    carried = newer_spelling(carried)
    if prefixed or carried.startswith("result"):
        return carried
    return "result" + carried


def prefixes_results(paths: Sequence[str | None]) -> bool | None:
    """Whether result paths follow the newer spelling; ``None`` when they do not say."""
    named = [p for p in paths if p]
    if any(p.startswith("result") for p in named):
        return True
    if any(p.startswith(("[", ".")) for p in named):
        return False
    return None


# ---- MLIR -------------------------------------------------------------------------------


def parse_module(text: str | bytes) -> Any:
    """Parse StableHLO text or bytecode with every dialect JAX registers."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir

    context = jax_mlir.make_ir_context()
    with context:
        return ir.Module.parse(text)


def sdy() -> Any:
    """jaxlib's Shardy dialect bindings (every supported release has them)."""
    from jaxlib.mlir.dialects import sdy as dialect

    return dialect


def stablehlo() -> Any:
    from jaxlib.mlir.dialects import stablehlo as dialect

    return dialect


def ir() -> Any:
    """jaxlib's MLIR core bindings (types and attributes whose API every release shares)."""
    from jaxlib.mlir import ir as bindings

    return bindings


_LOC_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)$", re.M)
_BLOCK_ARG = re.compile(r"%arg(\d+): .*? loc\((#loc\d*|\"(?:[^\"\\]|\\.)*\"[^)]*|[^)]*)\)")
_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"')


def _unescape(text: str) -> str:
    """MLIR's string escapes (``\\22``, ``\\\\``, ``\\n``; non-ASCII as escaped UTF-8
    bytes) back to characters."""
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 >= len(text):
            out += char.encode()
            i += 1
            continue
        code = text[i + 1]
        if code in '\\"nt':
            out += {"\\": b"\\", '"': b'"', "n": b"\n", "t": b"\t"}[code]
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1 : i + 3]):
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            out += char.encode()
            i += 1
    return out.decode("utf-8", errors="replace")


def _printed_name(loc_text: str) -> str | None:
    """The name of a printed location (``"params['w']"``), ``None`` for other kinds."""
    match = _QUOTED.match(loc_text)
    if match is None:
        return None
    rest = loc_text[match.end() :]
    if rest.startswith(":"):  # "file.py":3:4, a file location
        return None
    return _unescape(match.group(1))


def block_argument_names(func: Any) -> list[str | None]:
    """Each entry-block argument's name (its ``NameLoc``), ``None`` where it has none."""
    arguments = list(func.regions[0].blocks[0].arguments)
    if arguments and hasattr(arguments[0], "location"):
        return [location_name(a.location) for a in arguments]
    return printed_argument_names(func)


def printed_argument_names(func: Any) -> list[str | None]:
    """:func:`block_argument_names` for bindings without ``BlockArgument.location``
    (0.4.35): the names from the printed header of a body-less copy of the function."""
    arguments = list(func.regions[0].blocks[0].arguments)
    copy = func.operation.clone()
    block = copy.regions[0].blocks[0]
    for op in reversed(list(block.operations)):
        op.erase()
    text = copy.get_asm(enable_debug_info=True)
    aliases = {m.group(1): m.group(2) for m in _LOC_ALIAS.finditer(text)}
    names: list[str | None] = [None] * len(arguments)
    header = text[text.find("^bb0(") :]
    for match in _BLOCK_ARG.finditer(header[: header.find("\n")]):
        index, loc = int(match.group(1)), match.group(2)
        loc = aliases.get(loc, loc)
        if index < len(names):
            names[index] = _printed_name(loc)
    return names


def block_argument_number(value: Any, block: Any) -> int | None:
    """The argument number when ``value`` is an argument of ``block``, else ``None``
    (0.7's bindings hand operands out as plain ``Value``s, to be cast)."""
    from jaxlib.mlir import ir as bindings

    if not isinstance(value, bindings.BlockArgument):
        if not bindings.BlockArgument.isinstance(value):
            return None
        value = bindings.BlockArgument(value)
    arguments = list(block.arguments)
    number = int(value.arg_number)
    if number < len(arguments) and arguments[number] == value:
        return number
    return None


@dataclass(frozen=True)
class Loc:
    """One MLIR location, the same on every release's bindings."""

    kind: str
    """``name``, ``callsite``, ``file``, ``fused`` or ``unknown``."""
    name: str | None = None
    filename: str | None = None
    line: int | None = None
    children: tuple[Any, ...] = ()
    """name: (child,); callsite: (callee, caller); fused: its locations (raw objects)."""


_FILE_LINE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+')
_NAME_IN_TEXT = re.compile(r'"((?:[^"\\]|\\.)*)"(?!:\d)')


def read_location(location: Any) -> Loc:
    """What one location is, through whichever bindings this jaxlib has."""
    from jaxlib.mlir import ir as bindings

    if isinstance(location, Loc):  # already read (0.4.35's printed form nests them)
        return location
    if hasattr(bindings, "NameLoc"):  # 0.8 on: one class per kind
        if isinstance(location, bindings.NameLoc):
            return Loc("name", name=str(location.name_str), children=(location.child_loc,))
        if isinstance(location, bindings.CallSiteLoc):
            return Loc("callsite", children=(location.callee, location.caller))
        if isinstance(location, bindings.FileLineColLoc):
            return Loc("file", filename=str(location.filename), line=int(location.start_line))
        if isinstance(location, bindings.FusedLoc):
            return Loc("fused", children=tuple(location.locations))
        return Loc("unknown")
    if hasattr(location, "is_a_name"):  # 0.5–0.7: predicates on Location
        if location.is_a_name():
            return Loc("name", name=str(location.name_str), children=(location.child_loc,))
        if location.is_a_callsite():
            return Loc("callsite", children=(location.callee, location.caller))
        if location.is_a_file():
            return Loc("file", filename=str(location.filename), line=int(location.start_line))
        if location.is_a_fused():
            return Loc("fused", children=tuple(location.locations))
        return Loc("unknown")
    # 0.4.35: only the printed form; keep the outer name and the innermost file:line
    text = str(location)
    names = [_unescape(m.group(1)) for m in _NAME_IN_TEXT.finditer(text)]
    name = names[0] if names else None
    files = _FILE_LINE.findall(text)
    if name is not None:
        child = (
            Loc("file", filename=_unescape(files[0][0]), line=int(files[0][1]))
            if files
            else Loc("unknown")
        )
        return Loc("name", name=name, children=(child,))
    if files:
        return Loc("file", filename=_unescape(files[0][0]), line=int(files[0][1]))
    return Loc("unknown")


def location_name(location: Any) -> str | None:
    """The name of a ``NameLoc`` (a block argument's name), else ``None``."""
    read = read_location(location)
    return read.name if read.kind == "name" else None


# ---- compiled programs ------------------------------------------------------------------


def compiled_shardings(compiled: Any) -> tuple[list[Any], list[Any]]:
    """Flat (input, output) shardings XLA chose, ``None`` where it gave none."""
    import jax

    def flat(tree: Any) -> list[Any]:
        return list(jax.tree_util.tree_leaves(tree, is_leaf=lambda x: x is None))

    return flat(compiled.input_shardings), flat(compiled.output_shardings)


def optimized_module(compiled: Any) -> Any:
    """The compiled program's optimized HLO as a StableHLO module."""
    hlo = compiled.runtime_executable().hlo_modules()[0]
    return _hlo_to_module(hlo)


def module_from_hlo_text(text: str) -> Any:
    """An HLO text module (e.g. an XLA dump) as a StableHLO module."""
    from jax._src.lib import xla_client as xc

    try:
        from jaxlib import _hlo

        reader = _hlo.hlo_module_from_text
    except ImportError:
        reader = xc._xla.hlo_module_from_text
    return _hlo_to_module(reader(text))


def _hlo_to_module(hlo: Any) -> Any:
    from jax._src import lib

    proto = hlo.as_serialized_hlo_module_proto()
    for holder in (getattr(lib, "_jax", None), getattr(lib.xla_client, "_xla", None)):
        converter = getattr(getattr(holder, "mlir", None), "hlo_to_stablehlo", None)
        if converter is not None:
            return parse_module(converter(proto))
    # 0.4.35: the XlaComputation route; StableHLO where it converts, else MHLO (async
    # collectives have no StableHLO form there), which names its ops alike (mhlo.all_gather)
    computation = lib.xla_client.XlaComputation(proto)
    convert = lib.xla_client._xla.mlir.xla_computation_to_mlir_module
    try:
        return parse_module(convert(computation))
    except Exception:  # XlaRuntimeError: MHLO => StableHLO failed
        return parse_module(convert(computation, emit_stable_hlo=False))


# ---- recording a real run -----------------------------------------------------------------


@dataclass(frozen=True)
class Lowering:
    """One computation that a real run lowered, as JAX lowered it (``jxinspect record``)."""

    stage: str
    """``jit`` (which ``pjit``, ``shard_map`` and library wrappers go through) or ``pmap``
    (0.10's pmap, a jit around shard_map; the older pmap, which lowers one replica's
    program with per-device shapes)."""
    jaxpr: Any
    """The lowered ``Jaxpr``."""
    names_jaxpr: Any
    """The jaxpr whose debug info names the arguments."""
    name: str
    """The function's name, as JAX gave it to the lowering."""
    source: str | None
    """``step at train.py:12``: JAX's debug info, or for pmap built on shard_map (which
    names only its own ``_fun``) the user's function and line that its first operation
    came from; ``None`` where JAX kept neither (the older pmap)."""
    lowered: Any
    """A ``jax.stages.Lowered`` around JAX's own lowering of it (``None`` if internal)."""
    donated: tuple[bool, ...]
    shardings: tuple[Any, ...]
    """The input shardings JAX lowered with (``NamedSharding``s name their mesh)."""
    signature: str
    """Input types and shardings: two lowerings of one function with equal signatures
    are the same program traced again."""
    internal: bool
    """JAX's own computation (an eager operation, a ``jnp`` function), not the user's."""
    call: Call | None = None
    """The call that made JAX lower it, where a ``jit`` call did (not ``.lower()``)."""


@dataclass(frozen=True)
class Call:
    """A ``jit`` call as the user made it: the function, its arguments as given (static
    values included) and the ``jit`` options that say which are static or donated."""

    fun: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]
    donate_argnums: tuple[int, ...]


def _call_site() -> Call | None:
    """The ``jit`` call being lowered: ``pjit``'s ``cache_miss`` frame holds it (its own
    locals ``args``/``kwargs``, its closure's ``fun``/``jit_info``) in every release."""
    frame: Any = sys._getframe(2)
    for _ in range(40):
        if frame is None:
            return None
        code = frame.f_code
        if code.co_name == "cache_miss" and code.co_filename.endswith("pjit.py"):
            found = frame.f_locals
            info = found.get("jit_info")
            if info is None or not isinstance(found.get("args"), tuple):
                return None
            return Call(
                found.get("fun"),
                found["args"],
                dict(found.get("kwargs") or {}),
                tuple(getattr(info, "static_argnums", ()) or ()),
                tuple(getattr(info, "static_argnames", ()) or ()),
                tuple(getattr(info, "donate_argnums", ()) or ()),
            )
        frame = frame.f_back
    return None


def _lowered(computation: Any, jaxpr: Any, donated: Sequence[bool]) -> Any:
    import jax
    from jax._src import stages

    infos = tuple(stages.ArgInfo(v.aval, bool(d)) for v, d in zip(jaxpr.invars, donated))
    out_tree = jax.tree_util.tree_structure([0] * len(jaxpr.outvars))
    return stages.Lowered(computation, infos, out_tree)


def _source(jaxpr: Any) -> str:
    info = debug_info(jaxpr)
    return (info.func_src_info or "") if info is not None else ""


def _inside_jax(source: str) -> bool:
    import jax

    return f" at {os.path.dirname(jax.__file__)}{os.sep}" in source


def _user_frame(jaxpr: Any) -> str | None:
    """``step at train.py:6``: the user's function and line of a jaxpr's first operation."""
    from jax._src import source_info_util

    for eqn in jaxpr.eqns:
        try:
            frame = source_info_util.user_frame(eqn.source_info.traceback)
        except AttributeError:  # 0.4.35 takes the SourceInfo itself
            frame = source_info_util.user_frame(eqn.source_info)
        if frame is not None:
            return f"{frame.function_name} at {frame.file_name}:{frame.start_line}"
        for _, inner in sub_jaxprs(eqn.params):
            found = _user_frame(inner)
            if found is not None:
                return found
    return None


def _lowering(stage: str, name: str, jaxpr: Any, computation: Any, donated: tuple[bool, ...],
              in_shardings: Any) -> Lowering:  # fmt: skip
    source: str | None = _source(jaxpr)
    internal = _inside_jax(source or "")
    if internal and f"{os.sep}pmap.py:" in (source or ""):  # 0.10's pmap around the user's body
        stage, internal, source = "pmap", False, _user_frame(jaxpr)
        name = source_parts(source)[0] or name
    if internal:
        return Lowering(stage, jaxpr, jaxpr, name, source, None, donated, (), "", True)
    shardings = tuple(in_shardings or ())
    types = ", ".join(str(v.aval) for v in jaxpr.invars)
    said = ", ".join(str(s) for s in shardings)
    signature = f"({types}) donated={[i for i, d in enumerate(donated) if d]} [{said}]"
    lowered = _lowered(computation, jaxpr, donated)
    return Lowering(
        stage, jaxpr, jaxpr, name, source or None, lowered, donated, shardings, signature, False
    )


_HOOK = {"installed": False, "warned": False}


def install_lowering_hook(callback: Any) -> None:
    """Call ``callback(Lowering)`` after each computation JAX lowers in this process.

    It wraps ``pxla.lower_sharding_computation``, the one lowering step that ``jit``,
    ``pjit``, ``shard_map``, the 0.10 ``pmap`` and every wrapper built on them share, and
    ``pxla.lower_parallel_callable`` of the older pmap; what JAX returns is returned
    unchanged. ``callback`` runs only when JAX lowers (a cache miss), never per call.
    An ``Exception`` from it is reported once and dropped: recording never breaks the run.
    """
    from jax._src.interpreters import pxla

    if _HOOK["installed"]:
        return
    _HOOK["installed"] = True

    def _report(stage: str, signature: Any, computation: Any, args: Any, kwargs: Any) -> None:
        try:
            bound = signature.bind(*args, **kwargs).arguments
            closed = bound.get("closed_jaxpr")
            if closed is None:
                return
            donated = tuple(bool(d) for d in bound["donated_invars"])
            shardings = bound.get("in_shardings", bound.get("in_axes"))
            name = str(bound.get("fun_name", bound.get("name")))
            lowering = _lowering(stage, name, closed.jaxpr, computation, donated, shardings)
            if not lowering.internal and stage == "jit":
                lowering = dataclasses.replace(lowering, call=_call_site())
            callback(lowering)
        except Exception as err:  # recording must never break the user's program
            if not _HOOK["warned"]:
                _HOOK["warned"] = True
                print(f"jxinspect record: could not record a computation: {err!r}",
                      file=sys.stderr)  # fmt: skip

    def hooked(stage: str, original: Any) -> Any:
        signature = inspect.signature(original)

        @functools.wraps(original)
        def lower(*args: Any, **kwargs: Any) -> Any:
            computation = original(*args, **kwargs)
            _report(stage, signature, computation, args, kwargs)
            return computation

        return lower

    pxla.lower_sharding_computation = hooked("jit", pxla.lower_sharding_computation)
    if hasattr(pxla, "lower_parallel_callable"):  # the older pmap
        pxla.lower_parallel_callable = hooked("pmap", pxla.lower_parallel_callable)


def when_jax_imported(action: Any) -> None:
    """Run ``action()`` once JAX has been imported: now, or right after ``import jax``
    finishes (a finder that steps aside for every other module)."""
    if "jax" in sys.modules and hasattr(sys.modules["jax"], "jit"):
        action()
        return
    import importlib.abc
    import importlib.machinery

    class _AfterJax(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name != "jax":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            loader = spec.loader
            run = loader.exec_module

            def exec_module(module: Any) -> None:
                run(module)
                action()

            loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, _AfterJax())
