"""Paths and source lines for the text views (:mod:`jxinspect.core.source`, the one place
a path becomes what is printed), and free text with its paths shown, escaped."""

from __future__ import annotations

from jxinspect.core.source import (
    at_source_text,
    is_library,
    package_path,
    paths_shown,
    shown_path,
    source_text,
)
from jxinspect.render.common.escape import text as esc

__all__ = [
    "at_source_text",
    "is_library",
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
