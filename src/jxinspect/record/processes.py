"""A recording of a run of several JAX processes: each process records into its own
sub-folder of the one ``-o`` folder, ``FOLDER/process-K/`` (an ordinary record folder),
K being JAX's process index. Nothing is shared between the processes but the folder.

A process learns its index lazily: at its first lowering of a function of the user's
(or at exit), from JAX's distributed state once ``jax.distributed.initialize`` has run
(:func:`jxinspect.tracer.seam.distributed_process`); nothing is initialized here. A
process of a single-process run records into the folder itself, as always.

The ``jxinspect record`` that started a process learns which folder it recorded into
from a file the process leaves in a folder of the launcher's own
(``JXINSPECT_RECORD_CLAIMS``, on the launcher's machine), and completes that folder's
index when the process ends.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from jxinspect.core import artifacts, files
from jxinspect.core.errors import UsageError
from jxinspect.core.recording import Index
from jxinspect.record import folder as records

PROCESS_FOLDER = "process-{index}"
_PROCESS_FOLDER = re.compile(r"^process-(\d+)$")
ENV_CLAIMS = "JXINSPECT_RECORD_CLAIMS"
"""The launcher's folder where each process it started says which folder it recorded into."""


def process_folders(folder: Path) -> Iterator[tuple[int, Path]]:
    """The process folders of a recording, by process index (read one at a time)."""
    found = []
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            match = _PROCESS_FOLDER.match(path.name)
            if match and artifacts.is_real_folder(path) and records.is_record_folder(path):
                found.append((int(match.group(1)), path))
    yield from sorted(found)


def is_multi_process(folder: Path) -> bool:
    """Whether ``folder`` holds the recording of a run of several JAX processes."""
    return folder.is_dir() and next(process_folders(folder), None) is not None


def may_record_into(folder: Path) -> bool:
    """Whether ``jxinspect record -o FOLDER`` may record into the folder ``folder``: it is
    empty, holds a recording (its index, or process folders holding theirs), or holds
    only what records of the other processes of one run, started at the same moment (a
    shell loop), make there: the recording's index being written, or written, and
    process folders.

    Judged on one listing of the folder, never on several looks at it: the other
    records go on changing it meanwhile (the index's temporary file renamed into place,
    a process folder made), and a look taken before such a step and another after it
    saw a folder that never was (exit 2, "holds no recording", while another process
    made the recording). Every step of theirs leaves a folder this accepts, and what the
    listing names is then looked at only for what stays (a process folder stays a
    folder, the index a file once renamed into place)."""
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return True
    index = folder / records.INDEX
    if not entries or (index in entries and index.is_file()):
        return True
    placed = [
        entry
        for entry in entries
        if _PROCESS_FOLDER.match(entry.name) and artifacts.is_real_folder(entry)
    ]
    if any(records.is_record_folder(entry) for entry in placed):
        return True
    return all(entry in placed or files.is_being_written(entry, index) for entry in entries)


@dataclass(frozen=True)
class OldRecording:
    """What replacing the recording in ``folder`` removes, checked: only what jxinspect
    writes there (a record's folder holding anything else is left as it is)."""

    folder: Path
    records: tuple[str, ...]
    """The folders its index lists, each a plain name (:func:`records.read_index`)."""
    files: tuple[Path, ...]
    """The recorder's files beside them, each a regular file."""

    def remove(self) -> None:
        for name in self.records:
            artifacts.remove_written(self.folder, name, records.RECORD_FILES)
        for path in self.files:
            path.unlink(missing_ok=True)
        records.remove_profile_trace(self.folder)


def old_recording(folder: Path) -> OldRecording | None:
    """The recording in ``folder`` to replace (``None``: there is none), checked before
    anything is removed: an index naming a folder outside, or a file of the recorder's
    that is not a file (a FIFO, a folder, a link), is one :class:`UsageError`."""
    if not records.is_record_folder(folder):
        return None
    names = tuple(entry.folder for entry in records.read_index(folder).functions)
    return OldRecording(folder, names, tuple(records.check_bookkeeping(folder)))


def clear_recording(folder: Path) -> None:
    """Remove the recording in ``folder`` (:func:`old_recording`), all checked first."""
    old = old_recording(folder)
    if old is not None:
        old.remove()


def place(root: Path, index: Index) -> Path:
    """The folder this process records into: ``root``, or in a run of several JAX
    processes ``root/process-K`` (made empty, ``index`` told which process it is).
    Process 0 removes the folders of processes a previous, larger run had (what
    jxinspect wrote in them; one it cannot read is left as it is)."""
    from jxinspect.tracer import seam  # in the recorded run, which has imported JAX

    found = seam.distributed_process()
    if found is None:
        return root
    number, count = found
    folder = root / PROCESS_FOLDER.format(index=number)
    _check_process_folder(folder)
    clear_recording(folder)
    folder.mkdir(parents=True, exist_ok=True)
    index.process, index.processes = number, count
    if number == 0:
        for other, path in list(process_folders(root)):
            if other >= count:
                with contextlib.suppress(UsageError):
                    remove_process_folder(old_recording(path))
    return folder


def old_process_folders(root: Path) -> list[OldRecording]:
    """The recordings of the process folders in ``root``, each checked
    (:func:`old_recording`) before any is removed; a ``process-K`` that is not a
    folder (a link) is one :class:`UsageError`."""
    found = []
    with contextlib.suppress(OSError):
        for path in sorted(root.iterdir()):
            if _PROCESS_FOLDER.match(path.name):
                _check_process_folder(path)
                if (old := old_recording(path)) is not None:
                    found.append(old)
    return found


def _check_process_folder(path: Path) -> None:
    """``path``, a process folder, is a real folder or absent (never a link out)."""
    if os.path.lexists(path) and not artifacts.is_real_folder(path):
        raise UsageError(
            f"{path} is not a folder jxinspect wrote (a link or a file); remove it, or "
            "give another folder"
        )


def remove_process_folder(old: OldRecording | None) -> None:
    """Remove a process folder's recording and its index, then the folder where nothing
    else is left in it (a folder holding anything else is no recording any more)."""
    if old is None:
        return
    old.remove()
    index = old.folder / records.INDEX
    if artifacts.is_regular_file(index):
        index.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        old.folder.rmdir()


def tell_launcher(folder: Path) -> None:
    """Leave the folder this process records into where its launcher reads it."""
    claims = os.environ.get(ENV_CLAIMS)
    if claims:
        with contextlib.suppress(OSError):
            (Path(claims) / str(os.getpid())).write_text(str(folder), encoding="utf-8")


def claimed(claims: Path, root: Path) -> dict[int, Path]:
    """The folders the processes a launcher started recorded into, by process id, as
    ``root`` (the ``-o`` folder as given) names them: ``root`` itself or one of its
    process folders; a claim that names anything else, or is not a small file, is
    left out."""
    found: dict[int, Path] = {}
    home = root.resolve()
    with contextlib.suppress(OSError):
        for path in claims.iterdir():
            with contextlib.suppress(OSError, UsageError, ValueError):
                text = artifacts.read_text(path, limit=artifacts.SMALL_LIMIT, inside=claims)
                where = Path(text)
                if where == home:
                    found[int(path.name)] = root
                elif where.parent == home and _PROCESS_FOLDER.match(where.name):
                    found[int(path.name)] = root / where.name
    return found
