"""Paths and source lines as the text views write them, the way ruff, pytest and mypy
print paths: a library's file by its package path (``flax/nnx/nn/linear.py:1342``), a
file under the working folder relative to it (``model.py:30``), any other as given. The
user's line with the library's frame it ran in beside it: ``model.py:30
(flax/nnx/nn/linear.py:1342)``. JSON keeps the absolute paths; HTML too.

This is the one place a path becomes what a text view, a finding's message or a view
prints: a structured ``file``/``line`` through :func:`source_text` or
:func:`shown_path`, a message that embeds a path (JAX's ``step at /abs/model.py:21``)
through :func:`paths_shown` (``render.common.source.shown_text`` escapes it too).
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig

_LIBRARY_FOLDERS = ("site-packages", "dist-packages")
_ABSOLUTE_PY = re.compile(r"(?<![\w./-])(/[^\s:\"'()\[\]{}<>,;`]+?\.pyi?)(?![\w/])")
"""An absolute path to a Python file inside free text (a message, JAX's ``func_src_info``)."""


def _library_roots() -> list[str]:
    """Folders whose files are libraries: site-packages on ``sys.path`` and the standard
    library's own folders, each ending in a separator."""
    roots = {
        os.path.abspath(p)
        for p in sys.path
        if p and any(part in _LIBRARY_FOLDERS for part in p.split(os.sep))
    }
    paths = sysconfig.get_paths()
    roots |= {os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return [r + os.sep for r in roots]


def package_path(file: str) -> str:
    """``flax/nnx/nn/linear.py`` for a file under a ``sys.path`` folder (the longest that
    holds it); the file as given otherwise."""
    absolute = os.path.abspath(file)
    roots = [os.path.abspath(p) + os.sep for p in sys.path if p]
    holding = [r for r in roots if absolute.startswith(r)]
    return absolute[len(max(holding, key=len)) :] if holding else file


def shown_path(file: str) -> str:
    """The path a text view prints: a library's by its package path, one under the working
    folder relative to it, any other as given. A path that is not absolute is kept."""
    if not os.path.isabs(file):
        return file
    absolute = os.path.normpath(file)
    libraries = [r for r in _library_roots() if absolute.startswith(r)]
    if libraries:
        return absolute[len(max(libraries, key=len)) :]
    try:
        here = os.getcwd() + os.sep
    except OSError:  # the working folder was removed
        return file
    return absolute[len(here) :] if absolute.startswith(here) else file


def paths_shown(text: str) -> str:
    """``text`` with each absolute path to a Python file in it as :func:`shown_path`
    prints it (``step at /home/me/proj/train.py:21`` → ``step at train.py:21``)."""
    return _ABSOLUTE_PY.sub(lambda m: shown_path(m.group(1)), text)


def _library_path(file: str) -> str:
    """A library frame's file: as :func:`shown_path`, or by its package path where that
    leaves it absolute (a library installed from a source folder on ``sys.path``)."""
    shown = shown_path(file)
    return package_path(file) if os.path.isabs(shown) else shown


def source_text(
    file: str | None,
    line: int | None,
    library_file: str | None = None,
    library_line: int | None = None,
    *,
    shown: bool = False,
) -> str:
    """``/abs/model.py:30 (flax/nnx/nn/linear.py:1342)``: the user's line, the library's
    frame beside it by its package path; the library's alone where the user's line is not
    known; empty where neither is. ``shown``: the user's file as a text view prints it
    (:func:`shown_path`: ``model.py:30``); a finding's message keeps it absolute, as JSON
    does (the text views show it through :func:`paths_shown`)."""
    where = shown_path(file) if file and shown else file
    user = (f"{where}:{line}" if line else where) if where else ""
    library = f"{_library_path(library_file)}:{library_line}" if library_file else ""
    if user and library:
        return f"{user} ({library})"
    return user or library


def at_source_text(file: str | None, line: int | None) -> str:
    """`` at model.py:16``; empty where either is not known."""
    return f" at {source_text(file, line, shown=True)}" if file and line else ""
