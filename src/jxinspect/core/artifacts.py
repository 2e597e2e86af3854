"""Reading what other machines and people wrote: recordings, lint caches, baselines,
shard parts, saved reports. Artifacts are data: a reader opens only a regular file, never
blocks on a FIFO or reads a device, never follows a link out of the artifact's folder,
and reads at most a bound that no real artifact reaches; whatever else is there is one
line (:class:`~jxinspect.core.errors.UsageError`, exit 2) naming the file and what it is.
Each of these is checked on the file that was opened (:func:`open_regular`, the one way
in): nothing checked by its name first can be swapped for a link before the open.

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


_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
"""How an artifact's file is opened: never blocking on a FIFO, never a terminal's."""
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC
_A_LINK = (errno.ELOOP, errno.ENOTDIR)
"""What opening a link with ``O_NOFOLLOW`` raises (``ENOTDIR`` with ``O_DIRECTORY``)."""


def open_regular(path: Path, *, inside: Path | None = None, shown: str | None = None) -> io.FileIO:
    """``path`` opened for reading (unbuffered), where it is a regular file (in ``inside``,
    the artifact's folder, when given): never blocks on a FIFO.

    What was opened is what is checked, so nothing can be swapped in between: below
    ``inside`` each component is opened from the one before without following a link
    (``O_NOFOLLOW``); where one is a link, the path is opened as the kernel resolves it
    and the file it opened must lie in ``inside`` (its place read back from the open
    descriptor); then ``fstat`` of the open file says what it is.

    A FIFO, a device, a socket, a folder or a link out of ``inside`` is one
    :class:`UsageError` naming ``shown`` (default: ``path``); a file that does not exist
    raises ``FileNotFoundError`` for the caller to say in its own words."""
    name = shown if shown is not None else str(path)
    try:
        handle = _open(path) if inside is None else _open_inside(path, inside, name)
    except FileNotFoundError:
        raise
    except OSError as err:
        raise _unreadable(err, name) from None
    return _regular(handle, name)


def open_entry(folder: int, entry: str, *, shown: str) -> io.FileIO:
    """The regular file ``entry`` (a plain name) of the open folder ``folder``, opened
    without following a link; anything else is one :class:`UsageError` naming ``shown``
    (a link: "a link"), a missing file ``FileNotFoundError``."""
    if not plain_name(entry):
        raise UsageError(f"{shown} is not a plain name in its folder")
    try:
        handle = os.open(entry, _READ | _NOFOLLOW, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as err:
        if err.errno in _A_LINK:
            raise UsageError(f"{shown} is not a regular file (a link); remove it") from None
        raise _unreadable(err, shown) from None
    return _regular(handle, shown)


def open_folder(path: Path, *, below: Path) -> int:
    """A descriptor of the folder ``path``, which lies below ``below``: each component
    after ``below`` opened from the one before without following a link, so the folder
    is the one named there and no link leads elsewhere at any level. ``OSError`` when
    one is a link (``ENOTDIR``), not a folder or missing; ``ValueError`` when ``path``
    is not written below ``below``."""
    parts = _below(path, below)
    if not parts:
        raise ValueError(f"{path} is not below {below}")
    return _walk(os.open(below, _FOLDER), parts, final=_FOLDER | _NOFOLLOW)


def _open(path: Path) -> int:
    return os.open(path, _READ)


def _open_inside(path: Path, inside: Path, name: str) -> int:
    """``path`` opened where it lies in ``inside`` (see :func:`open_regular`)."""
    root = os.open(inside, _FOLDER)
    try:
        parts = _below(path, inside)
        if parts:
            try:
                return _walk(os.dup(root), parts, final=_READ | _NOFOLLOW)
            except OSError as err:
                if err.errno not in _A_LINK:
                    raise
        handle = _open(path)  # a link on the way: where it led is checked on what opened
        if not _opened_in(handle, root):
            os.close(handle)
            raise UsageError(
                f"{name} leads out of {inside} (a link); an artifact's files stay in its folder"
            )
        return handle
    finally:
        os.close(root)


def _below(path: Path, folder: Path) -> tuple[str, ...] | None:
    """The components of ``path`` after ``folder``, where ``path`` is written below it
    and none is ``.`` or ``..``; else ``None``."""
    root, target = os.fspath(folder).rstrip(os.sep), os.fspath(path)
    if not target.startswith(root + os.sep):
        return None
    parts = tuple(target[len(root) + 1 :].split(os.sep))
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def _walk(folder: int, parts: tuple[str, ...], *, final: int) -> int:
    """Open ``parts`` one below the other from the descriptor ``folder`` (which this
    closes), none through a link; the last with ``final``."""
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER | _NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = inner
        return os.open(parts[-1], final, dir_fd=folder)
    finally:
        os.close(folder)


def _opened_in(handle: int, folder: int) -> bool:
    """Whether the open file ``handle`` lies in the open folder ``folder``, by where the
    kernel says each is (Linux's ``/proc/self/fd``; elsewhere never: a link is refused)."""
    try:
        where = os.readlink(f"/proc/self/fd/{handle}")
        root = os.readlink(f"/proc/self/fd/{folder}").rstrip(os.sep)
    except OSError:
        return False
    return where.startswith(root + os.sep)


def _unreadable(err: OSError, name: str) -> UsageError:
    if err.errno == errno.ENXIO:  # a socket
        return UsageError(f"{name} is not a regular file (a FIFO or socket); remove it")
    return UsageError(f"cannot read {name}: {err.strerror}")


def _regular(handle: int, name: str) -> io.FileIO:
    """The open ``handle`` as a file, where it is a regular file; else closed and one
    :class:`UsageError`."""
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
        return read_open(file, limit=limit, shown=name)


def read_open(file: io.FileIO, *, limit: int, shown: str) -> bytes:
    """The bytes of the open regular file ``file`` (from :func:`open_regular`), at most
    ``limit`` of them: a larger one is one :class:`UsageError` naming ``shown``."""
    if os.fstat(file.fileno()).st_size > limit:
        raise UsageError(
            f"{shown} is larger than {limit // MiB} MiB, more than any real artifact holds"
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
            f"{shown} is larger than {limit // MiB} MiB, more than any real artifact holds"
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
