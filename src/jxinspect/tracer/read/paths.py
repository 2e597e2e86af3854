"""The names each flat argument and result *should* carry, from the user's own call.

JAX flattens the dynamic positional arguments in order, then the dynamic keyword
arguments sorted by keyword; a leaf's name is its parameter's name plus its pytree key
path. We compute the same from ``inspect.signature`` and ``jax.tree_util`` key paths,
independently of JAX's debug info, so the two can be compared.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import textwrap
from typing import Any

from jxinspect.core.model import StaticArg
from jxinspect.project.plan import positions
from jxinspect.tracer import seam

MAX_VALUE_REPR = 80


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _short_repr(value: Any) -> str:
    """A static argument as text that names it the same in every process: a function by
    its qualified name and a digest of its source (never its address); other values by
    ``repr`` without addresses; a ``repr`` that raises by its type."""
    if inspect.isfunction(value):
        try:
            digest = hashlib.sha1(textwrap.dedent(inspect.getsource(value)).encode())
            source = f", source {digest.hexdigest()[:8]}"
        except (OSError, TypeError):
            source = ""
        text = f"<function {value.__qualname__}{source}>"
    else:
        try:
            text = _ADDRESS.sub("", repr(value))
        except Exception:  # the user's __repr__
            text = f"<{type(value).__qualname__}>"
    return text if len(text) <= MAX_VALUE_REPR else text[: MAX_VALUE_REPR - 1] + "…"


def argument_leaves(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    statics: tuple[int, ...] = (),
    static_names: tuple[str, ...] = (),
) -> list[tuple[str, Any]]:
    """``(path, leaf)`` of every dynamic leaf of the call, in JAX's order; paths by
    position (``args[0]``) when the callable has no signature."""
    paths, _, leaves = _named_leaves(fun, args, kwargs, statics, static_names)
    return list(zip(paths, leaves))


def mapped_paths(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    program_leaves: list[Any],
    statics: tuple[int, ...] = (),
    static_names: tuple[str, ...] = (),
) -> tuple[list[str | None], list[StaticArg]]:
    """The user's path of each leaf a wrapper hands the program (``None`` where the leaf
    is not one of the call's, e.g. an array inside the wrapped function itself), found
    by identity; the call's leaves that are not arrays are static."""
    named = argument_leaves(fun, args, kwargs, statics, static_names)
    program_ids = {id(leaf) for leaf in program_leaves}
    static_args = [
        StaticArg(path, None, _short_repr(leaf))
        for path, leaf in named
        if id(leaf) not in program_ids and not seam.is_array_leaf(leaf)
    ]
    return by_identity(named, program_leaves), static_args


def by_identity(named: list[tuple[str, Any]], leaves: list[Any]) -> list[str | None]:
    """The path of each of ``leaves`` among ``named`` ``(path, object)`` pairs, found by
    identity (``None`` for an object not named). An object named more than once takes
    its paths in order, one each time it comes (one array passed as ``x`` and as ``y``:
    the program's two arguments are ``x`` and ``y``); an object the program holds once
    (a Flax NNX ``Variable`` the model and its optimizer share) is named where it is
    first seen, as are its comings past its last path."""
    paths: dict[int, list[str]] = {}
    for path, leaf in named:
        paths.setdefault(id(leaf), []).append(path)
    taken: dict[int, int] = {}
    found: list[str | None] = []
    for leaf in leaves:
        own = paths.get(id(leaf))
        count = taken[id(leaf)] = taken.get(id(leaf), -1) + 1
        found.append(None if own is None else own[count] if count < len(own) else own[0])
    return found


def argument_paths(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    statics: tuple[int, ...] = (),
    static_names: tuple[str, ...] = (),
) -> tuple[list[str] | None, list[StaticArg]]:
    """Expected names of the flat dynamic leaves (``None`` when the callable has no
    signature to name them by), and the static arguments apart."""
    paths, static_args, _ = _named_leaves(fun, args, kwargs, statics, static_names)
    try:
        signature: inspect.Signature | None = inspect.signature(fun)
    except (TypeError, ValueError):
        signature = None
    # without a signature, or for a call that does not bind it (a wrapper's extra
    # keyword), JAX names the leaves args[0], kwargs['z']: fallbacks, not names
    binds = signature is not None and _binds(signature, args, kwargs)
    return (paths if binds else None), static_args


def _binds(signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the call binds the signature (what JAX tries before naming leaves)."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _named_leaves(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    statics: tuple[int, ...] = (),
    static_names: tuple[str, ...] = (),
) -> tuple[list[str], list[StaticArg], list[Any]]:
    static_set = set(positions(statics, len(args)))
    try:
        signature: inspect.Signature | None = inspect.signature(fun)
    except (TypeError, ValueError):
        signature = None
    positional_names: list[str] = []
    varargs = varkw = None
    if signature is not None:
        for param in signature.parameters.values():
            if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                positional_names.append(param.name)
            elif param.kind == param.VAR_POSITIONAL:
                varargs = param.name
            elif param.kind == param.VAR_KEYWORD:
                varkw = param.name
        # static argnames also make the matching positional argument static
        static_set |= {i for i, name in enumerate(positional_names) if name in static_names}
    if signature is None:
        positional_names = []
        varargs, varkw = "args", "kwargs"

    def positional_name(i: int) -> str:
        if i < len(positional_names):
            return positional_names[i]
        return f"{varargs or 'args'}[{i - len(positional_names)}]"

    def keyword_name(key: str) -> str:
        if signature is not None and key in signature.parameters and key != varkw:
            return key
        return f"{varkw or 'kwargs'}['{key}']"

    named: list[tuple[str, Any]] = []
    static_args: list[StaticArg] = []
    for i, value in enumerate(args):
        if i in static_set:
            static_args.append(StaticArg(positional_name(i), i, _short_repr(value)))
        else:
            named.append((positional_name(i), value))
    for key in sorted(kwargs):
        if key in static_names:
            static_args.append(StaticArg(keyword_name(key), None, _short_repr(kwargs[key])))
        else:
            named.append((keyword_name(key), kwargs[key]))
    flat = [
        (name + seam.keystr(path), leaf)
        for name, value in named
        for path, leaf in seam.tree_leaves_with_path(value)
    ]
    return [p for p, _ in flat], static_args, [leaf for _, leaf in flat]


def result_paths(out_info: Any) -> list[str]:
    """``result['logits']``… for each flat output."""
    leaves = seam.tree_leaves_with_path(out_info)
    return ["result" + seam.keystr(path) for path, _ in leaves]
