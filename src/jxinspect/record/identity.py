"""A program's identity, from the lowered module's text (no JAX here): the module with
its locations (``loc(...)``, ``#loc`` lines) and names removed, hashed with SHA-256;
the names (the module's, the arguments' and ``jax.result_info``) hashed apart; and a
digest of the source text it was traced from (the function's, and every helper's and
method's its equations were traced through).

The same text, read again, gives the program's operations one per line with the user's
source line of each (:func:`operations`): what the first differing operation of two
programs is found in.
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import re
from collections.abc import Iterable
from dataclasses import dataclass
from tokenize import TokenError

from jxinspect.core.identity import Difference, ProgramIdentity
from jxinspect.core.units import source_parts

_NAMES = re.compile(r'jax\.(?:result_info|arg_info) = ("(?:[^"\\]|\\.)*")(?:, )?')
"""A result's path or an argument's name, as attributes of ``@main`` (0.4's ``arg_info``)."""
_EMPTY_ATTRIBUTES = re.compile(r" \{\}")
_MODULE = re.compile(r"^(\s*module) @([\w.$-]+|\"(?:[^\"\\]|\\.)*\")")
"""The module's name, ``module @jit_step``: the function's name, kept apart."""
_ALIAS = re.compile(r"^#(loc\d*) = (.*)$")
_FILE_LINE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+)(?::\d+)?')
_LOCATION = re.compile(r"(?<![\w.#])loc\(")
_REFERENCE = re.compile(r"#(loc\d*)\b")
_TRACED = re.compile(r'"[^"]*/[^"]*"\(')
"""A location named after a traced operation, ``"jit(step)/mul"(...)``."""
_SYMBOL = re.compile(r'@(?:[\w.$-]+|"(?:[^"\\]|\\.)*")')
"""A function's name where it is defined or called, ``@clip_0``."""
_DEFINES = re.compile(r"^(%[\w.#-]+)(?::\d+)? = ")
_VALUE = re.compile(r"%[\w.#-]+")
"""An SSA value's name (``%0``, ``%cst_3``): numbered by position, not part of an
operation's identity when comparing two programs line by line."""


@dataclass(frozen=True)
class Operation:
    """One line of a program's text, without its location, and where it came from."""

    text: str
    source_line: str | None
    """``train.py:12``: the user's line the operation was traced from, where known."""
    traced: bool = False
    """Its location names the operation JAX traced (``"jit(step)/mul"``); a constant JAX
    made for a literal has the call's location only."""


def _location_end(text: str, start: int) -> int:
    """The index just past the ``loc(...)`` that opens at ``start`` (quotes respected)."""
    depth, i = 0, start + 3
    while i < len(text):
        char = text[i]
        if char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _strip_line(line: str) -> tuple[str, list[str], list[str]]:
    """A line without its locations: the line, the locations, and the names found."""
    names = [m.group(1) for m in _NAMES.finditer(line)]
    line = _EMPTY_ATTRIBUTES.sub("", _NAMES.sub("", line))
    kept: list[str] = []
    locations: list[str] = []
    i = 0
    for found in _LOCATION.finditer(line):
        if found.start() < i:  # inside a location already removed
            continue
        end = _location_end(line, found.start())
        kept.append(line[i : found.start()].rstrip(" "))
        locations.append(line[found.start() + 4 : end - 1])
        i = end
    kept.append(line[i:])
    return "".join(kept), locations, names


def _lines(text: str) -> Iterable[tuple[str, list[str], list[str], dict[str, str]]]:
    """Each line of the module that is not a location alias, stripped, and the aliases."""
    aliases: dict[str, str] = {}
    body: list[str] = []
    for line in text.splitlines():
        alias = _ALIAS.match(line)
        if alias:
            aliases[alias.group(1)] = alias.group(2)
        elif line.strip():
            body.append(line)
    for line in body:
        stripped, locations, names = _strip_line(line)
        yield stripped, locations, names, aliases


def identity_of(text: str, source: str | None) -> ProgramIdentity:
    """The identity of a lowered module's text (:func:`jxinspect.tracer.seam.program_text`),
    with the digest ``source`` of the function's source text."""
    program, names = hashlib.sha256(), hashlib.sha256()
    for line, locations, found, _ in _lines(text):
        module = _MODULE.match(line)
        if module:
            names.update(module.group(2).encode() + b"\n")
            line = _MODULE.sub(r"\1 @module", line)
        if "@main(" in line:  # the arguments' names are their locations
            found = [*(loc for loc in locations if loc.startswith('"') and "(" not in loc), *found]
        program.update(line.encode() + b"\n")
        names.update("".join(f"{name}\n" for name in found).encode())
    return ProgramIdentity(program.hexdigest(), names.hexdigest(), source)


def _source_line(location: str, aliases: dict[str, str]) -> str | None:
    """``train.py:12``: the first file and line a location reaches (a call site's callee
    first, as JAX writes the user's frame), following ``#loc`` aliases."""
    seen: set[str] = set()
    while True:
        found = _FILE_LINE.search(location)
        reference = _REFERENCE.search(location)
        if found is not None and (reference is None or found.start() < reference.start()):
            return f"{found.group(1)}:{found.group(2)}"
        if reference is None or reference.group(1) in seen:
            return None
        seen.add(reference.group(1))
        location = aliases.get(reference.group(1), "")


def operations(text: str) -> list[Operation]:
    """The program's lines without locations, values numbered by position, each with the
    user's source line it was traced from: two programs compare line by line."""
    found = []
    for line, locations, _, aliases in _lines(text):
        line = _MODULE.sub(r"\1 @module", line)
        where = next((w for loc in locations if (w := _source_line(loc, aliases))), None)
        found.append(
            Operation(line.strip(), where, any(_traced(loc, aliases) for loc in locations))
        )
    return found


def _traced(location: str, aliases: dict[str, str]) -> bool:
    reference = _REFERENCE.fullmatch(location.strip())
    if reference is not None:
        location = aliases.get(reference.group(1), "")
    return bool(_TRACED.match(location.removeprefix("loc(")))


def defined_value(operation: Operation) -> str | None:
    """``%cst``: the value an operation defines, ``None`` where it defines none."""
    found = _DEFINES.match(operation.text)
    return found.group(1) if found else None


def line_of(operations: list[Operation], at: int) -> str | None:
    """The user's source line of the operation ``at``: its own where JAX traced it, else
    that of the first later traced operation that reads the value it defines (a constant
    JAX made for a literal of the user's code is read where the literal was)."""
    operation = operations[at]
    value = defined_value(operation)
    if operation.traced or value is None:
        return operation.source_line
    uses = re.compile(re.escape(value) + r"(?![\w.#-])")
    for later in operations[at + 1 :]:
        if later.traced and uses.search(later.text.partition("=")[2]):
            return later.source_line
    return operation.source_line


def comparable(operation: Operation) -> str:
    """An operation's text with its values' names left out (``%0 = stablehlo.add %1, %2``
    and ``%3 = stablehlo.add %4, %5`` are one operation in two places)."""
    return _VALUE.sub("%", operation.text)


def renamed(mine: list[Operation], theirs: list[Operation]) -> list[tuple[str, str]] | None:
    """Where two programs are the same but for the names of their functions (``@clip_0``
    on one side ``@clip_1`` on the other, each name standing for one name throughout),
    those names, before → after, in the order first met; ``None`` where they differ in
    anything else, or in nothing."""
    if len(mine) != len(theirs):
        return None
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for was, now in zip(mine, theirs, strict=True):
        before, after = comparable(was), comparable(now)
        if _SYMBOL.sub("@", before) != _SYMBOL.sub("@", after):
            return None
        for old, new in zip(_SYMBOL.findall(before), _SYMBOL.findall(after), strict=True):
            if forward.setdefault(old, new) != new or backward.setdefault(new, old) != old:
                return None
    return [(old, new) for old, new in forward.items() if old != new] or None


def operation_difference(mine: list[Operation], theirs: list[Operation]) -> Difference | None:
    """The first operation that differs, with the user's source line on each side; or,
    where the programs differ only in their functions' names, those names; ``None``
    where they are the same."""
    renames = renamed(mine, theirs)
    if renames is not None:
        return Difference("renamed", None, ", ".join(old for old, _ in renames),
                          ", ".join(new for _, new in renames))  # fmt: skip
    for at in range(max(len(mine), len(theirs))):
        was = mine[at] if at < len(mine) else None
        now = theirs[at] if at < len(theirs) else None
        if was is not None and now is not None and comparable(was) == comparable(now):
            continue
        return Difference(
            "op", None, was.text if was else None, now.text if now else None,
            line_of(mine, at) if was else None, line_of(theirs, at) if now else None,
        )  # fmt: skip
    return None


def source_digest(source: str | None, traced: Iterable[tuple[str, int]] = ()) -> str | None:
    """SHA-256 of the source text of the function ``step at train.py:12`` names (its
    whole ``def``, decorators included; a ``lambda``'s line) and of each code object the
    program was ``traced`` through (``(file, first line)``: the helpers and methods it
    called), read as the run reads them: a program whose source is the same on two sides
    came from the same text, wherever the files lie. ``None`` where the function's own
    file cannot be read."""
    _, file, line = source_parts(source)
    if not file or not line:
        return None
    own = _block(file, line)
    if own is None:
        return None
    digest = hashlib.sha256(own.encode())
    called = {_block(site, first) or f"{site}:{first}" for site, first in traced}
    called.discard(own)
    for text in sorted(hashlib.sha256(text.encode()).hexdigest() for text in called):
        digest.update(text.encode())
    return digest.hexdigest()


def _block(file: str, line: int) -> str | None:
    """The source block that starts at ``line`` of ``file`` (a ``def`` or a class body,
    decorators included; one line where it does not parse); ``None`` where the file
    cannot be read."""
    lines = linecache.getlines(file)
    if not lines or line > len(lines) or line < 1:
        return None
    try:
        block = inspect.getblock(lines[line - 1 :])
    except (SyntaxError, IndentationError, TokenError):
        block = lines[line - 1 : line]
    return "".join(block)
