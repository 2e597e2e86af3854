"""``jxinspect record -o FOLDER -- COMMAND``: run the user's command unchanged, with a
hook that records every function of theirs that JAX lowers (:mod:`jxinspect.record.recorder`).

The command inherits the terminal: its stdout, stderr and exit code are its own. The
hook reaches every Python process of the run through ``PYTHONPATH`` (a ``sitecustomize``
that starts recording and then loads the environment's own); the first process that
stages a function of the user's writes the folder. No JAX is imported here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

from jxinspect.core import codec
from jxinspect.core.errors import UsageError
from jxinspect.core.recording import Index
from jxinspect.project.config import project_config
from jxinspect.record import folder as records

BOOT = Path(__file__).parent / "boot"


def prepare_folder(folder: Path, command: list[str]) -> None:
    """An empty folder for a new recording, or a previous recording replaced."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"-o {folder}: a file is in the way; give a folder for the records")
    if folder.is_dir() and any(folder.iterdir()):
        if not records.is_record_folder(folder):
            raise UsageError(
                f"-o {folder}: the folder is not empty and holds no recording; "
                "give a new folder (a previous recording is replaced)"
            )
        old = records.read_index(folder)
        for entry in old.functions:
            shutil.rmtree(folder / entry.folder, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            (folder / records.OWNER).unlink()
        stale = folder / records.COMPILES
        if stale.is_file() and not stale.is_symlink():  # only a file of ours is removed
            stale.unlink()
        records.collect_other_processes(folder, old)  # a previous run's, now stale
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"-o {folder}: cannot make the folder: {err.strerror}") from None
    _write_index(Index(command=command), folder)


def _write_index(index: Index, folder: Path) -> None:
    """Write the recording's index; a write that fails (a full disk) is exit 2."""
    try:
        records.write_index(folder, index)
    except OSError as err:
        raise UsageError(f"-o {folder}: cannot write the recording: {err.strerror}") from None


def environment(folder: Path, settings: records.RecordSettings) -> dict[str, str]:
    """The run's environment: the hook first on ``PYTHONPATH``, and what it records."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT), *([path] if path else [])])
    env[records.ENV_FOLDER] = str(folder.resolve())
    env[records.ENV_SETTINGS] = codec.line(settings)
    env["JXINSPECT_RECORD_HOME"] = str(Path(__file__).resolve().parent.parent)
    return env


def run(command: list[str], folder: Path, settings: records.RecordSettings) -> tuple[int, Index]:
    """Run ``command`` recording into ``folder``; its exit status (``128 + N`` for
    signal N, as a shell says) and the final index."""
    if not command:
        raise UsageError(
            "give the command to record after --, e.g. "
            "`jxinspect record -o runs/before -- python train.py`"
        )
    config = project_config().path  # read here: a broken configuration is exit 2
    settings = replace(settings, config=str(config.resolve()) if config else None)
    prepare_folder(folder, command)
    try:
        child = subprocess.Popen(command, env=environment(folder, settings))
    except FileNotFoundError:
        raise UsageError(f"cannot run {command[0]!r}: no such program") from None
    except PermissionError:
        raise UsageError(f"cannot run {command[0]!r}: not executable") from None
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run gets Ctrl-C itself
    try:
        status = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    index = records.read_index(folder)
    records.recover_entries(folder, index)
    records.collect_other_processes(folder, index)
    index.exit_code = 0 if index.stopped_after is not None and status == 0 else status
    _write_index(index, folder)
    with contextlib.suppress(FileNotFoundError):
        (folder / records.OWNER).unlink()
    return (128 - status if status < 0 else status), index
