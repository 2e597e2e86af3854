"""How to stage one target: the same keys on the command line, in a module's
``JXINSPECT`` declaration and (later) in a configuration file.

Values stay as the user wrote them (spec strings are parsed by the tracer), so this
module needs no JAX.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, fields, replace
from typing import Any

from jxinspect.core.errors import UsageError
from jxinspect.core.vocabulary import PARTITIONERS, PLATFORMS, STAGES, Partitioner, Platform, Stage


@dataclass(frozen=True)
class TargetOptions:
    """Inputs and staging options for one target; ``None`` means "not given"."""

    args: str | None = None
    """Positional example inputs in the spec language, ``"{w: f32[3,2]}, f32[8,3]"``."""
    kwargs: str | None = None
    """Keyword example inputs, ``"scale=2.0, x=f32[3]"``."""
    args_from: str | None = None
    """``module:function`` (or a name in the target's module) returning args or (args, kwargs)."""
    stage: Stage | None = None
    static_argnums: tuple[int, ...] | None = None
    static_argnames: tuple[str, ...] | None = None
    donate_argnums: tuple[int, ...] | None = None
    donate_argnames: tuple[str, ...] | None = None
    keep_unused: bool | None = None
    devices: int | None = None
    """Simulate this many CPU devices."""
    mesh: str | None = None
    """``"data=2,model=4"``."""
    in_specs: str | None = None
    """Shardings of the inputs (jit/pjit) or shard_map's in_specs."""
    out_specs: str | None = None
    axis_name: str | None = None
    in_axes: str | None = None
    out_axes: str | None = None
    """pmap's out_axes: ``"None, 0"`` (a prefix of the result pytree)."""
    static_broadcasted_argnums: tuple[int, ...] | None = None
    partitioner: Partitioner | None = None
    platform: Platform | None = None
    abstract: bool | None = None
    explicit: bool | None = None

    def merged_over(self, base: TargetOptions) -> TargetOptions:
        """These options where given, ``base``'s elsewhere. ``args_from`` and
        ``args``/``kwargs`` are alternatives: giving one set drops ``base``'s other."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.args_from is not None:
            base = replace(base, args=None, kwargs=None)
        elif self.args is not None or self.kwargs is not None:
            base = replace(base, args_from=None)
        return replace(base, **{k: v for k, v in given.items() if v is not None})

    @property
    def stage_name(self) -> Stage:
        return self.stage or "jit"


NO_OPTIONS = TargetOptions()
"""Nothing given: every option as its staging API's default."""

OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(TargetOptions))

_INT_TUPLES = {"static_argnums", "donate_argnums", "static_broadcasted_argnums"}
_NAME_TUPLES = {"static_argnames", "donate_argnames"}
_BOOLS = {"keep_unused", "abstract", "explicit"}
_CHOICES = {"stage": STAGES, "partitioner": PARTITIONERS, "platform": PLATFORMS}


def nearest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean `x`?)`` or an empty string."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def options_from_mapping(data: Any, where: str) -> TargetOptions:
    """Validate a declaration's plain-data mapping (keys use ``_`` or ``-``)."""
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a mapping of options, got {type(data).__name__}")
    values: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        if key not in OPTION_NAMES:
            raise UsageError(f"{where}: unknown key `{raw_key}`{nearest(key, OPTION_NAMES)}")
        values[key] = _checked(key, value, where)
    return TargetOptions(**values)


def _checked(key: str, value: Any, where: str) -> Any:
    def bad(expected: str) -> UsageError:
        return UsageError(f"{where}: `{key}` must be {expected}, got {value!r}")

    if key in _INT_TUPLES:
        items = (value,) if isinstance(value, int) else value
        if not isinstance(items, (list, tuple)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in items
        ):
            raise bad("an int or a list of ints")
        return tuple(items)
    if key in _NAME_TUPLES:
        items = (value,) if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
            raise bad("a name or a list of names")
        return tuple(items)
    if key in _BOOLS:
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if key == "devices":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise bad("a positive int")
        return value
    if not isinstance(value, str):
        raise bad("a string")
    if key in _CHOICES and value not in _CHOICES[key]:
        raise bad("one of " + ", ".join(_CHOICES[key]) + nearest(value, _CHOICES[key]))
    return value
