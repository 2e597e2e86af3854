"""A line of source as the reports, views and findings write it: the user's file and
line, the library's frame it ran in beside it (``model.py:30
(flax/nnx/nn/linear.py:1342)``), a library's file by its package path (the part after the
``sys.path`` folder holding it)."""

from __future__ import annotations

import os
import sys


def package_path(file: str) -> str:
    """``flax/nnx/nn/linear.py`` for a file under a ``sys.path`` folder (the longest that
    holds it); the file as given otherwise."""
    absolute = os.path.abspath(file)
    roots = [os.path.abspath(p) + os.sep for p in sys.path if p]
    holding = [r for r in roots if absolute.startswith(r)]
    return absolute[len(max(holding, key=len)) :] if holding else file


def source_text(
    file: str | None,
    line: int | None,
    library_file: str | None = None,
    library_line: int | None = None,
) -> str:
    """``model.py:30 (flax/nnx/nn/linear.py:1342)``; the library's alone where the user's
    line is not known; empty where neither is."""
    user = f"{file}:{line}" if file else ""
    library = f"{package_path(library_file)}:{library_line}" if library_file else ""
    if user and library:
        return f"{user} ({library})"
    return user or library
