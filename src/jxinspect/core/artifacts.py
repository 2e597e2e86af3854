"""Reading what other machines and people wrote: recordings, lint caches, baselines,
shard parts, saved reports. Artifacts are data: a reader opens only a regular file, never
blocks on a FIFO or reads a device, never follows a link out of the artifact's folder,
and reads at most a bound that no real artifact reaches; whatever else is there is one
line (:class:`~jxinspect.core.errors.UsageError`, exit 2) naming the file and what it is.

Removing is the same: only a plain name inside the folder, only a real folder (never a
link), and only what this tool wrote there (:func:`remove_written`).

No JAX, nothing of ours but :mod:`jxinspect.core.errors`.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from jxinspect.core.errors import UsageError

MiB = 1 << 20

JSON_LIMIT = 256 * MiB
"""The most a JSON artifact (a report, an index, a baseline, a shard part, a cache
entry) may hold: a report of a model with tens of thousands of leaves is a few MiB."""

PROGRAM_LIMIT = 512 * MiB
"""The most a recorded module's text may hold (a 100k-operation module is ~20 MiB)."""

SMALL_LIMIT = 1 * MiB
"""The most a small bookkeeping file (an owner mark, a process's count) may hold."""


def plain_name(name: object) -> bool:
    """Whether ``name`` names an entry of a folder and nothing else: one path component,
    no separator, no NUL, not ``.``/``..``, not hidden, not empty."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and os.path.basename(name) == name
    )


def is_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (its links resolved) is ``folder`` or below it (its own resolved).

    A path written below ``folder`` whose every component after it is there and no link
    is inside without resolving either (an ``lstat`` a component: what makes reading a
    recording's thousands of files cheap); any other is resolved and compared."""
    root, target = os.fspath(folder).rstrip(os.sep), os.fspath(path)
    if target.startswith(root + os.sep):
        parts = target[len(root) + 1 :].split(os.sep)
        current = root
        for part in parts:
            if part in ("", ".", ".."):
                break
            current += os.sep + part
            try:
                if stat.S_ISLNK(os.lstat(current).st_mode):
                    break
            except OSError:
                break
        else:
            return True
    real = os.path.realpath(path)
    root = os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def open_regular(path: Path, *, inside: Path | None = None, shown: str | None = None) -> io.FileIO:
    """``path`` opened for reading (unbuffered), where it is a regular file (in ``inside``,
    the artifact's folder, its links resolved, when given): never blocks on a FIFO.

    A FIFO, a device, a socket, a folder or a link out of ``inside`` is one
    :class:`UsageError` naming ``shown`` (default: ``path``); a file that does not exist
    raises ``FileNotFoundError`` for the caller to say in its own words."""
    name = shown if shown is not None else str(path)
    if inside is not None and not is_inside(path, inside):
        raise UsageError(
            f"{name} leads out of {inside} (a link); an artifact's files stay in its folder"
        )
    try:
        handle = os.open(
            path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
        )
    except FileNotFoundError:
        raise
    except OSError as err:
        if err.errno == errno.ENXIO:  # a socket
            raise UsageError(
                f"{name} is not a regular file (a FIFO or socket); remove it"
            ) from None
        raise UsageError(f"cannot read {name}: {err.strerror}") from None
    mode = os.fstat(handle).st_mode
    if not stat.S_ISREG(mode):
        os.close(handle)
        raise UsageError(
            f"{name} is not a regular file ({kind_of(mode)}); remove it or give a file"
        )
    return os.fdopen(handle, "rb", buffering=0)


def read_bytes(
    path: Path, *, limit: int, inside: Path | None = None, shown: str | None = None
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    ``inside``: the artifact's folder, which the file (its links resolved) must be in.
    A FIFO, a device, a socket, a folder, a link out of ``inside`` or a file over
    ``limit`` is one :class:`UsageError` naming ``shown`` (default: ``path``); a file that
    does not exist raises ``FileNotFoundError`` for the caller to say in its own words."""
    name = shown if shown is not None else str(path)
    with open_regular(path, inside=inside, shown=shown) as file:
        if os.fstat(file.fileno()).st_size > limit:
            raise UsageError(
                f"{name} is larger than {limit // MiB} MiB, more than any real artifact holds"
            )
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = file.read(min(left, 1 << 22))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    if len(data) > limit:  # it grew while read
        raise UsageError(
            f"{name} is larger than {limit // MiB} MiB, more than any real artifact holds"
        )
    return data


def read_text(
    path: Path, *, limit: int, inside: Path | None = None, shown: str | None = None
) -> str:
    """:func:`read_bytes`, decoded as UTF-8; invalid UTF-8 is one :class:`UsageError`."""
    data = read_bytes(path, limit=limit, inside=inside, shown=shown)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        name = shown if shown is not None else str(path)
        raise UsageError(
            f"{name} is not UTF-8 text (byte {err.start}); it was not written by jxinspect"
        ) from None


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a link"
    return "not a regular file"


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` itself (not a link's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_real_folder(path: Path) -> bool:
    """Whether ``path`` itself (not a link's target) is a folder."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def remove_written(folder: Path, name: str, written: Iterable[str]) -> bool:
    """Remove ``folder/name`` where it is what this tool wrote: ``name`` a plain name,
    ``folder/name`` a real folder (never a link) holding only regular files named in
    ``written`` (and their temporary files). Whether it was removed; anything else is
    left as it is."""
    if not plain_name(name):
        return False
    path = folder / name
    if not is_real_folder(path):
        return False
    allowed = set(written)
    try:
        entries = list(os.scandir(path))
    except OSError:
        return False
    for entry in entries:
        ours = entry.name in allowed or (entry.name.startswith(".") and entry.name.endswith(".tmp"))
        if not ours or not entry.is_file(follow_symlinks=False):
            return False
    with contextlib.suppress(OSError):
        shutil.rmtree(path)
    return not os.path.lexists(path)
