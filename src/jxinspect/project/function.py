"""The user's function: its name, the function inside its wrappers, where its source is.

Plain Python, no JAX: ``functools.partial``, ``jax.jit``/``jax.pmap`` objects and library
wrappers all keep the function they wrap in ``func`` or ``__wrapped__``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any


def callable_name(fun: Any) -> str:
    """``Model.apply`` for a function, ``Model`` for a callable object; never its
    ``repr``, which user code may make slow, huge or raising."""
    for candidate in (fun, type(fun)):
        name = getattr(candidate, "__qualname__", None) or getattr(candidate, "__name__", None)
        if isinstance(name, str) and name:
            return name
    return "<callable>"


def real_function(fun: Any) -> Any:
    """The user's function inside ``functools.partial``, ``jax.jit``/``jax.pmap`` objects
    and library wrappers (each keeps it in ``__wrapped__`` or ``func``)."""
    seen: set[int] = set()
    while id(fun) not in seen:
        seen.add(id(fun))
        if isinstance(fun, functools.partial):
            fun = fun.func
            continue
        try:
            inner = getattr(fun, "__wrapped__", None)
        except Exception:  # a property of the user's object
            inner = None
        if inner is None or inner is fun:
            break
        fun = inner
    return fun


def bound_signature(fun: Any) -> inspect.Signature | None:
    """What a call of ``fun`` passes where a ``functools.partial`` inside its wrappers
    binds some of the user's function's parameters (``jax.jit(shard_map(partial(f,
    config=config)))`` takes ``f``'s others): the partial's signature, less the
    parameters it binds by keyword (positional ones it drops itself); ``None`` where no
    partial binds any, or Python knows no signature."""
    seen: set[int] = set()
    while id(fun) not in seen and not isinstance(fun, functools.partial):
        seen.add(id(fun))
        try:
            inner = getattr(fun, "__wrapped__", None)
        except Exception:  # a property of the user's object
            return None
        if inner is None or inner is fun:
            return None
        fun = inner
    if not isinstance(fun, functools.partial):
        return None
    keywords: set[str] = set()
    for partial in _partials(fun):
        keywords.update(partial.keywords)
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):
        return None
    kept = [param for name, param in signature.parameters.items() if name not in keywords]
    return signature.replace(parameters=kept)


def _partials(fun: Any) -> list[functools.partial[Any]]:
    """``fun`` and each ``functools.partial`` it wraps directly (a partial of a partial)."""
    found: list[functools.partial[Any]] = []
    while isinstance(fun, functools.partial) and len(found) < 100:
        found.append(fun)
        fun = fun.func
    return found


def function_line(fun: Any, said: str | None, wrapper: str | None) -> str | None:
    """``step at train.py:12``, JAX's way, for the user's function when JAX names another
    (``wrapper``: a library wrapper's inner function) or none (``said``, the name JAX's
    debug info gives; none for ``functools.partial`` inside ``pmap``)."""
    real = real_function(fun)
    name = getattr(real, "__name__", None)
    qualified = getattr(real, "__qualname__", name)
    method = isinstance(qualified, str) and "." in qualified and "<locals>" not in qualified
    if wrapper is None and said and "<unknown>" not in said and not method:
        return None
    file, line = source(real)
    if not isinstance(name, str) or file is None:
        return None
    return f"{qualified if method else name} at {file}:{line}"


def source(fun: Any) -> tuple[str | None, int | None]:
    """File and first line of the user's function (``def`` line, decorators excluded)."""
    code = getattr(real_function(fun), "__code__", None)
    if code is None:
        return None, None
    return code.co_filename, code.co_firstlineno
