"""The one JSON codec of every file and stream jxinspect writes and reads: msgspec,
from the result types alone (no hand-written ``to_dict``/``from_dict``).

Writing: msgspec's encoder (C speed; the standard library's indenting encoder is pure
Python, seconds on a report of 20,000 leaves), laid out as ``json.dumps(indent=2,
ensure_ascii=False)`` lays it out (the golden files are byte-identical under both), UTF-8
text with control characters escaped: C0 by msgspec, and C1, the bidirectional-text
controls (U+202E...), the line and paragraph separators U+2028 and U+2029 (which
JavaScript reads as line breaks) and the non-characters U+FFFE and U+FFFF as ``\\uXXXX``
too: every JSON file and stream, SARIF included, holds none of them raw (the same strings,
read back; printed to a terminal, none of them acts on it). Floats are written in their
shortest form (``0.00001`` where ``json`` writes ``1e-05``: the same number). A dataclass field made
with ``metadata={"written": False}`` (texts kept for the views, a lint target's timing)
is left out, at any depth.

Reading: typed decoding. A file that is not what its type says (hand-edited, truncated,
from another version) is one :class:`DecodeError` naming the file, the JSON path and what
was expected. A number no float holds (``1e400``), infinity and NaN (which the standard
library's reader and YAML give) and nesting deeper than the decoder goes are such errors
too: no reader is handed a value that overflows when it is used. A JSON artifact is read
by :func:`read_file`: the one bounded reader of :mod:`~jxinspect.core.artifacts`, then
this decoding, its error saying besides what schema the file names.

The hooks, each with its reason: a :class:`~jxinspect.core.model.Mesh` is written as its
text (``"data=2,model=4"``), the form every report since the first has used; one read
back names at most :data:`~jxinspect.core.model.MAX_DEVICES` devices (as every count of
devices or pieces does), so that no view sizes anything by a number the file only
claims.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import math
import re
import sys
import typing
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from jxinspect.core import artifacts
from jxinspect.core.mesh import MAX_DEVICES, Mesh

T = TypeVar("T")

MESH_PATTERN = "^([A-Za-z_][A-Za-z0-9_]*=[1-9][0-9]*(,[A-Za-z_][A-Za-z0-9_]*=[1-9][0-9]*)*)?$"
"""A mesh's text, as :meth:`~jxinspect.core.model.Mesh.parse` reads it."""


def _enc_hook(value: Any) -> Any:
    if isinstance(value, Mesh):
        return str(value)
    raise NotImplementedError(f"jxinspect cannot write a {type(value).__name__}")


def _dec_hook(kind: type, value: Any) -> Any:
    if kind is Mesh and isinstance(value, str):
        mesh = Mesh.parse(value)
        if any(size < 1 for _, size in mesh.axes) or mesh.size > MAX_DEVICES:
            raise ValueError(
                f"expected a mesh of 1 to {MAX_DEVICES:,} devices with no empty axis, got {value!r}"
            )
        return mesh
    raise NotImplementedError(f"expected `{kind.__name__}`")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)

_UNSAFE = re.compile(
    rb"\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c|\xef\xbf[\xbe\xbf]"
)
"""The UTF-8 of C1 controls, U+200E/F, U+2028-202E, U+2066-2069, U+061C and U+FFFE/F
(as :mod:`jxinspect.render.common.escape` names them for text): only ever inside a JSON
string (its structure is ASCII), whole (UTF-8 resynchronizes)."""


def _escaped(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode())


class DecodeError(ValueError):
    """A file or message that is not the type it should be: where, and what was expected.

    Raised by :func:`read_file` and :func:`decode_file`, it says besides what the file
    is: ``malformed``, not JSON at all; else ``found``, the ``"schema"`` it names
    (``None``: none), so that a reader can say "another file" apart from "a broken one"."""

    def __init__(
        self, source: str, problem: str, *, malformed: bool = False, found: object = None
    ) -> None:
        self.source, self.problem = source, problem
        self.malformed, self.found = malformed, found
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


_NAMED = re.compile(r"""'[^']*'|"[^"]*"|(?<![\w.])([A-Za-z_][\w.]*)(\s*=(?!=))?""")
"""In an annotation's text: a string (a ``Literal``'s member), else a name (not an
attribute of a value, ``', '.join``), with the ``=`` that makes it a keyword argument
(``Meta(ge=0)``) rather than a type."""


def _annotation_reaches(annotation: Any, namespace: dict[str, Any], seen: set[type]) -> bool:
    """:func:`_hint_reaches` for one field's annotation: an object, or the text that
    ``from __future__ import annotations`` leaves, whose names are looked up in the
    module that wrote it (none is evaluated: ``typing.get_type_hints`` compiles every
    annotation, most of the cost of a first write). A name that module does not hold
    (one only a type checker sees) may be anything, as ``object`` may: the field is
    walked."""
    if annotation is object or annotation == "object":
        return True  # anything may be in it
    if not isinstance(annotation, str):
        return _hint_reaches(annotation, seen)
    for match in _NAMED.finditer(annotation):
        name, keyword = match.groups()
        if name is None or keyword:
            continue
        head, *rest = name.split(".")
        value = namespace.get(head, getattr(builtins, head, _UNKNOWN))
        for part in rest:
            value = getattr(value, part, _UNKNOWN)
        if value is _UNKNOWN or _hint_reaches(value, seen):
            return True
    return False


_UNKNOWN = object()


def _annotations(kind: type) -> dict[str, tuple[Any, dict[str, Any]]]:
    """Each annotated name of ``kind`` and its bases: its annotation, and the namespace
    of the module that wrote it (the nearest class's, as ``typing.get_type_hints``)."""
    found: dict[str, tuple[Any, dict[str, Any]]] = {}
    for base in kind.__mro__:
        module = sys.modules.get(base.__module__)
        namespace = vars(module) if module is not None else {}
        for name, annotation in base.__dict__.get("__annotations__", {}).items():
            found.setdefault(name, (annotation, namespace))
    return found


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
    hints = _annotations(kind)
    unwritten = frozenset(f.name for f in fields if not f.metadata.get("written", True))
    nested = frozenset(
        f.name for f in fields
        if f.name not in unwritten and (f.name not in hints
                                        or _annotation_reaches(*hints[f.name], seen))
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
    encoded = _ENCODER.encode(written)
    return _UNSAFE.sub(_escaped, encoded) if _UNSAFE.search(encoded) else encoded


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


TOO_DEEP = "nested deeper than the decoder goes"
"""The problem a :class:`DecodeError` names for a document nested too deeply."""


def decode(text: str | bytes, kind: type[T], *, source: str) -> T:
    """The JSON ``text`` read as a ``kind``; :class:`DecodeError` naming ``source`` if it
    is not JSON or not a ``kind`` (msgspec refuses a number out of a float's range)."""
    try:
        return msgspec.json.decode(text, type=kind, dec_hook=_dec_hook)
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        raise DecodeError(source, _problem(err)) from None
    except RecursionError:
        raise DecodeError(source, TOO_DEEP) from None


def read_file(
    path: Path,
    kind: type[T],
    *,
    shown: str | None = None,
    inside: Path | None = None,
    limit: int = artifacts.JSON_LIMIT,
    schema: str | None = None,
) -> T:
    """The JSON artifact at ``path`` read as a ``kind``: by the one bounded reader
    (:func:`~jxinspect.core.artifacts.read_bytes`: a regular file, in ``inside`` where
    given, at most ``limit`` bytes; else a :class:`~jxinspect.core.errors.UsageError`
    naming ``shown``, default ``path``; a missing file raises ``FileNotFoundError``),
    then :func:`decode_file`."""
    name = shown if shown is not None else str(path)
    data = artifacts.read_bytes(path, limit=limit, inside=inside, shown=name)
    return decode_file(data, kind, source=name, schema=schema)


def decode_file(data: str | bytes, kind: type[T], *, source: str, schema: str | None = None) -> T:
    """A JSON file's contents read as a ``kind``; :class:`DecodeError` naming ``source``
    and the JSON path, and saying whether the text is ``malformed`` or else which schema
    it names (``found``). ``schema``: the ``"schema"`` the file must name, checked first
    (where ``kind`` would take a file without one)."""
    try:
        if schema is not None and (found := schema_of(data, source=source)) != schema:
            raise DecodeError(source, f"expected the schema {schema!r}", found=found)
        return decode(data, kind, source=source)
    except DecodeError as err:
        if err.found is not None:
            raise
        try:
            found = schema_of(data, source=source)
        except DecodeError as worse:
            malformed = worse.problem != TOO_DEEP
            raise DecodeError(source, worse.problem, malformed=malformed) from None
        raise DecodeError(source, err.problem, found=found) from None


class _Head(msgspec.Struct):
    schema: Any = None


def schema_of(text: str | bytes, *, source: str) -> object:
    """The ``"schema"`` a JSON document names (``None``: none, or not an object), read
    without building the rest; :class:`DecodeError` where the text is not JSON."""
    try:
        return msgspec.json.decode(text, type=_Head).schema
    except msgspec.ValidationError:
        return None
    except msgspec.DecodeError as err:
        raise DecodeError(source, _problem(err)) from None
    except RecursionError:
        raise DecodeError(source, TOO_DEEP) from None


@functools.cache
def _counter(field: str) -> type:
    return msgspec.defstruct("_Count", [(field, list[msgspec.Raw], [])])


def count_items(text: str | bytes, field: str, *, source: str) -> int:
    """How many items the list ``field`` of a JSON object holds, counted without
    building them (0: none, or not an object); :class:`DecodeError` where the text is not
    JSON or ``field`` not a list. A reader bounds a file's rows with it before decoding."""
    try:
        return len(getattr(msgspec.json.decode(text, type=_counter(field)), field))
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        if isinstance(err, msgspec.ValidationError) and _problem(err).startswith("at $:"):
            return 0  # not an object: the typed decoding says what it is
        raise DecodeError(source, _problem(err)) from None
    except RecursionError:
        raise DecodeError(source, TOO_DEEP) from None


def convert(data: Any, kind: type[T], *, source: str) -> T:
    """Plain ``data`` (read from JSON or YAML) as a ``kind``; :class:`DecodeError` naming
    ``source`` if it is not one, or holds a number that is not finite."""
    _finite(data, source)
    try:
        return msgspec.convert(data, type=kind, dec_hook=_dec_hook)
    except msgspec.ValidationError as err:
        raise DecodeError(source, _problem(err)) from None
    except RecursionError:
        raise DecodeError(source, TOO_DEEP) from None


def _finite(data: Any, source: str) -> None:
    """:class:`DecodeError` at the first float of ``data`` that is infinite or NaN (the
    standard library's JSON reader turns ``1e400`` into ``inf``), with its JSON path (a
    walk that builds no path unless it finds one)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            said = f"at {_path_to(data)}: expected a finite number, got {value}"
            raise DecodeError(source, said)
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def _path_to(data: Any) -> str:
    """The JSON path of the first non-finite float of ``data``, in :func:`_finite`'s order."""
    stack: list[tuple[Any, str]] = [(data, "$")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where
        if isinstance(value, dict):
            stack.extend((item, f"{where}.{key}") for key, item in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
    return "$"


def schema(kind: type) -> dict[str, Any]:
    """The JSON Schema of ``kind``, as the codec writes it (a mesh is a string)."""

    def hook(cls: type) -> dict[str, Any]:
        if cls is Mesh:
            return {"type": "string", "pattern": MESH_PATTERN,
                    "description": "A mesh's axes and sizes, ``data=2,model=4``."}  # fmt: skip
        raise NotImplementedError(f"no schema for {cls.__name__}")

    result: dict[str, Any] = msgspec.json.schema(kind, schema_hook=hook)
    return result
