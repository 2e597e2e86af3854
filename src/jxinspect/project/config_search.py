"""Where a project's configuration is: ``jxinspect.yaml``, or ``pyproject.toml`` with
``[tool.jxinspect]``, searched from the working folder up to the project's root, never in
a folder that another user could have written. Reading and checking what is found is
:mod:`jxinspect.project.config`; this search alone loads none of its declarations (a
command checks that a configuration exists before it pays for reading one). Imports no JAX.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from jxinspect.core import artifacts
from jxinspect.core.errors import UsageError

YAML_NAMES = ("jxinspect.yaml", "jxinspect.yml")
PYPROJECT = "pyproject.toml"

ROOT_MARKERS = (".git", ".hg")
"""A repository's root: the search for a configuration goes no higher."""


def find_config(start: Path) -> Path | None:
    """The configuration :func:`search_config` finds from ``start``, or ``None``."""
    return search_config(start)[0]


def search_config(start: Path) -> tuple[Path | None, str | None]:
    """``jxinspect.yaml``, or a ``pyproject.toml`` with ``[tool.jxinspect]``, in ``start``
    or the nearest folder above it, up to the project's root (as ruff and mypy find
    theirs): the first folder holding a ``jxinspect.yaml`` or a ``pyproject.toml`` (one
    without ``[tool.jxinspect]`` ends the search: that project has none), a repository
    root (``.git``, ``.hg``), or the user's home; never above home.

    A configuration names code that lint imports and runs, so, as git's
    ``safe.directory`` reasons, a folder that another user could have written (not this
    user's or root's, or writable by a group or by everyone) is never taken: the search
    stops there, and a configuration in it is the second value, a line saying why it was
    not used. (The file itself is checked when it is opened: :func:`project_config`.)"""
    home = _home()
    start = start.resolve()
    for folder in (start, *start.parents):
        try:
            why = unsafe(folder.stat())
        except OSError:
            return None, None
        found = _candidate(folder)
        if why is not None:
            return None, (refusal(found, f"its folder {folder}", folder, why) if found else None)
        if found is not None or _has_pyproject(folder):
            return found, None
        if folder == home or any((folder / marker).exists() for marker in ROOT_MARKERS):
            return None, None
    return None, None


def _candidate(folder: Path) -> Path | None:
    """The configuration file of ``folder``, if it holds one."""
    for name in YAML_NAMES:
        if (folder / name).is_file():
            return folder / name
    pyproject = folder / PYPROJECT
    return pyproject if pyproject.is_file() and _has_table(pyproject) else None


def _has_pyproject(folder: Path) -> bool:
    return (folder / PYPROJECT).is_file()


def unsafe(found: os.stat_result) -> tuple[str, str] | None:
    """Why a configuration's file or folder (``found``, its status) could have been
    written by another user than this one, in words, and the command that fixes it
    (``chown``, ``chmod go-w``); ``None`` when it could not: it is
    this user's or root's, and writable by no group (but this user's own, of which it is
    the only member) and not by everyone. No owners here (not POSIX): ``None``."""
    if not hasattr(os, "getuid"):
        return None
    if found.st_uid not in (os.getuid(), 0):
        return f"belongs to another user (uid {found.st_uid})", "chown"
    if found.st_mode & stat.S_IWOTH:
        return "can be written by everyone", "chmod go-w"
    if found.st_mode & stat.S_IWGRP and not _own_group(found.st_gid):
        return f"can be written by the group {_group_name(found.st_gid)}", "chmod go-w"
    return None


def _own_group(gid: int) -> bool:
    """Whether ``gid`` is this user's own group (a user-private group: this user's
    primary group, named as the user, with no other member)."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(os.getuid())
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return (
        gid == user.pw_gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
    )


def _group_name(gid: int) -> str:
    import grp

    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def refusal(path: Path, what: str, where: Path, why: tuple[str, str]) -> str:
    """The line that says a configuration was not used: ``what`` (``it``, ``its
    folder …``) at ``where`` is ``why``, and how to fix it."""
    return (
        f"{used(path)} is not used: {what} {why[0]}, so another user could have written the "
        f"code it runs ({why[1]} {where}, or give --config)"
    )


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):  # no home known (no HOME, no passwd entry)
        return None


def _has_table(pyproject: Path) -> bool:
    """Whether ``pyproject.toml`` has a ``[tool.jxinspect]`` table (read as text: a
    broken file is reported when it is loaded; one that is not a regular file has none)."""
    try:
        text = artifacts.read_bytes(pyproject, limit=artifacts.JSON_LIMIT).decode(
            "utf-8", errors="replace"
        )
    except (OSError, UsageError):
        return False
    return re.search(r"^\s*\[+\s*tool\.jxinspect\b", text, re.MULTILINE) is not None


def shown(path: Path) -> str:
    """``path`` relative to the working folder where it lies inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def used(path: Path) -> str:
    """A configuration as the run that used it names it: relative to the working folder
    where it lies in it or in a folder above it (``jxinspect.yaml``,
    ``../jxinspect.yaml``), else in full."""
    full = path.resolve()
    try:
        relative = Path(os.path.relpath(full, Path.cwd().resolve()))
    except ValueError:  # another drive
        return str(full)
    up = relative.parts[:-1]
    inside = not up or up[0] != ".."
    return str(relative) if inside or set(up) == {".."} else str(full)
