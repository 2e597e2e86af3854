"""The optimizer whose state a train step takes, read from the step's own code.

An optax step passes its state to the optimizer's ``update``
(``updates, opt_state = optim.update(grads, opt_state, params)``); an NNX step calls
``optimizer.update(model, grads)`` on its ``nnx.Optimizer``. Where the optimizer is the
module's own (``optim = optax.adamw(1e-3)`` at its top level, or the ``tx`` its
``nnx.Optimizer(model, tx, wrt=...)`` call passes), the state is built by that
optimizer, abstractly, so its tree is exactly the one the optimizer's ``init`` makes; a
state whose optimizer cannot be found is advised as a maker, never as an array.

The step's and its module's source are parsed (:mod:`ast`), never run; the names they
use are looked up in the module's namespace (attributes read, nothing called).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

NNX_WRT = "nnx.Param"
"""The ``wrt`` an ``nnx.Optimizer`` is built with where the module's code says none
(Flax's own examples' choice)."""


@dataclass(frozen=True)
class StateUse:
    """A parameter the step passes to an optimizer as its state."""

    state: str
    """The parameter holding the state."""
    optimizer: str
    """The optimizer as the step writes it (``optim``, ``self.tx``, ``optimizer``)."""
    params: str | None
    """The parameter whose tree the state is built over (``update``'s ``params``, what
    ``apply_updates`` updates, or the NNX model); ``None`` where the code does not say."""
    transform: Any = None
    """The module's optax ``GradientTransformation`` that builds the state, if found."""
    transform_name: str = ""
    """Its name in the module."""
    nnx: bool = False
    """An ``nnx.Optimizer`` (built as ``nnx.Optimizer(model, tx, wrt=...)``)."""
    wrt: Any = None
    """The NNX optimizer's ``wrt`` filter, read from the module's ``nnx.Optimizer`` call;
    ``None``: :data:`NNX_WRT`."""
    wrt_text: str = NNX_WRT


def state_uses(fun: Callable[..., Any], parameters: list[str]) -> dict[str, StateUse]:
    """The parameters of ``fun`` (named ``parameters``) that it passes to an optimizer as
    its state, by name; nothing where its source cannot be read."""
    tree = _parsed(fun)
    if tree is None:
        return {}
    namespace: dict[str, Any] = getattr(inspect.unwrap(fun), "__globals__", {})
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    updated = [_name(c.args[0]) for c in calls if _attr(c) == "apply_updates" and c.args]
    found: dict[str, StateUse] = {}
    for call in calls:
        if _attr(call) != "update" or not isinstance(call.func, ast.Attribute):
            continue
        receiver = call.func.value
        optimizer = ast.unparse(receiver)
        state = _argument(call, 1, "state")
        if state in parameters and state not in found:
            params = _argument(call, 2, "params")
            if params not in parameters:
                params = next((p for p in updated if p in parameters), None)
            name = receiver.id if isinstance(receiver, ast.Name) else ""
            transform = namespace.get(name) if name and name not in parameters else None
            found[state] = StateUse(state, optimizer, params, *_optax(transform, name))
        elif optimizer in parameters and optimizer not in found and call.args:
            model = _name(call.args[0])
            if model in parameters and len(call.args) == 2:  # optimizer.update(model, grads)
                found[optimizer] = _nnx_use(fun, namespace, optimizer, model)
    return found


def _parsed(fun: Callable[..., Any]) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(fun))))
    except (OSError, TypeError, SyntaxError, ValueError):  # no source, or not Python's
        return None


def _attr(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _argument(call: ast.Call, position: int, keyword: str) -> str | None:
    """The name passed at ``position`` or as ``keyword``, where it is a bare name."""
    if len(call.args) > position:
        return _name(call.args[position])
    return next((_name(k.value) for k in call.keywords if k.arg == keyword), None)


def is_transform(value: Any) -> bool:
    """An optax ``GradientTransformation`` (its ``init`` and ``update``), by its class's
    module: optax is not imported for it."""
    return (
        not isinstance(value, (type, types.ModuleType))
        and type(value).__module__.split(".")[0] == "optax"
        and callable(getattr(value, "init", None))
        and callable(getattr(value, "update", None))
    )


def _optax(value: Any, name: str) -> tuple[Any, str]:
    return (value, name) if is_transform(value) else (None, "")


def _nnx_use(
    fun: Callable[..., Any], namespace: dict[str, Any], state: str, model: str
) -> StateUse:
    """An ``nnx.Optimizer`` argument: its ``tx`` and ``wrt`` from the module's own
    ``nnx.Optimizer(model, tx, wrt=...)`` call, else its one top-level optax optimizer."""
    for call in _module_calls(fun):
        if _attr(call) != "Optimizer" and _name(call.func) != "Optimizer":
            continue
        name = _name(call.args[1]) if len(call.args) > 1 else None
        if name is None or not is_transform(namespace.get(name)):
            continue
        wrt = next((k.value for k in call.keywords if k.arg == "wrt"), None)
        if wrt is None:
            return StateUse(state, state, model, namespace[name], name, True)
        filter_ = _dotted(wrt, namespace)
        if filter_ is None:  # a filter written otherwise than a dotted name: not built
            return StateUse(state, state, model, nnx=True)
        return StateUse(state, state, model, namespace[name], name, True, filter_, ast.unparse(wrt))
    transforms = [n for n, v in namespace.items() if not n.startswith("_") and is_transform(v)]
    if len(transforms) != 1:
        return StateUse(state, state, model, nnx=True)
    return StateUse(state, state, model, namespace[transforms[0]], transforms[0], True)


def _module_calls(fun: Callable[..., Any]) -> Iterator[ast.Call]:
    module = inspect.getmodule(inspect.unwrap(fun))
    try:
        tree = ast.parse(inspect.getsource(module)) if module is not None else None
    except (OSError, TypeError, SyntaxError, ValueError):
        tree = None
    if tree is not None:
        yield from (node for node in ast.walk(tree) if isinstance(node, ast.Call))


def _dotted(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """What a dotted name (``nnx.Param``) names in ``namespace``, attributes read; None
    where the expression is anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    value = namespace.get(node.id)
    for part in reversed(parts):
        value = getattr(value, part, None)
    return value
