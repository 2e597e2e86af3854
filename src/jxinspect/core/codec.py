"""The one JSON codec of every file and stream jxinspect writes and reads: msgspec,
from the result types alone (no hand-written ``to_dict``/``from_dict``).

Writing: msgspec's encoder (C speed; the standard library's indenting encoder is pure
Python, seconds on a report of 20,000 leaves), laid out as ``json.dumps(indent=2,
ensure_ascii=False)`` lays it out (the golden files are byte-identical under both), UTF-8
text with control characters escaped. Floats are written in their shortest form
(``0.00001`` where ``json`` writes ``1e-05``: the same number). A dataclass field made
with ``metadata={"written": False}`` (texts kept for the views, a lint target's timing)
is left out, at any depth.

Reading: typed decoding. A file that is not what its type says (hand-edited, truncated,
from another version) is one :class:`DecodeError` naming the file, the JSON path and what
was expected.

The hooks, each with its reason: a :class:`~jxinspect.core.model.Mesh` is written as its
text (``"data=2,model=4"``), the form every report since the first has used.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, TypeVar

import msgspec

from jxinspect.core.model import Mesh

T = TypeVar("T")

MESH_PATTERN = "^([A-Za-z_][A-Za-z0-9_]*=[1-9][0-9]*(,[A-Za-z_][A-Za-z0-9_]*=[1-9][0-9]*)*)?$"
"""A mesh's text, as :meth:`~jxinspect.core.model.Mesh.parse` reads it."""


def _enc_hook(value: Any) -> Any:
    if isinstance(value, Mesh):
        return str(value)
    raise NotImplementedError(f"jxinspect cannot write a {type(value).__name__}")


def _dec_hook(kind: type, value: Any) -> Any:
    if kind is Mesh and isinstance(value, str):
        return Mesh.parse(value)
    raise NotImplementedError(f"expected `{kind.__name__}`")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


class DecodeError(ValueError):
    """A file or message that is not the type it should be: where, and what was expected."""

    def __init__(self, source: str, problem: str) -> None:
        self.source, self.problem = source, problem
        super().__init__(f"{source}: {problem}")


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How to write a dataclass that holds unwritten fields, itself or in its values."""

    unwritten: frozenset[str]
    """Its own fields kept in memory but never written."""
    nested: frozenset[str]
    """Its fields whose values may hold such a dataclass (a tuple of them, say)."""


_PLANS: dict[type, _Plan | None] = {}


def _hint_reaches(hint: Any, seen: set[type]) -> bool:
    """Whether a field's type names a dataclass that holds unwritten fields, at any depth
    (``tuple[TargetResult, ...]``, ``ShardInfo | None``)."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _plan(hint, seen) is not None
    return any(_hint_reaches(arg, seen) for arg in typing.get_args(hint))


def _plan(kind: type, seen: set[type] | None = None) -> _Plan | None:
    """``kind``'s plan, worked out once from its fields' types; ``None`` when it is
    written as it is (most types: a report's thousands of leaves are never walked)."""
    if kind in _PLANS:
        return _PLANS[kind]
    seen = set() if seen is None else seen
    if kind in seen:  # a type that holds itself: its own plan decides
        return None
    seen.add(kind)
    fields = dataclasses.fields(kind) if dataclasses.is_dataclass(kind) else ()
    try:
        hints = typing.get_type_hints(kind)
    except (NameError, TypeError):  # a name only a type checker sees: walk every field
        hints = {f.name: object for f in fields}
    unwritten = frozenset(f.name for f in fields if not f.metadata.get("written", True))
    nested = frozenset(
        f.name for f in fields
        if f.name not in unwritten and (hints.get(f.name) is object
                                        or _hint_reaches(hints.get(f.name), seen))
    )  # fmt: skip
    plan = _Plan(unwritten, nested) if unwritten or nested else None
    _PLANS[kind] = plan
    return plan


def _written(value: Any) -> Any:
    """``value`` with every unwritten field left out, at any depth: a dataclass holding
    some is shallow-copied without them (msgspec writes the fields an instance holds in
    its ``__dict__``), and only its values that may hold more are walked."""
    if isinstance(value, (tuple, list)):
        return [_written(item) for item in value]
    if isinstance(value, dict):
        return {key: _written(item) for key, item in value.items()}
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    plan = _plan(type(value))
    if plan is None:
        return value
    held = {
        name: _written(item) if name in plan.nested else item
        for name, item in vars(value).items()
        if name not in plan.unwritten
    }
    copy = object.__new__(type(value))
    vars(copy).update(held)
    return copy


def unwritten(kind: type) -> frozenset[str]:
    """The fields of ``kind`` kept in memory but never written."""
    plan = _plan(kind)
    return plan.unwritten if plan is not None else frozenset()


def _encode(data: Any, left_out: tuple[str, ...] = ()) -> bytes:
    written = _written(data)
    if left_out:  # a shallow copy without them (msgspec writes what ``__dict__`` holds)
        held = {k: v for k, v in vars(written).items() if k not in left_out}
        written = object.__new__(type(written))
        vars(written).update(held)
    return _ENCODER.encode(written)


def plain(data: Any) -> Any:
    """``data`` as the JSON reader gives it back: dicts, lists, strings, numbers,
    booleans and ``None`` (for a message to a process, a cache, a comparison)."""
    return msgspec.json.decode(_encode(data))


def dumps(data: Any, *, indent: int = 2) -> str:
    """``data`` (a result type, or plain values) as indented JSON text ending in a newline."""
    return msgspec.json.format(_encode(data), indent=indent).decode() + "\n"


def line(data: Any) -> str:
    """``data`` as compact JSON on one line (no newline at its end)."""
    return _encode(data).decode()


def by_line(data: Any, name: str) -> str:
    """``data`` as compact JSON with its field ``name`` (a sequence) last and each of its
    items on a line of its own, ending in a newline: a file rewritten as it grows (one
    encoding a row), that a person reads one row a line."""
    head = _encode(data, (name,)).decode()[:-1]
    rows = ",\n  ".join(line(row) for row in getattr(data, name))
    key = ("," if head != "{" else "") + line(name)
    return f"{head}{key}:[" + (f"\n  {rows}\n]}}\n" if rows else "]}\n")


def _lower_first(text: str) -> str:
    """``Expected …`` as ``expected …``; an acronym (``JSON is malformed``) kept."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _problem(err: msgspec.ValidationError | msgspec.DecodeError) -> str:
    """msgspec's ``Expected `int`, got `str` - at `$.a[0]``` as ``at $.a[0]: expected …``
    (``at $`` where msgspec names no path: the top object; none for text that is not JSON)."""
    text = str(err)
    what, sep, where = text.rpartition(" - at ")
    if not sep:
        what, where = text, ("`$`" if isinstance(err, msgspec.ValidationError) else "")
    said = _lower_first(what)
    return f"at {where.strip('`')}: {said}" if where else said


def decode(text: str | bytes, kind: type[T], *, source: str) -> T:
    """The JSON ``text`` read as a ``kind``; :class:`DecodeError` naming ``source`` if it
    is not JSON or not a ``kind``."""
    try:
        return msgspec.json.decode(text, type=kind, dec_hook=_dec_hook)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        raise DecodeError(source, _problem(err)) from None


def convert(data: Any, kind: type[T], *, source: str) -> T:
    """Plain ``data`` (read from JSON or YAML) as a ``kind``; :class:`DecodeError` naming
    ``source`` if it is not one."""
    try:
        return msgspec.convert(data, type=kind, dec_hook=_dec_hook)
    except msgspec.ValidationError as err:
        raise DecodeError(source, _problem(err)) from None


def schema(kind: type) -> dict[str, Any]:
    """The JSON Schema of ``kind``, as the codec writes it (a mesh is a string)."""

    def hook(cls: type) -> dict[str, Any]:
        if cls is Mesh:
            return {"type": "string", "pattern": MESH_PATTERN,
                    "description": "A mesh's axes and sizes, ``data=2,model=4``."}  # fmt: skip
        raise NotImplementedError(f"no schema for {cls.__name__}")

    result: dict[str, Any] = msgspec.json.schema(kind, schema_hook=hook)
    return result
