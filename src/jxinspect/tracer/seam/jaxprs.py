"""Jaxprs: their debug info, equations, nested jaxprs and abstract values.

* **Debug info**: ``JaxprDebugInfo`` in 0.4.x, ``DebugInfo`` later (``result_paths``
  computed lazily in some releases); :class:`DebugInfo` reads both alike.
* **Source lines**: ``source_info_util.user_frame`` takes a traceback, in 0.4.35 the
  ``SourceInfo`` itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


def in_avals(jaxpr: Any) -> list[Any]:
    """The abstract values of a ``Jaxpr``'s inputs (``Jaxpr.in_avals`` is newer than 0.4.35)."""
    return [v.aval for v in jaxpr.invars]


def out_avals(jaxpr: Any) -> list[Any]:
    return [v.aval for v in jaxpr.outvars]


@dataclass(frozen=True)
class DebugInfo:
    """A jaxpr's debug info as every release spells it (``JaxprDebugInfo`` in 0.4.x)."""

    traced_for: str
    func_src_info: str | None
    arg_names: tuple[str, ...] | None
    result_paths: tuple[str, ...] | None


def debug_info(jaxpr: Any) -> DebugInfo | None:
    info = getattr(jaxpr, "debug_info", None)
    if info is None:
        return None
    names = getattr(info, "arg_names", None)
    paths = getattr(info, "result_paths", None)
    if callable(paths):  # some releases compute them lazily
        paths = paths()
    return DebugInfo(
        traced_for=str(info.traced_for),
        func_src_info=str(info.func_src_info) if info.func_src_info is not None else None,
        arg_names=tuple(str(n) for n in names) if names is not None else None,
        result_paths=tuple(str(p) for p in paths) if paths is not None else None,
    )


def sub_jaxprs(params: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(label, jaxpr)`` for each jaxpr in an equation's parameters (``branches[1]``)."""
    from jax._src import core

    for key, value in params.items():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for i, item in enumerate(items):
            label = f"{key}[{i}]" if isinstance(value, (tuple, list)) else key
            if isinstance(item, core.ClosedJaxpr):
                yield label, item.jaxpr
            elif isinstance(item, core.Jaxpr):
                yield label, item


def user_source_line(eqn: Any) -> tuple[str, int] | None:
    """``(file, line)`` of the user's frame that an equation came from."""
    from jax._src import source_info_util

    info = eqn.source_info
    try:
        frame = source_info_util.user_frame(info.traceback)
    except AttributeError:  # 0.4.35 takes the SourceInfo itself
        frame = source_info_util.user_frame(info)
    if frame is None:
        return None
    return str(frame.file_name), int(frame.start_line)
