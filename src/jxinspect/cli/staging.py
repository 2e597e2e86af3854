"""The staging flags of ``lower`` and ``diff-debug``, made from the option table.

A command takes one ``staging`` parameter; :func:`with_staging_flags` puts a typer
option for each entry of :data:`~jxinspect.project.options.OPTIONS` in its place and
hands the command the values given, by option name, for
:func:`~jxinspect.project.options.options_from_flags` to read inside the command (where a
bad value is one error line). Nothing here imports JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal, Optional

import typer

from jxinspect.project.options import OPTIONS, Option

Flags = Mapping[str, Any]
"""The staging flags given, by option name (``None``: not given)."""
NO_FLAGS: Flags = MappingProxyType({})
"""The ``staging`` parameter's default, for the signature (the flags replace it)."""

_TYPES: dict[str, Any] = {
    "spec": Optional[str], "text": Optional[str], "int_tuple": Optional[str],
    "name_tuple": Optional[str], "bool": Optional[bool], "positive_int": Optional[int],
}  # fmt: skip


def _annotation(option: Option) -> Any:
    """``Annotated[Optional[...], typer.Option(...)]`` for one option."""
    kind: Any = (
        Optional[Literal[option.choices]] if option.kind == "choice" else _TYPES[option.kind]
    )
    extra: dict[str, Any] = {"min": 1} if option.kind == "positive_int" else {}
    # a flag of its own (``--keep-unused``), or a pair the option names (``--explicit/--auto``)
    names = (option.flags,) if option.kind == "bool" else ()
    return Annotated[kind, typer.Option(*names, help=option.help, **extra)]


def _parameters() -> list[inspect.Parameter]:
    return [
        inspect.Parameter(
            o.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_annotation(o)
        )
        for o in OPTIONS
    ]


def with_staging_flags(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with a flag per staging option in place of its ``staging`` parameter,
    which receives the flags' values (:data:`Flags`)."""
    signature = inspect.signature(command, eval_str=True)
    params = list(signature.parameters.values())
    at = [p.name for p in params].index("staging")
    params = [*params[:at], *_parameters(), *params[at + 1 :]]
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]

    @functools.wraps(command)
    def wrapper(**values: Any) -> None:
        flags = {o.name: values.pop(o.name, None) for o in OPTIONS}
        command(**values, staging=flags)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper
