"""Read a user's Python source file the way Python reads it, without importing it.

Python decodes a module by its byte-order mark or its coding line
(``# -*- coding: latin-1 -*-``, PEP 263) and UTF-8 otherwise, and reads ``\\r\\n`` and
``\\r`` as newlines. Every place jxinspect reads a user's ``.py`` file goes through
:func:`read_source` (or :func:`search_text` when it only looks for a word), so a module
Python imports is one jxinspect reads, and one Python cannot decode is the user's error
(exit 3) naming the file and the line, never a crash. Imports no JAX.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Iterator
from pathlib import Path

from jxinspect.core.errors import UsageError, UserCodeError


def read_bytes(path: Path, name: str | None = None) -> bytes:
    """The file's bytes; an unreadable file is a usage error."""
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{name or path} is a folder, not a Python file") from None
    except OSError as err:
        raise UsageError(f"cannot read {name or path}: {err.strerror}") from None


def undecodable(data: bytes, err: UnicodeDecodeError) -> tuple[int, str]:
    """Where ``data`` stops decoding (any file, not only Python): its line, and the
    byte, ``0x80``."""
    return data.count(b"\n", 0, err.start) + 1, f"0x{data[err.start]:02x}"


def decode_source(data: bytes, name: str) -> str:
    """``data`` decoded as Python decodes a module (BOM, coding line, else UTF-8), with
    universal newlines. :class:`UserCodeError` (exit 3) names the line Python would
    stop at."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:  # an unknown codec, a BOM that contradicts the coding line
        where = f":{err.lineno}" if err.lineno else ""
        raise UserCodeError(
            f"{name}{where}: {err.msg}; declare an encoding Python knows "
            "(e.g. `# -*- coding: utf-8 -*-`) or save the file as UTF-8"
        ) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        line, byte = undecodable(data, err)
        shown = "utf-8" if encoding == "utf-8-sig" else encoding
        raise UserCodeError(
            f"{name}:{line}: cannot decode byte {byte} as {shown} ({err.reason}); save the "
            f"file as {shown} or declare its encoding on line 1 or 2 "
            "(e.g. `# -*- coding: latin-1 -*-`)"
        ) from None
    except LookupError:  # pragma: no cover - detect_encoding checks the codec exists
        raise UserCodeError(f"{name}: unknown encoding {encoding}") from None
    return io.IncrementalNewlineDecoder(None, translate=True).decode(text, final=True)


def read_source(path: Path, name: str | None = None) -> str:
    """The text of a Python source file, decoded as Python decodes it."""
    shown = name or str(path)
    return decode_source(read_bytes(path, shown), shown)


def parse_source(path: Path, name: str | None = None) -> ast.Module:
    """The module's syntax tree. A file Python cannot decode or parse is the user's
    error (exit 3), naming the file and the line."""
    shown = name or str(path)
    source = read_source(path, shown)
    try:
        return ast.parse(source, filename=shown)
    except SyntaxError as err:
        raise UserCodeError(
            f"syntax error in {shown}:{err.lineno}: {err.msg}; fix the file and run again"
        ) from None
    except ValueError as err:  # Python 3.10: "source code string cannot contain null bytes"
        line = source.count("\n", 0, max(source.find("\0"), 0)) + 1
        raise UserCodeError(f"{shown}:{line}: {err}; fix the file and run again") from None
    except (RecursionError, MemoryError):
        raise UserCodeError(
            f"{shown}: nested too deeply for Python's parser; simplify the file and run again"
        ) from None


def search_text(path: Path) -> str | None:
    """The file's text for a plain search (``JXINSPECT in text``): decoded as Python
    decodes it where it can be, and with undecodable bytes replaced where it cannot (so
    the file is still found, and reading it properly later says what is wrong).
    ``None`` for a file that cannot be read at all."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return decode_source(data, str(path))
    except UserCodeError:
        return data.decode("utf-8", errors="replace")


def statements(nodes: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``nodes`` and in their bodies, at any depth (functions and
    classes included); expressions are never walked, so finding the imports or ``global``
    statements of a module costs a fraction of ``ast.walk``."""
    for node in nodes:
        yield node
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from statements(block)
        for part in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
            yield from statements(part.body)
