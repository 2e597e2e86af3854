"""Paths and source lines for the text views (:mod:`jxinspect.core.source`, the one place
a path becomes what is printed), and free text with its paths shown, escaped."""

from __future__ import annotations

from jxinspect.core import source as _source
from jxinspect.core.source import (
    at_source_text,
    package_path,
    paths_shown,
    shown_path,
)
from jxinspect.render.common.escape import text as esc

__all__ = [
    "at_source_text",
    "package_path",
    "paths_shown",
    "shown_path",
    "shown_text",
    "source_text",
]


def shown_text(text: str) -> str:
    """``text`` for a text view: its paths as :func:`paths_shown` prints them, escaped
    (:func:`jxinspect.render.common.escape.text`)."""
    return esc(paths_shown(text))


def source_text(
    file: str | None,
    line: int | None,
    library_file: str | None = None,
    library_line: int | None = None,
) -> str:
    """``model.py:30 (flax/nnx/nn/linear.py:1342)``, as the text views print a source line
    (:func:`jxinspect.core.source.source_text`, the user's file shown)."""
    return _source.source_text(file, line, library_file, library_line, shown=True)
