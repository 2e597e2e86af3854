"""What the Flax NNX adapters share: a wrapper's closure cells, a call given as its
``nnx.state``, and the user's path of each variable a tree-mode wrapper writes back."""

from __future__ import annotations

from typing import Any

from flax import nnx
from flax.nnx import extract

from jxinspect.tracer import seam
from jxinspect.tracer.adapters.adapted import Adapted
from jxinspect.tracer.read import paths

try:  # flax 0.11 on
    from flax.nnx import graphlib as _graphlib
except ImportError:  # flax 0.10
    from flax.nnx import graph as _graphlib


def cell(fun: Any, name: str) -> Any:
    """The value ``fun`` closes over under ``name`` (``None`` when it does not)."""
    code = getattr(fun, "__code__", None)
    closure = getattr(fun, "__closure__", None)
    if code is None or closure is None or name not in code.co_freevars:
        return None
    try:
        return closure[code.co_freevars.index(name)].cell_contents
    except ValueError:  # an empty cell
        return None


def as_state(call: Any) -> Any:
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


def update_paths(
    adapted: Adapted, updates: Any, call_args: Any, call_kwargs: Any
) -> list[tuple[str, Any]]:
    """Each leaf of the variables flax's tree-mode wrappers return as changed, named by
    the user's path to the variable it updates. Flax 0.12.8 returns ``Updates`` groups
    (each key a path into ``labeled(args, kwargs)`` of the call the inner function
    received); 0.12.6 returns ``(args, kwargs)`` again with each unchanged leaf masked.
    Either way the path leads to a variable of that call, whose value is one of the
    user's call's leaves."""
    user: dict[int, str] = {}
    for name, leaf in paths.argument_leaves(adapted.fun, adapted.args, adapted.kwargs):
        user.setdefault(id(leaf), name)  # a variable two arguments share: where first seen
    if all(hasattr(group, "_keys") for group in updates):
        container: Any = extract.labeled(args=tuple(call_args), kwargs=dict(call_kwargs))
        changed = [
            (key, value)
            for group in updates
            for key, value in zip(group._keys, group._values, strict=True)
        ]
    else:  # the call's own structure, unchanged variables masked
        container = (tuple(call_args), dict(call_kwargs))
        changed = [
            (key, value)
            for key, value in seam.tree_leaves_with_path(updates, is_leaf=_is_variable)
            if _is_variable(value)
        ]
    named: list[tuple[str, Any]] = []
    for key, value in changed:
        variable = _follow(container, key)
        targets = seam.tree_leaves(variable) if variable is not None else []
        path = user.get(id(targets[0])) if len(targets) == 1 else None
        if path is not None:
            named += [(path, leaf) for leaf in seam.tree_leaves(value)]
    return named


def is_node(value: Any) -> bool:
    """A Flax NNX graph object: a module, an optimizer, metrics, a variable."""
    is_graph_node = getattr(_graphlib, "is_graph_node", None)
    return bool(is_graph_node(value)) if is_graph_node else isinstance(value, nnx.Module)


def _is_variable(value: Any) -> bool:
    return isinstance(value, nnx.Variable)


def _follow(tree: Any, keys: Any) -> Any:
    """The node of ``tree`` at a JAX key path (``None`` when it leads nowhere)."""
    node = tree
    for key in keys:
        try:
            if hasattr(key, "name"):  # GetAttrKey
                node = getattr(node, key.name)
            elif hasattr(key, "idx"):  # SequenceKey
                node = node[key.idx]
            elif hasattr(key, "key"):  # DictKey
                node = node[key.key]
            else:
                return None
        except (AttributeError, IndexError, KeyError, TypeError):
            return None
    return node
