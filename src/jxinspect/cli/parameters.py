"""A command's options declared as the fields of a dataclass, for a command with many.

The command takes one parameter annotated with the dataclass; :func:`takes_options` puts
the dataclass's fields (each ``Annotated[..., typer.Option(...)]`` with its default) in
its place, in their order, and hands the command the dataclass made of the values given.
The command's ``--help`` is as if it declared each option itself.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any


def takes_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the fields of each dataclass parameter as its typer options; it
    receives the dataclass of their values."""
    signature = inspect.signature(command, eval_str=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type[Any], tuple[str, ...]]] = {}
    for param in signature.parameters.values():
        kind = param.annotation
        if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
            params.append(param)
            continue
        hints = typing.get_type_hints(kind, include_extras=True)
        fields = dataclasses.fields(kind)
        groups[param.name] = (kind, tuple(f.name for f in fields))
        params += [
            inspect.Parameter(
                f.name, param.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
            )
            for f in fields
        ]
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]

    @functools.wraps(command)
    def wrapper(**values: Any) -> None:
        for name, (kind, names) in groups.items():
            values[name] = kind(**{field: values.pop(field) for field in names})
        command(**values)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper
