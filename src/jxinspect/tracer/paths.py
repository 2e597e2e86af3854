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

from jxinspect.model import StaticArg
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


def _normalize(nums: Any, count: int) -> set[int]:
    items = (nums,) if isinstance(nums, int) else tuple(nums or ())
    return {n + count if n < 0 else n for n in items}


def argument_paths(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnums: Any = (),
    static_argnames: Any = (),
) -> tuple[list[str] | None, list[StaticArg]]:
    """Expected names of the flat dynamic leaves (``None`` when the callable has no
    signature to name them by), and the static arguments apart."""
    statics = _normalize(static_argnums, len(args))
    static_names = (
        {static_argnames} if isinstance(static_argnames, str) else set(static_argnames or ())
    )
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
        statics |= {i for i, name in enumerate(positional_names) if name in static_names}
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
        if i in statics:
            static_args.append(StaticArg(positional_name(i), i, _short_repr(value)))
        else:
            named.append((positional_name(i), value))
    for key in sorted(kwargs):
        if key in static_names:
            static_args.append(StaticArg(keyword_name(key), None, _short_repr(kwargs[key])))
        else:
            named.append((keyword_name(key), kwargs[key]))
    paths = [
        name + seam.keystr(path)
        for name, value in named
        for path, _ in seam.tree_leaves_with_path(value)
    ]
    # without a signature JAX names leaves by position (args[0]): a fallback, not a name
    return (paths if signature is not None else None), static_args


def result_paths(out_info: Any) -> list[str]:
    """``result['logits']``… for each flat output."""
    leaves = seam.tree_leaves_with_path(out_info)
    return ["result" + seam.keystr(path) for path, _ in leaves]
