"""The user's function: its name, the function inside its wrappers, where its source is.

Plain Python, no JAX: ``functools.partial``, ``jax.jit``/``jax.pmap`` objects and library
wrappers all keep the function they wrap in ``func`` or ``__wrapped__``.
"""

from __future__ import annotations

import functools
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
