"""The one JSON codec of every file and stream jxinspect writes: msgspec's encoder (C
speed; the standard library's indenting encoder is pure Python, seconds on a report of
20,000 leaves), laid out as ``json.dumps(indent=2, ensure_ascii=False)`` lays it out
(the golden files are byte-identical under both), UTF-8 text with control characters
escaped. Floats are written in their shortest form (``0.00001`` where ``json`` writes
``1e-05``: the same number)."""

from __future__ import annotations

from typing import Any

import msgspec

_ENCODER = msgspec.json.Encoder()


def dumps(data: Any, *, indent: int = 2) -> str:
    """``data`` (plain dicts, lists, strings, numbers, booleans, ``None``) as indented
    JSON text ending in a newline."""
    return msgspec.json.format(_ENCODER.encode(data), indent=indent).decode() + "\n"


def line(data: Any) -> str:
    """``data`` as compact JSON on one line (no newline at its end)."""
    return _ENCODER.encode(data).decode()
