"""Writing files so that a crash never leaves half of one: write a temporary file in the
same folder, flush it to disk, and rename it over the target (atomic on POSIX and
Windows). The baseline, ``-o`` outputs and any cache are written this way.

A write that was killed leaves its temporary file behind (the target stays whole); the
next write of the same file that succeeds removes such leftovers once they are
:data:`STALE_S` old, so a write under way, whose file is seconds old, is never touched.

Only a regular file (or a new path) is replaced by a rename: ``-o`` may name a device,
a FIFO or a terminal (``/dev/stdout``, ``/dev/null``; as root, ``/dev/full``), which is
written in place, never replaced by a file; a symbolic link's target is what gets
written, the link stays."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path

STALE_S = 3600.0
"""How old the temporary file of a write of the same path must be (by its last change)
before a later write removes it as the leftover of one that was killed."""


def write_output(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``: a regular file or a new path is replaced in one
    step (:func:`write_atomically`, through a symbolic link to its target); anything
    else that can be opened for writing (a device, a FIFO) is written in place. Raises
    ``OSError`` (a folder, a socket, a full disk, no permission)."""
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "it is a folder", str(path))
    if mode is None or stat.S_ISREG(mode):
        write_atomically(target, text)
        return
    with open(target, "w", encoding="utf-8", newline="") as file:  # in place: never renamed
        file.write(text)
        file.flush()


def _temporary_name(path: Path) -> tuple[str, str]:
    """The prefix and suffix of the temporary file that :func:`write_atomically` writes
    beside ``path`` before it replaces ``path``."""
    return f".{path.name}.", ".tmp"


def is_being_written(entry: Path, path: Path) -> bool:
    """Whether ``entry`` is the temporary file of a :func:`write_atomically` of ``path``
    under way (or left by one that was killed)."""
    prefix, suffix = _temporary_name(path)
    return (
        entry.parent == path.parent
        and entry.name.startswith(prefix)
        and entry.name.endswith(suffix)
    )


def write_atomically(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step; raises ``OSError``.
    ``durable``: on disk before it replaces ``path`` (``fsync``), not only in one step."""
    folder = path.parent if str(path.parent) else Path(".")
    prefix, suffix = _temporary_name(path)
    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            if durable:
                os.fsync(file.fileno())
        with contextlib.suppress(OSError):  # keep the file's permissions, when it exists
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        if not path.exists():
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _remove_stale(path)


def write_in(folder: int, name: str, text: str, *, mode: int = 0o666) -> None:
    """Replace ``name`` in the open folder ``folder`` with ``text`` (UTF-8) in one step,
    on disk first, as :func:`write_atomically` does, and never through a link: the
    temporary file is made in that folder (``O_EXCL``, ``O_NOFOLLOW``) and renamed over
    ``name`` there. ``mode``: the new file's, less the umask. Raises ``OSError``."""
    temporary = f".{name}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(temporary, flags, mode, dir_fd=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    _remove_stale_in(folder, name)


def _remove_stale(path: Path) -> None:
    """Remove the temporary files that killed writes of ``path`` left (:func:`_remove_stale_in`)."""
    folder = path.parent if str(path.parent) else Path(".")
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
        try:
            _remove_stale_in(handle, path.name)
        finally:
            os.close(handle)


def _remove_stale_in(folder: int, name: str) -> None:
    """Remove from the open ``folder`` the temporary files that killed writes of
    ``name`` left: regular files of this user, named exactly as :func:`write_atomically`
    and :func:`write_in` name them, unchanged for :data:`STALE_S`; anything else is left
    as it is."""
    prefix, suffix = _temporary_name(Path(name))
    pattern = re.compile(re.escape(prefix) + r"[a-z0-9_]{8}" + re.escape(suffix))
    oldest = time.time() - STALE_S
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not pattern.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                found = entry.stat(follow_symlinks=False)
                if (
                    stat.S_ISREG(found.st_mode)
                    and found.st_uid == _uid()
                    and found.st_mtime < oldest
                ):
                    os.unlink(entry.name, dir_fd=folder)


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
