"""Flax NNX's ``nnx.shard_map``: graph nodes are split into a graph definition and their
state, which an inner ``jax.shard_map`` (the wrapper's ``.inner``) maps over the mesh.

``nnx.shard_map`` returns a plain function, recognized by its code object: one of the
functions ``nnx.shard_map`` itself defines (found among its code's constants, never by
name), which closes over the inner ``shard_map_fn``.

Called outside ``jit``, a ``shard_map`` runs as one program: it is staged as
``jax.jit`` of the inner ``shard_map``, with the call split as the wrapper splits it. Graph
mode with graph updates (flax's default): ``extract.to_tree`` inside an update context
tagged with the wrapper, and the inner function returns ``(args_out, kwargs_out, out)``
as ``nnx.jit``'s does. Tree mode or ``graph_updates=False`` (flax 0.12): the positional
arguments converted with ``extract.to_tree2`` (graph mode), and the inner function returns
``(out, updates)`` as ``nnx.jit``'s tree mode does. A ``shard_map`` inside an ``nnx.jit``
needs nothing of its own: the ``nnx.jit`` adapter stages it with the body.
"""

from __future__ import annotations

import types
from typing import Any

from flax.nnx import extract
from flax.nnx.transforms import compilation

from jxinspect.core.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters import nnx_jit, nnx_shared
from jxinspect.tracer.adapters.adapted import Adapted, unmapped

try:  # flax 0.11 on
    from flax.nnx import graphlib as _graphlib
except ImportError:  # flax 0.10
    from flax.nnx import graph as _graphlib

WRAPPER = "nnx.shard_map"

_SHARD_MAP: Any = getattr(compilation, "shard_map", None)
_CODES = frozenset(
    const
    for const in getattr(getattr(_SHARD_MAP, "__code__", None), "co_consts", ())
    if isinstance(const, types.CodeType)
)
"""The functions ``nnx.shard_map`` defines: its wrappers (graph mode, tree mode)."""


def matches(fun: Any) -> bool:
    return (
        getattr(fun, "__code__", None) in _CODES
        and nnx_shared.cell(fun, "shard_map_fn") is not None
        and getattr(fun, "__wrapped__", None) is not None
    )


def stage(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """Split the call as ``nnx.shard_map`` does and trace ``jax.jit`` of its inner
    ``shard_map``."""
    user_fun, inner = fun.__wrapped__, nnx_shared.cell(fun, "shard_map_fn")
    in_specs = nnx_shared.cell(fun, "in_specs")
    tag = nnx_shared.cell(fun, "shard_map_wrapper")
    named_args, named_kwargs = nnx_shared.as_state((args, kwargs))
    if tag is not None:  # graph mode with graph updates
        kwarg_specs = nnx_shared.cell(fun, "kwarg_specs")
        with _graphlib.update_context(tag):
            pure_args, pure_kwargs = extract.to_tree(
                (args, kwargs),
                prefix=(in_specs, kwarg_specs),
                split_fn=compilation._jit_split_fn,
                check_aliasing=True,
                ctxtag=tag,
            )
            traced = seam.jit(inner, {}).trace(*pure_args, **pure_kwargs)
        leaves, _ = seam.tree_flatten((pure_args, pure_kwargs))
        results = nnx_jit.graph_result_paths(user_fun, seam.out_info(traced))
        notes = () if results is not None else (unmapped(WRAPPER, "flax"),)
        return Adapted(WRAPPER, user_fun, traced, leaves, named_args, named_kwargs, notes, results)
    if nnx_shared.cell(fun, "graph") is None and "graph" not in fun.__code__.co_freevars:
        raise UsageError(
            f"{WRAPPER} of this flax release is not supported; stage the undecorated "
            "function with --stage shard_map"
        )
    call_args = args
    if nnx_shared.cell(fun, "graph"):
        call_args = extract.to_tree2(args, prefix=in_specs, check_aliasing=in_specs is not None)
    extract.check_no_aliases("shard_map", args=call_args)
    traced = seam.jit(inner, {}).trace(*call_args, **kwargs)
    leaves, _ = seam.tree_flatten((call_args, kwargs))
    adapted = Adapted(WRAPPER, user_fun, traced, leaves, named_args, named_kwargs)
    results = nnx_jit.simple_result_paths(adapted, seam.out_info(traced), call_args, kwargs)
    notes = () if results is not None else (unmapped(WRAPPER, "flax"),)
    return Adapted(WRAPPER, user_fun, traced, leaves, named_args, named_kwargs, notes, results)
