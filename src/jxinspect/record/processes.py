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
import shutil
from collections.abc import Iterator
from pathlib import Path

from jxinspect.core import files
from jxinspect.core.recording import Index
from jxinspect.record import folder as records
from jxinspect.tracer import seam

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
            if match and records.is_record_folder(path):
                found.append((int(match.group(1)), path))
    yield from sorted(found)


def is_multi_process(folder: Path) -> bool:
    """Whether ``folder`` holds the recording of a run of several JAX processes."""
    return folder.is_dir() and next(process_folders(folder), None) is not None


def being_started(folder: Path) -> bool:
    """Whether ``folder`` holds only what a ``jxinspect record -o FOLDER`` starting at the
    same moment makes (each process of a run of several started by a record of its own,
    from a shell loop): the recording's index being written, process folders."""
    entries = list(folder.iterdir())
    return bool(entries) and all(
        files.is_being_written(entry, folder / records.INDEX)
        or (entry.is_dir() and _PROCESS_FOLDER.match(entry.name) is not None)
        for entry in entries
    )


def clear_recording(folder: Path) -> Index | None:
    """Remove the records of the recording in ``folder`` (its index says which) and
    what the recorder left beside them; the old index, or ``None`` where there was none."""
    if not records.is_record_folder(folder):
        return None
    old = records.read_index(folder)
    for entry in old.functions:
        shutil.rmtree(folder / entry.folder, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        (folder / records.OWNER).unlink()
    stale = folder / records.COMPILES
    if stale.is_file() and not stale.is_symlink():  # only a file of ours is removed
        stale.unlink()
    records.collect_other_processes(folder, old)  # a previous run's, now stale
    return old


def place(root: Path, index: Index) -> Path:
    """The folder this process records into: ``root``, or in a run of several JAX
    processes ``root/process-K`` (made empty, ``index`` told which process it is).
    Process 0 removes the folders of processes a previous, larger run had."""
    found = seam.distributed_process()
    if found is None:
        return root
    number, count = found
    folder = root / PROCESS_FOLDER.format(index=number)
    clear_recording(folder)
    folder.mkdir(parents=True, exist_ok=True)
    index.process, index.processes = number, count
    if number == 0:
        for other, path in list(process_folders(root)):
            if other >= count:
                shutil.rmtree(path, ignore_errors=True)
    return folder


def tell_launcher(folder: Path) -> None:
    """Leave the folder this process records into where its launcher reads it."""
    claims = os.environ.get(ENV_CLAIMS)
    if claims:
        with contextlib.suppress(OSError):
            (Path(claims) / str(os.getpid())).write_text(str(folder), encoding="utf-8")


def claimed(claims: Path, root: Path) -> dict[int, Path]:
    """The folders the processes a launcher started recorded into, by process id, as
    ``root`` (the ``-o`` folder as given) names them."""
    found: dict[int, Path] = {}
    with contextlib.suppress(OSError):
        for path in claims.iterdir():
            with contextlib.suppress(OSError, ValueError):
                where = Path(path.read_text(encoding="utf-8"))
                found[int(path.name)] = root / where.name if where != root.resolve() else root
    return found
