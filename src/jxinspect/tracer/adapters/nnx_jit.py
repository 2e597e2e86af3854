"""Flax NNX's ``nnx.jit``: graph nodes (modules, optimizers, metrics) are split into a
static graph definition and their state, which the inner ``jax.jit`` receives as
``NodeStates``; JAX names those leaves ``model.states[0][3]``.

Flax 0.11 on: a ``JitWrapped`` object (``_get_pure_args_kwargs`` splits the call).
Flax 0.10: a function whose ``inner`` is the ``jax.jit`` and whose closure splits the
call with ``extract.to_tree``, recognized by its code object.
"""

from __future__ import annotations

from typing import Any

from flax import nnx
from flax.nnx import extract
from flax.nnx.transforms import compilation

from jxinspect.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters import Adapted

WRAPPER = "nnx.jit"

try:  # flax 0.11 on
    from flax.nnx import graphlib as _graphlib
except ImportError:  # flax 0.10
    from flax.nnx import graph as _graphlib

_JIT_WRAPPED = getattr(compilation, "JitWrapped", None)
_OLD_CODE = None if _JIT_WRAPPED is not None else getattr(nnx.jit(lambda: None), "__code__", None)


def _old_style(fun: Any) -> bool:
    return (
        _OLD_CODE is not None
        and getattr(fun, "__code__", None) is _OLD_CODE
        and hasattr(fun, "inner")
    )


def matches(fun: Any) -> bool:
    return (_JIT_WRAPPED is not None and isinstance(fun, _JIT_WRAPPED)) or _old_style(fun)


def stage(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """Split the call as ``nnx.jit`` does and trace its inner ``jax.jit``."""
    if _JIT_WRAPPED is not None and isinstance(fun, _JIT_WRAPPED):
        user_fun, inner = fun.fun, fun.jitted_fn

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
    named_args, named_kwargs = _as_state((args, kwargs))
    return Adapted(WRAPPER, user_fun, traced, leaves, named_args, named_kwargs)


def _as_state(call: Any) -> Any:
    """The call with each graph node that is not a JAX pytree (flax 0.10's modules) given
    as its ``nnx.state``, whose leaves are the arrays the wrapper hands the program:
    ``model['linear1']['kernel'].value``. Flax 0.11 on, modules are pytrees already."""
    is_node = getattr(_graphlib, "is_graph_node", None)
    if is_node is None:
        return call

    def state(value: Any) -> Any:
        if is_node(value) and seam.tree_leaves(value) == [value]:
            return nnx.state(value)
        return value

    return seam.tree_map(state, call, is_leaf=lambda x: is_node(x))
