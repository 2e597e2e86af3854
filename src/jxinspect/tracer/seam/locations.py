"""MLIR locations read alike through every release's bindings.

* **Locations**: ``ir.NameLoc``/``CallSiteLoc``/… classes (after 0.10.0; 0.10.2 has
  them), ``Location.is_a_name()`` and friends (0.6 to 0.10.0; 0.6.2 and 0.7.2 have them;
  0.7.1's file location with a column range answers none of them), only the printed
  form (0.4.35, 0.5.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jxinspect.tracer.seam.objects import MlirLocation


def unescape(text: str) -> str:
    """MLIR's string escapes (``\\22``, ``\\\\``, ``\\n``; non-ASCII as escaped UTF-8
    bytes) back to characters."""
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 >= len(text):
            out += char.encode()
            i += 1
            continue
        code = text[i + 1]
        if code in '\\"nt':
            out += {"\\": b"\\", '"': b'"', "n": b"\n", "t": b"\t"}[code]
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1 : i + 3]):
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            out += char.encode()
            i += 1
    return out.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Loc:
    """One MLIR location, the same on every release's bindings."""

    kind: str
    """``name``, ``callsite``, ``file``, ``fused`` or ``unknown``."""
    name: str | None = None
    filename: str | None = None
    line: int | None = None
    children: tuple[MlirLocation | Loc, ...] = ()
    """name: (child,); callsite: (callee, caller); fused: its locations (raw objects)."""


_FILE_LINE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+')
_NAME_IN_TEXT = re.compile(r'"((?:[^"\\]|\\.)*)"(?!:\d)')


def read_location(location: MlirLocation | Loc) -> Loc:
    """What one location is, through whichever bindings this jaxlib has."""
    from jaxlib.mlir import ir as bindings

    if isinstance(location, Loc):  # already read (0.4.35's printed form nests them)
        return location
    if hasattr(bindings, "NameLoc"):  # 0.8 on: one class per kind
        if isinstance(location, bindings.NameLoc):
            return Loc("name", name=str(location.name_str), children=(location.child_loc,))
        if isinstance(location, bindings.CallSiteLoc):
            return Loc("callsite", children=(location.callee, location.caller))
        if isinstance(location, bindings.FileLineColLoc):
            return Loc("file", filename=str(location.filename), line=int(location.start_line))
        if isinstance(location, bindings.FusedLoc):
            return Loc("fused", children=tuple(location.locations))
        return Loc("unknown")
    if hasattr(location, "is_a_name"):  # 0.5–0.7: predicates on Location
        if location.is_a_name():
            return Loc("name", name=str(location.name_str), children=(location.child_loc,))
        if location.is_a_callsite():
            return Loc("callsite", children=(location.callee, location.caller))
        if location.is_a_file():
            return Loc("file", filename=str(location.filename), line=int(location.start_line))
        if location.is_a_fused():
            return Loc("fused", children=tuple(location.locations))
        # 0.7.1: a file location with a column range (`"f.py":13:8 to :84`) answers no
        # predicate; its printed form says it
    # 0.4.35: only the printed form; keep the outer name and the innermost file:line
    text = str(location)
    names = [unescape(m.group(1)) for m in _NAME_IN_TEXT.finditer(text)]
    name = names[0] if names else None
    files = _FILE_LINE.findall(text)
    if name is not None:
        child = (
            Loc("file", filename=unescape(files[0][0]), line=int(files[0][1]))
            if files
            else Loc("unknown")
        )
        return Loc("name", name=name, children=(child,))
    if files:
        return Loc("file", filename=unescape(files[0][0]), line=int(files[0][1]))
    return Loc("unknown")


def location_name(location: MlirLocation | Loc) -> str | None:
    """The name of a ``NameLoc`` (a block argument's name), else ``None``."""
    read = read_location(location)
    return read.name if read.kind == "name" else None
