"""Staging: wrapping a function with each release's ``jit``, ``pjit``, ``pmap`` and
``shard_map``, and telling the wrapped kinds apart.

* **shard_map**: ``jax.experimental.shard_map.shard_map(check_rep=, auto=)`` up to 0.5
  (0.4.35, 0.5.3), ``jax.shard_map(check_vma=, axis_names=)`` from 0.6 on (0.6.2).
* **pmap**: a ``PmapFunction`` with ``.trace`` (0.4.35), without it (0.7); from 0.8 on a
  function that lowers through jit/shard_map (global shapes; ``args[i]`` names on 0.8,
  ``flat_args[i]`` from 0.9; its anonymous mesh axis prints as an object,
  ``<axis 0x7f…>``, on 0.8 to 0.10.1, as ``_internal_pmap_axis_name`` on 0.10.2). Up to 0.7
  the program is one replica's (per-device shapes); it keeps the real names up to 0.7.1
  and none in 0.7.2.
* **Static argument names**: 0.4.35 matches keyword names against ``static_argnames`` by
  identity; names read from a declaration are interned before they reach ``jit``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from jxinspect.core.errors import UsageError
from jxinspect.tracer.seam.objects import Jaxpr, OutInfo, Traced, Wrapped
from jxinspect.tracer.seam.spelling import UNNAMED_AXIS


def inner_traced(staged: Traced) -> Traced:
    """JAX's ``Traced`` inside a library's own (``flax.nnx``'s ``Traced`` keeps it in
    ``.traced``); JAX's own is returned as it is."""
    inner = getattr(staged, "traced", None)
    return inner if inner is not None and hasattr(inner, "jaxpr") else staged


def is_jit_wrapped(fun: object) -> bool:
    """A ``jax.jit``/``pjit`` object (not pmap, which some releases also give ``trace``)."""
    if is_pmap_wrapped(fun):
        return False
    return callable(getattr(fun, "trace", None)) and callable(getattr(fun, "lower", None))


def is_pmap_wrapped(fun: object) -> bool:
    """A ``jax.pmap`` object of any release."""
    if type(fun).__name__ == "PmapFunction":
        return True
    return callable(getattr(fun, "lower", None)) and not hasattr(fun, "trace")


@functools.cache
def pmap_axis_default() -> str:
    """What the report calls pmap's axis when no ``axis_name`` is given: pmap built on
    shard_map names it ``_internal_pmap_axis_name`` in its mesh on 0.10.2; on 0.8 to 0.10.1
    it is an object's ``<axis 0x7f…>`` (another each run), and the older pmap's axis is
    an anonymous object that no program names: both read as ``(unnamed)``."""

    if not pmap_global_shapes():
        return UNNAMED_AXIS
    from jax._src import pmap as pmap_module

    fixed = "_internal_pmap_axis_name"
    prepare = getattr(pmap_module, "_prepare_pmap", None)  # 0.8 has one, naming no axis
    if fixed in getattr(getattr(prepare, "__code__", None), "co_consts", ()):
        return fixed  # 0.10.2: the axis gets this fixed name
    return UNNAMED_AXIS


@functools.cache
def pmap_global_shapes() -> bool:
    """Whether pmap lowers one global program (0.8 on, through jit/shard_map) rather
    than one replica's, with per-device shapes (a ``PmapFunction``)."""
    import jax

    return type(jax.pmap(lambda x: x)).__name__ != "PmapFunction"


def needs_concrete_value(err: BaseException) -> bool:
    """Whether tracing failed because Python code needed a traced value's concrete value
    (``range(n)``, ``if x:``, ``int(n)`` on a tracer)."""
    import jax

    kinds = (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError)
    return isinstance(err, kinds)


def sharding_type_error(err: BaseException) -> bool:
    """Whether tracing failed on JAX's check of an operation's sharding type
    (``ShardingTypeError``, 0.6 on), which it makes only over ``Explicit`` mesh axes
    (sharding in types; staged here from 0.7, whose ``jax.set_mesh`` they need): ``Auto``
    axes type no sharding, and the compiler propagates one instead."""
    from jax._src import core

    kind = getattr(core, "ShardingTypeError", None)
    return kind is not None and isinstance(err, kind)


_WRAPPER_KEYS = ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames")


def wrapper_keywords(fun: object) -> dict[str, Any]:
    """The statics and donation a ``jax.jit`` object was made with, as ``jit``'s keywords
    (resolved: names and positions alike), read from its ``PjitInfo``: ``_jit_info``
    from 0.7 on, its ``_cache_miss``'s closure in 0.4.35. Empty for anything else."""
    info = jit_info(fun)
    if info is None:
        return {}
    return {key: tuple(getattr(info, key, ()) or ()) for key in _WRAPPER_KEYS}


def jit_info(fun: object) -> Any:
    """A ``jax.jit`` object's ``PjitInfo`` (the options it was made with): ``_jit_info``
    from 0.7 on, its ``_cache_miss``'s closure in 0.4.35; ``None`` for anything else."""
    if not is_jit_wrapped(fun):
        return None
    info = getattr(fun, "_jit_info", None)
    miss = getattr(fun, "_cache_miss", None)
    for _ in range(3):  # cache_miss, or the function whose closure holds it
        if info is not None or miss is None:
            break
        cells = dict(zip(miss.__code__.co_freevars, miss.__closure__ or ()))
        info = cells["jit_info"].cell_contents if "jit_info" in cells else None
        inner = cells.get("fun")
        miss = inner.cell_contents if inner is not None and info is None else None
    return info


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


def jit(fun: Callable[..., Any], options: dict[str, Any]) -> Wrapped:
    import jax

    return jax.jit(fun, **_interned(options))


def pjit(fun: Callable[..., Any], options: dict[str, Any]) -> Wrapped:
    import warnings

    from jax.experimental.pjit import pjit as make

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return make(fun, **_interned(options))


def pmap(fun: Callable[..., Any], options: dict[str, Any]) -> Wrapped:
    import jax

    return jax.pmap(fun, **options)


def shard_map(fun: Callable[..., Any], options: dict[str, Any]) -> Wrapped:
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


SHARD_MAP_KEYS = ("mesh", "in_specs", "out_specs", "axis_names", "check_vma")
"""The options that go to ``shard_map``; the rest go to the ``jit`` around it."""


def shard_map_in_jit(fun: Callable[..., Any], options: dict[str, Any]) -> Wrapped:
    """``jit`` of ``shard_map(fun)``, each given its own options."""
    inner = {k: v for k, v in options.items() if k in SHARD_MAP_KEYS}
    outer = {k: v for k, v in options.items() if k not in SHARD_MAP_KEYS}
    if "out_specs" not in inner:
        raise UsageError("shard_map needs --out-specs, e.g. --out-specs \"P('data')\"")
    return jit(shard_map(fun, inner), outer)


def make_jaxpr(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], statics: Any
) -> tuple[Jaxpr, OutInfo]:
    """``(jaxpr, out_shape_tree)`` of ``fun(*args, **kwargs)``: the open jaxpr (its
    constants left off) and the ``ShapeDtypeStruct``s it returns."""
    import jax

    closed, shapes = jax.make_jaxpr(fun, static_argnums=statics, return_shape=True)(*args, **kwargs)
    return closed.jaxpr, shapes


def jaxpr_of(traced: Traced) -> Jaxpr:
    """The top-level ``Jaxpr`` of a ``Traced``."""
    return traced.jaxpr.jaxpr
