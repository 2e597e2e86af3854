"""A function's or a class's annotations, resolved as :func:`typing.get_type_hints`
resolves them, and each one that cannot be, named with why.

A library's type alias may hold forward references that only its own module can resolve:
optax's ``OptState`` is ``ArrayTree``, ``Union[ArrayLike, Iterable['ArrayTree'],
Mapping[Any, 'ArrayTree']]``, so ``opt_state: optax.OptState`` (and Flax's
``TrainState.opt_state``) fails in the user's namespace with ``NameError: name
'ArrayTree' is not defined``. Such a name is looked up in the namespace of the module
that defined the alias: the imported module that binds the name and holds an alias
referring to it by that name. Nothing is evaluated but by :func:`typing.get_type_hints`;
the lookup reads module namespaces (``sys.modules``), and imports nothing.
"""

from __future__ import annotations

import inspect
import re
import sys
import typing
from collections.abc import Iterator
from typing import Any

_MAX_NAMES = 8
"""Names an annotation may need from aliases' modules before it is said unresolvable."""

_MAX_DEPTH = 6
"""How deep an alias is searched for its forward references."""


class _Holder:
    """One annotation, for :func:`typing.get_type_hints` to resolve alone."""

    def __init__(self, name: str, annotation: object) -> None:
        self.__annotations__ = {name: annotation}


def resolve(obj: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """``obj``'s annotations resolved (a function's in its module's namespace, a class's
    in each base's), and, for each one that cannot be, why (``NameError: name 'X' is not
    defined``). The names an alias's forward references need come from the module that
    defined that alias."""
    try:
        return typing.get_type_hints(obj, include_extras=True), {}
    except Exception:  # an annotation names something its module lacks: one by one
        pass
    hints: dict[str, Any] = {}
    failed: dict[str, str] = {}
    for name, annotation, namespace in _annotations(obj):
        try:
            hints[name] = _resolve_one(name, annotation, namespace)
            failed.pop(name, None)
        except Exception as err:  # whatever evaluating the annotation raised
            hints.pop(name, None)
            failed[name] = f"{type(err).__name__}: {err}"
    return hints, failed


def _annotations(obj: Any) -> Iterator[tuple[str, object, dict[str, Any]]]:
    """``(name, annotation, the namespace it is resolved in)``: a class's bases from
    ``object`` down (a subclass's annotation wins), or a function's own."""
    if isinstance(obj, type):
        for base in reversed(obj.__mro__):
            module = sys.modules.get(base.__module__)
            namespace = {**vars(base), **getattr(module, "__dict__", {})}  # as Python looks
            for name, annotation in base.__dict__.get("__annotations__", {}).items():
                yield name, annotation, namespace
        return
    function = inspect.unwrap(obj)
    namespace = getattr(function, "__globals__", {})
    for name, annotation in getattr(obj, "__annotations__", {}).items():
        yield name, annotation, namespace


def _resolve_one(name: str, annotation: object, namespace: dict[str, Any]) -> Any:
    """One annotation resolved in ``namespace``, with the names the aliases it reaches
    need from the modules that defined them."""
    extra: dict[str, Any] = {}
    while True:
        try:
            hints = typing.get_type_hints(
                _Holder(name, annotation), namespace, extra or None, include_extras=True
            )
            return hints[name]
        except NameError as err:
            missing = err.name
            if not missing or missing in extra or len(extra) >= _MAX_NAMES:
                raise
            if isinstance(annotation, str) and _names(annotation, missing):
                raise  # the user's own text names it: never borrowed from a library
            found = _alias_home_value(missing)
            if found is _NOT_FOUND:
                raise
            extra[missing] = found


_NOT_FOUND = object()


def _names(text: str, name: str) -> bool:
    """Whether an annotation's text names ``name`` itself (not as an attribute)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def _alias_home_value(name: str) -> Any:
    """What ``name`` is bound to in the module that defined an alias referring to it by
    that name (``ArrayTree`` in ``optax._src.base``), where the imported modules agree on
    one value; else a sentinel."""
    found: list[Any] = []
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict) or name not in namespace:
            continue
        value = namespace[name]
        if any(v is value for v in found):
            continue
        if any(_refers_to(v, name, 0) for v in list(namespace.values())):
            found.append(value)
    return found[0] if len(found) == 1 else _NOT_FOUND


def _refers_to(alias: Any, name: str, depth: int) -> bool:
    """Whether a typing alias holds a forward reference to ``name``."""
    if isinstance(alias, typing.ForwardRef):
        return alias.__forward_arg__ == name
    if depth > _MAX_DEPTH or typing.get_origin(alias) is None:  # not a typing alias
        return False
    return any(_refers_to(m, name, depth + 1) for m in typing.get_args(alias))
