"""Flax NNX's ``nnx.jit``: graph nodes (modules, optimizers, metrics) are split into a
static graph definition and their state, which the inner ``jax.jit`` receives as
``NodeStates``; JAX names those leaves ``model.states[0][3]``.

Flax 0.11 on: a ``JitWrapped`` object (``_get_pure_args_kwargs`` splits the call).
Flax 0.10: a function whose ``inner`` is the ``jax.jit`` and whose closure splits the
call with ``extract.to_tree``, recognized by its code object.
Flax 0.12 in tree mode (``graph=False``) or without graph updates
(``graph_updates=False``): a ``SimpleJitWrapped`` object; the call is converted with
``extract.to_tree2`` (graph mode) or passed as it is (modules are pytrees), and the inner
function returns ``(out, updates)``: the user's result, then the variables it changed,
keyed by their path in the call (mapped as for ``nnx.pmap``'s tree mode).

The inner function returns ``(args_out, kwargs_out, out)``: each graph node of the call
split again after the user's function ran (the state the wrapper writes back into it,
``result[0][0].states[0][5]``), then the user's result (``result[2]``). Results are
mapped back by rebuilding those graph nodes from the traced result tree with the wrapper's
own merge (new objects: the user's are never updated) and naming their leaves the way the
call's leaves are named: ``model.linear1.kernel.value``, ``result['loss']``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from flax import nnx
from flax.nnx import extract
from flax.nnx.transforms import compilation

from jxinspect.core.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters import nnx_shared
from jxinspect.tracer.adapters.adapted import Adapted, unmapped
from jxinspect.tracer.read import paths

WRAPPER = "nnx.jit"

try:  # flax 0.11 on
    from flax.nnx import graphlib as _graphlib
except ImportError:  # flax 0.10
    from flax.nnx import graph as _graphlib

_JIT_WRAPPED = getattr(compilation, "JitWrapped", None)
_SIMPLE = getattr(compilation, "SimpleJitWrapped", None)
_OLD_CODE = None if _JIT_WRAPPED is not None else getattr(nnx.jit(lambda: None), "__code__", None)


def _old_style(fun: Any) -> bool:
    return (
        _OLD_CODE is not None
        and getattr(fun, "__code__", None) is _OLD_CODE
        and hasattr(fun, "inner")
    )


def _simple(fun: Any) -> bool:
    return _SIMPLE is not None and isinstance(fun, _SIMPLE)


def matches(fun: Any) -> bool:
    return (
        (_JIT_WRAPPED is not None and isinstance(fun, _JIT_WRAPPED))
        or _old_style(fun)
        or (_simple(fun))
    )


def stage(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """Split the call as ``nnx.jit`` does and trace its inner ``jax.jit``."""
    if _simple(fun):
        return _stage_simple(fun, args, kwargs)
    if _JIT_WRAPPED is not None and isinstance(fun, _JIT_WRAPPED):
        # the user's function: ``fun`` from flax 0.12, ``__wrapped__`` alone in 0.11
        user_fun = getattr(fun, "fun", None) or getattr(fun, "__wrapped__", None)
        inner: Any = getattr(fun, "jitted_fn", None)
        if user_fun is None:
            raise UsageError(
                f"{WRAPPER} of this flax release does not say which function it wraps; "
                "stage the undecorated function with nnx.split/nnx.merge instead"
            )

        def split() -> Any:
            return fun._get_pure_args_kwargs(args, kwargs)

    else:
        user_fun, inner = fun.__wrapped__, fun.inner

        def split() -> Any:
            return extract.to_tree(
                (args, kwargs),
                prefix=None,
                split_fn=compilation._jit_split_fn,
                check_aliasing=False,
                ctxtag=fun,
            )

    if not callable(getattr(inner, "trace", None)):
        raise UsageError(
            f"{WRAPPER} of this flax release has no traceable inner function; "
            "stage the undecorated function with nnx.split/nnx.merge instead"
        )
    with _graphlib.update_context(fun):
        pure_args, pure_kwargs = split()
        traced = inner.trace(*pure_args, **pure_kwargs)
    leaves, _ = seam.tree_flatten((pure_args, pure_kwargs))
    named_args, named_kwargs = named_call(args, kwargs)
    results = graph_result_paths(user_fun, seam.out_info(traced))
    notes = () if results is not None else (unmapped(WRAPPER, "flax"),)
    return Adapted(WRAPPER, user_fun, traced, leaves, named_args, named_kwargs, notes, results)


def named_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The user's call as its leaves are named: flax 0.10's modules (no JAX pytrees)
    given as their state, whose leaves are the arrays the wrapper hands the program
    (staged here, or lowered by a recorded run)."""
    named: tuple[Any, Any] = nnx_shared.as_state((args, kwargs))
    return named


def _stage_simple(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """``SimpleJitWrapped.trace`` as flax writes it: the call (after any bound partial
    arguments) converted with ``to_tree2`` in graph mode, checked for aliases in tree
    mode, handed to the inner ``jax.jit``."""
    convert = getattr(fun, "_maybe_to_tree", None)
    inner: Any = getattr(fun, "jitted_fn", None)
    if convert is None or not callable(getattr(inner, "trace", None)):
        raise UsageError(
            f"{WRAPPER} (tree mode) of this flax release is not supported; "
            "stage the undecorated function with plain jit (modules are pytrees)"
        )
    full = (*fun.partial_args, *args)
    call_args, call_kwargs = convert(full, kwargs)
    if not fun.graph:
        extract.check_no_aliases("jit", args=call_args, kwargs=call_kwargs)
    traced = inner.trace(*call_args, **call_kwargs)
    leaves, _ = seam.tree_flatten((call_args, call_kwargs))
    adapted = Adapted(WRAPPER, fun.fun, traced, leaves, full, kwargs)
    results = simple_result_paths(adapted, seam.out_info(traced), call_args, call_kwargs)
    notes = () if results is not None else (unmapped(WRAPPER, "flax"),)
    return dataclasses.replace(adapted, notes=notes, results=results)


def simple_result_paths(
    adapted: Adapted, out_info: Any, call_args: Any, call_kwargs: Any
) -> list[str | None] | None:
    """``(out, updates)``: the user's result (graph nodes in it rebuilt), then each
    changed variable, named by the user's path to it."""
    if not isinstance(out_info, tuple) or len(out_info) != 2:
        return None
    try:
        out = extract.from_tree2(out_info[0])
        named = [("result" + seam.keystr(p), x) for p, x in seam.tree_leaves_with_path(out)]
        named += nnx_shared.update_paths(adapted, out_info[1], call_args, call_kwargs)
    except Exception:  # a flax release whose results do not rebuild alone
        return None
    return paths.by_identity(named, seam.tree_leaves(out_info))


def graph_result_paths(user_fun: Any, out_info: Any) -> list[str | None] | None:
    """The user's path of each result of ``(args_out, kwargs_out, out)``: the graph nodes
    are rebuilt with ``nnx.jit``'s own merge (in one context, so a node shared between
    them is one node, as the wrapper sees it) around the traced result's leaves, then
    named as the call's arguments and as the user's result; ``None`` when the program
    returns something else or a node cannot be rebuilt."""
    if not isinstance(out_info, tuple) or len(out_info) != 3:
        return None
    try:
        merged = extract.from_tree(out_info, merge_fn=compilation._jit_merge_fn)
        args_out, kwargs_out, out = nnx_shared.as_state(merged)
        named = paths.argument_leaves(user_fun, tuple(args_out), dict(kwargs_out))
        named += [("result" + seam.keystr(p), leaf) for p, leaf in seam.tree_leaves_with_path(out)]
    except Exception:  # a flax release whose graph definitions do not rebuild alone
        return None
    return paths.by_identity(named, seam.tree_leaves(out_info))


_WRITTEN_BACK = re.compile(r"result\[0\]\[(\d+)\](.*)|result\[1\]\[('(?:[^'\\]|\\.)*')\](.*)")
"""A result of ``(args_out, kwargs_out, out)`` that the wrapper writes back into
positional argument N (``result[0][N]…``) or keyword argument K (``result[1]['K']…``)."""


def user_results(
    user_fun: Any, names: Sequence[str | None], inputs: Sequence[tuple[str | None, str | None]]
) -> list[str | None] | None:
    """The user's path of each result of ``(args_out, kwargs_out, out)`` from the names a
    recorded run's program carries (the graph nodes cannot be rebuilt there: nothing of
    ours traces in it): ``result[0][1].states[0][2]`` is what the wrapper writes back into
    the second positional argument, whose state came in as ``optimizer.states[0][2]``
    (``inputs``: each program input's name and the user's path); ``result[2]…`` is the
    user's ``result…``. ``None`` where no name maps."""
    import inspect

    try:
        parameters = list(inspect.signature(user_fun).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    rest = next((p.name for p in parameters if p.kind == p.VAR_POSITIONAL), None)
    by_name = {name: path for name, path in inputs if name is not None and path is not None}

    def path_of(name: str | None) -> str | None:
        if name is None:
            return None
        if name.startswith("result[2]"):
            return "result" + name.removeprefix("result[2]")
        found = _WRITTEN_BACK.fullmatch(name)
        if found is None:
            return None
        if found.group(1) is not None:
            i = int(found.group(1))
            param = positional[i] if i < len(positional) else None
            if param is None and rest is not None:
                param = f"{rest}[{i - len(positional)}]"
            return by_name.get(f"{param}{found.group(2)}") if param is not None else None
        key = found.group(3)[1:-1]
        return by_name.get(f"{key}{found.group(4)}")

    mapped = [path_of(name) for name in names]
    return mapped if any(path is not None for path in mapped) else None
