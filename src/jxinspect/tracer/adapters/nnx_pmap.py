"""Flax NNX's ``nnx.pmap``: graph nodes (modules) are split into a graph definition and
their state, which an inner ``jax.pmap`` maps; JAX names those leaves ``flat_args[i]``
(pmap built on ``shard_map``) or ``model.states[0][3]``.

``nnx.pmap`` returns a plain function that closes over its inner ``jax.pmap``
(``pmapped_fn``) and its ``in_axes``; it is recognized by its code object (the one
``nnx.pmap`` builds for any function), never by its name.

Graph mode with graph updates (flax's default): the call is split with ``extract.to_tree``
inside an update context tagged ``'pmap'``, and the inner function returns
``(args_out, out)``: each graph node of the call split again after the user's function ran
(the state written back into it), then the user's result. Tree mode or graph mode without
graph updates (flax 0.12 on, ``graph=False`` / ``graph_updates=False``): the call is
converted with ``extract.to_tree2`` (graph mode) or passed as it is, and the inner function
returns ``(out, updates)``: the user's result, then the variables it changed, keyed by
their path in the call.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

from flax import nnx
from flax.nnx import extract
from flax.nnx.transforms import iteration

from jxinspect.core.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters import nnx_shared
from jxinspect.tracer.adapters.adapted import Adapted, unmapped
from jxinspect.tracer.read import paths

WRAPPER = "nnx.pmap"

try:  # flax 0.11 on
    from flax.nnx import graphlib as _graphlib
except ImportError:  # flax 0.10
    from flax.nnx import graph as _graphlib


def _probe(x: Any) -> Any:
    return x


_MODES = "graph_updates" in inspect.signature(nnx.pmap).parameters
_GRAPH = nnx.pmap(_probe, graph=True, graph_updates=True) if _MODES else nnx.pmap(_probe)
_CONTEXT_CODE = getattr(_GRAPH, "__code__", None)
"""The update context's wrapper: the same for every function flax runs in one."""
_GRAPH_CODE = getattr(nnx_shared.cell(_GRAPH, "f"), "__code__", None)
"""``nnx.pmap``'s own wrapper inside it."""
_SIMPLE_CODE = (
    getattr(nnx.pmap(_probe, graph=True, graph_updates=False), "__code__", None) if _MODES else None
)


def _graph_wrapper(fun: Any) -> Any:
    """``nnx.pmap``'s graph-mode wrapper inside ``fun``, or ``None``."""
    if _GRAPH_CODE is None or getattr(fun, "__code__", None) is not _CONTEXT_CODE:
        return None
    inner = nnx_shared.cell(fun, "f")
    return inner if getattr(inner, "__code__", None) is _GRAPH_CODE else None


def _simple(fun: Any) -> bool:
    return _SIMPLE_CODE is not None and getattr(fun, "__code__", None) is _SIMPLE_CODE


def matches(fun: Any) -> bool:
    return _graph_wrapper(fun) is not None or _simple(fun)


def _unsupported() -> UsageError:
    return UsageError(
        f"{WRAPPER} of this flax release is not supported; stage the undecorated "
        "function over nnx.split state with --stage pmap"
    )


def stage(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """Split the call as ``nnx.pmap`` does; the inner ``jax.pmap`` and its arguments come
    back in ``pmap`` for the caller to stage, inside ``context`` (the update context
    the wrapper's inner function merges and splits in)."""
    user_fun = getattr(fun, "__wrapped__", None)
    graph_wrapper = _graph_wrapper(fun)
    wrapper = graph_wrapper if graph_wrapper is not None else fun
    inner, in_axes = nnx_shared.cell(wrapper, "pmapped_fn"), nnx_shared.cell(wrapper, "in_axes")
    if user_fun is None or not seam.is_pmap_wrapped(inner):
        raise _unsupported()
    named_args, named_kwargs = nnx_shared.as_state((args, kwargs))
    if graph_wrapper is not None:
        if kwargs:
            raise UsageError(
                f"{WRAPPER} takes positional arguments only ({', '.join(kwargs)} given "
                "by keyword); pass them positionally"
            )
        stack = contextlib.ExitStack()
        stack.enter_context(_graphlib.update_context("pmap"))
        try:
            pure_args = extract.to_tree(
                args, prefix=in_axes, split_fn=iteration._vmap_split_fn, ctxtag="pmap"
            )
        except BaseException:
            stack.close()
            raise
        leaves, _ = seam.tree_flatten(pure_args)
        return Adapted(
            WRAPPER, user_fun, None, leaves, named_args, named_kwargs,
            pmap=(inner, tuple(pure_args), {}), context=stack,
        )  # fmt: skip
    graph = nnx_shared.cell(fun, "graph")
    call_args, call_kwargs = args, kwargs
    if graph:
        call_args, call_kwargs = extract.to_tree2((args, kwargs), prefix=(in_axes, 0))
    extract.check_no_aliases("pmap", args=call_args, kwargs=call_kwargs)
    leaves, _ = seam.tree_flatten((call_args, call_kwargs))
    return Adapted(
        WRAPPER, user_fun, None, leaves, named_args, named_kwargs,
        pmap=(inner, tuple(call_args), dict(call_kwargs)),
    )  # fmt: skip


def result_paths(
    adapted: Adapted, out_info: Any
) -> tuple[list[str | None] | None, tuple[str, ...]]:
    """The user's path of each program result, and the notes to add (one when the results
    cannot be mapped)."""
    try:
        if _graph_wrapper_result(out_info):
            named: list[tuple[str, Any]] | None = _graph_results(adapted, out_info)
        else:
            named = _simple_results(adapted, out_info)
    except Exception:  # a flax release whose results do not rebuild alone
        named = None
    if named is None:
        return None, (unmapped(WRAPPER, "flax"),)
    return paths.by_identity(named, seam.tree_leaves(out_info)), ()


def _graph_wrapper_result(out_info: Any) -> bool:
    return isinstance(out_info, tuple) and len(out_info) == 2 and isinstance(out_info[0], tuple)


def _graph_results(adapted: Adapted, out_info: Any) -> list[tuple[str, Any]]:
    """``(args_out, out)``: the graph nodes rebuilt (new objects) around the traced result
    leaves and named as the call's arguments, then the user's result."""
    args_out, out = extract.from_tree(out_info)
    args_out = nnx_shared.as_state(tuple(args_out))
    named = paths.argument_leaves(adapted.fun, args_out, {})
    named += [("result" + seam.keystr(p), leaf) for p, leaf in seam.tree_leaves_with_path(out)]
    return named


def _simple_results(adapted: Adapted, out_info: Any) -> list[tuple[str, Any]] | None:
    """``(out, updates)``: the user's result (graph nodes in it rebuilt), then each
    changed variable, found by its key path in the call the inner ``jax.pmap`` received
    and named by the user's path to its value."""
    if adapted.pmap is None or not isinstance(out_info, tuple) or len(out_info) != 2:
        return None
    out, updates = out_info
    out = extract.from_tree2(out)  # graph nodes in the result; the rest as it is
    named = [("result" + seam.keystr(p), leaf) for p, leaf in seam.tree_leaves_with_path(out)]
    return named + nnx_shared.update_paths(adapted, updates, adapted.pmap[1], adapted.pmap[2])
