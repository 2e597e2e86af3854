"""Equinox's ``eqx.filter_pmap``: array leaves are mapped, every other leaf is static.

The wrapper splits ``(fun, args, dummy, out_axes)`` into its array leaves and the rest and
calls an inner ``jax.pmap`` with the array leaves alone, ``(dynamic,)``: JAX names them
``_dynamic[1][0]`` (``flat_args[i]`` where pmap is built on ``shard_map``). The inner
function returns ``(pmapd, dynamic_nonpmapd, Static(static_nonpmapd))``: the user's result
once per output axis it may be mapped over (``-n`` to ``n - 1``, each with ``None`` for the
leaves that are not), then the leaves that are not mapped; a leaf keeps its key path
below each, so the program's ``result[0][3]['loss']`` is the user's ``result['loss']``.

The inner ``jax.pmap`` is staged as jxinspect stages a ``jax.pmap`` object. Equinox maps
only real arrays; jxinspect's abstract inputs are given as NumPy arrays that allocate
nothing (:func:`seam.stand_in_array`).
"""

from __future__ import annotations

from typing import Any

from equinox import _vmap_pmap

from jxinspect.core.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters.adapted import Adapted, unmapped

WRAPPER = "eqx.filter_pmap"


def matches(fun: Any) -> bool:
    return isinstance(fun, getattr(_vmap_pmap, "_PmapWrapper", ()))


def stage(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """Preprocess the call as ``eqx.filter_pmap`` does; the inner ``jax.pmap`` and its
    arguments come back in ``pmap`` for the caller to stage."""
    names = ("_common_preprocess", "_named_in_axes", "_resolve_axes", "_filter_pmap_cache")
    parts: list[Any] = [getattr(_vmap_pmap, name, None) for name in names]
    if any(part is None for part in parts):
        raise UsageError(
            f"{WRAPPER} of this equinox release is not supported; "
            "stage the undecorated function with --stage pmap"
        )
    common, named_in_axes, resolve_axes, cache = parts
    args = tuple(seam.tree_map(seam.stand_in_array, a) for a in args)
    if kwargs:
        common(fun._axis_size, kwargs)  # equinox's own error: no keyword arguments
    dummy = common(fun._axis_size, {})
    axes = (None, resolve_axes(args, named_in_axes(fun._fun, fun._in_axes, args)), 0, None)
    dynamic, static = _vmap_pmap.partition(
        (fun._fun, args, dummy, fun._out_axes), _vmap_pmap.is_array
    )
    struct = seam.tree_map(lambda x: seam.shape_dtype_struct(x.shape, str(x.dtype)), dynamic)
    inner = cache(fun._fun, static, struct, axes, fun._axis_name, fun._axis_size,
                  fun._pmapkwargs)  # fmt: skip
    leaves, _ = seam.tree_flatten(dynamic)
    return Adapted(WRAPPER, fun._fun, None, leaves, args, {}, pmap=(inner, (dynamic,), {}))


def result_paths(
    adapted: Adapted, out_info: Any
) -> tuple[list[str | None] | None, tuple[str, ...]]:
    """The user's path of each result of ``(pmapd, dynamic_nonpmapd, Static(...))``, and
    the notes to add (one when the results cannot be mapped). ``pmapd`` keeps the user's
    tree below each axis; ``dynamic_nonpmapd`` is flat (one entry per leaf of the
    unmapped part, ``None`` for the static ones), its tree in the ``Static``."""
    try:
        pmapd, nonpmapd, static = out_info
        _, treedef = static.value
        count = len(seam.tree_leaves(nonpmapd, none_is_leaf=True))
        unmapped_paths = seam.tree_leaves_with_path(seam.tree_unflatten(treedef, range(count)))
    except (TypeError, ValueError, AttributeError):
        return None, (unmapped(WRAPPER, "equinox"),)
    by_position = {i: "result" + seam.keystr(path) for path, i in unmapped_paths}
    results: list[str | None] = [
        "result" + seam.keystr(path[1:]) for path, _ in seam.tree_leaves_with_path(pmapd)
    ]
    for path, _ in seam.tree_leaves_with_path(nonpmapd):
        position = getattr(path[0], "idx", None) if len(path) == 1 else None
        results.append(by_position.get(position) if isinstance(position, int) else None)
    return results, ()
