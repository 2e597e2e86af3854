"""``jxinspect record -o FOLDER -- COMMAND``: run the user's command unchanged, with a
hook that records every function of theirs that JAX lowers (:mod:`jxinspect.record.recorder`).

The command inherits the terminal: its stdout, stderr and exit code are its own. The
hook reaches every Python process of the run through ``PYTHONPATH`` (a ``sitecustomize``
that starts recording and then loads the environment's own); the first process that
stages a function of the user's writes the folder, or under ``jax.distributed`` each
process its own sub-folder of it (:mod:`jxinspect.record.processes`; ``--processes N``
is :mod:`jxinspect.record.launch`). No JAX is imported here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from jxinspect.core import codec, interrupts
from jxinspect.core.errors import EXIT_INTERRUPTED, UsageError
from jxinspect.core.recording import Index
from jxinspect.project.config_search import search_config
from jxinspect.record import folder as records
from jxinspect.record import processes

BOOT = Path(__file__).parent / "boot"


def prepare_folder(folder: Path, command: list[str]) -> int:
    """An empty folder for a new recording, or a previous recording replaced (the
    process folders of a run of several processes are each replaced by their process);
    the run's start, as the file system's clock says it (:func:`records.status_changed`
    of the index written now). What jxinspect did not write is never removed, and
    everything is checked before anything is: a malformed recording is exit 2."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"-o {folder}: a file is in the way; give a folder for the records")
    if folder.is_dir():
        if not processes.may_record_into(folder):
            raise UsageError(
                f"-o {folder}: the folder is not empty and holds no recording; "
                "give a new folder (a previous recording is replaced)"
            )
        processes.old_process_folders(folder)  # each process replaces its own: checked here
        processes.clear_recording(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"-o {folder}: cannot make the folder: {err.strerror}") from None
    _write_index(Index(command=command), folder)
    return records.status_changed(folder / records.INDEX)


def _write_index(index: Index, folder: Path) -> None:
    """Write the recording's index; a write that fails (a full disk) is exit 2."""
    try:
        records.write_index(folder, index)
    except OSError as err:
        raise UsageError(f"-o {folder}: cannot write the recording: {err.strerror}") from None


def environment(folder: Path, settings: records.RecordSettings, claims: Path) -> dict[str, str]:
    """The run's environment: the hook first on ``PYTHONPATH``, what it records, and
    where each process says which folder it records into."""
    env = dict(os.environ)
    env[processes.ENV_CLAIMS] = str(claims)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT), *([path] if path else [])])
    env[records.ENV_FOLDER] = str(folder.resolve())
    env[records.ENV_SETTINGS] = codec.line(settings)
    env["JXINSPECT_RECORD_HOME"] = str(Path(__file__).resolve().parent.parent)
    return env


def start(command: list[str], env: dict[str, str], group: bool = False) -> subprocess.Popen[bytes]:
    """Start one process of the run (``group``: in a process group of its own, which
    is stopped whole); a command that cannot run is a one-line error."""
    try:
        return subprocess.Popen(command, env=env, start_new_session=group)
    except FileNotFoundError:
        raise UsageError(f"cannot run {command[0]!r}: no such program") from None
    except PermissionError:
        raise UsageError(f"cannot run {command[0]!r}: not executable") from None


def check_command(command: list[str]) -> None:
    if not command:
        raise UsageError(
            "give the command to record after --, e.g. "
            "`jxinspect record -o runs/before -- python train.py`"
        )


def check_config() -> None:
    """Read the project's configuration before the run starts: a broken one is exit 2
    (the recording itself judges nothing; what reads it judges it under the policy).
    Where none is found there is nothing to check, and the declarations are not loaded."""
    if search_config(Path.cwd())[0] is None:
        return
    from jxinspect.project.config import project_config

    project_config()


def run(
    command: list[str], folder: Path, settings: records.RecordSettings
) -> tuple[int, list[tuple[Path, Index]]]:
    """Run ``command`` recording into ``folder``; its exit status (``128 + N`` for
    signal N, as a shell says; 130 where ``record`` was interrupted and the command
    ended with 0), and each folder its processes recorded into with its final index:
    ``folder``, or under ``jax.distributed`` ``folder/process-K`` of the command's own
    process and of those it started (a launcher of its own), its own first."""
    check_command(command)
    check_config()
    started = prepare_folder(folder, command)
    with tempfile.TemporaryDirectory(prefix="jxinspect-record-") as claims:
        clock = time.monotonic()
        child = start(command, environment(folder, settings, Path(claims)))
        try:
            status, interrupted = wait(child)
        finally:
            if child.poll() is None:  # a signal came before wait() took them: passed on
                end(child)
        seconds = time.monotonic() - clock
        found = processes.claimed(Path(claims), folder)
    if interrupted and status == 0:
        status = EXIT_INTERRUPTED
    own = found.pop(child.pid, None)
    folders = list(dict.fromkeys([*([own] if own else []), *sorted(found.values())])) or [folder]
    ended = [(where, finish(where, status, folder, started, seconds)) for where in folders]
    return (128 - status if status < 0 else status), ended


_FROM_TERMINAL = 0x80
"""``si_code`` SI_KERNEL: the SIGINT the terminal sent (Ctrl-C) to its foreground
process group, which the command is in too."""
STOP_GRACE_S = 5.0
"""How long the command has to end after SIGTERM, where ``record`` stops it itself."""


def wait(child: subprocess.Popen[bytes]) -> tuple[int, bool]:
    """Wait for the command to end; how it ended (as ``Popen`` says it) and whether
    ``record`` was stopped meanwhile (:func:`interrupts.note`: the command is reported
    as not finished, and ``record`` ends with ``128 + N``).

    A Ctrl-C at the terminal reaches the command itself (its process group is
    ``record``'s): it is only noted. A SIGINT or SIGTERM sent to ``record`` alone
    (``kill PID``) is passed on to the command, which ends as it ends on it; ``record``
    then says what was recorded. (One sent to the whole group reaches the command
    twice.)

    The command's end wakes the wait at once: ``SIGCHLD`` is blocked and waited for with
    the stopping signals (blocked, it stays pending until taken; unblocked, its default
    action ignores it), so no poll interval is added to the run's time."""
    interrupted = False
    stopping = set(interrupts.STOPPING_SIGNALS)
    woken = {*stopping, signal.SIGCHLD}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, woken)
    try:
        while (status := child.poll()) is None:
            got = signal.sigtimedwait(woken, POLL_S)
            if got is None or got.si_signo == signal.SIGCHLD:
                continue
            interrupted = True
            interrupts.note(got.si_signo)
            if not (got.si_signo == signal.SIGINT and got.si_code == _FROM_TERMINAL):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, got.si_signo)
        while (got := signal.sigtimedwait(stopping, 0)) is not None:  # none left to raise
            interrupted = True
            interrupts.note(got.si_signo)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return status, interrupted


def end(child: subprocess.Popen[bytes]) -> None:
    """Stop the command (SIGTERM, then SIGKILL after :data:`STOP_GRACE_S`) and wait."""
    with contextlib.suppress(ProcessLookupError):
        child.terminate()
    try:
        child.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


POLL_S = 0.1
"""How often, at most, :func:`wait` looks whether the command ended, besides when a
``SIGCHLD`` says a child did."""


def finish(
    where: Path, status: int, root: Path, started: int, seconds: float | None = None
) -> Index:
    """Complete the index of the folder a process recorded into, once it ended with
    ``status`` after ``seconds``: the records it had not listed yet (those written since
    ``started``, :func:`records.recover_entries`), its other processes, how it ended. A
    process folder replaces the recording's own empty index."""
    index = records.read_index(where)
    records.recover_entries(where, index, started)
    records.collect_other_processes(where, index)
    index.exit_code = 0 if index.stopped_after is not None and status == 0 else status
    if seconds is not None:
        index.run_s = round(seconds, 3)
    _write_index(index, where)
    records.remove_owner(where)
    if where != root:
        drop_empty_index(root)
    return index


def drop_empty_index(root: Path) -> None:
    """Remove the index ``jxinspect record`` wrote in the folder before the run, where no
    process recorded into it: the folder holds process folders."""
    with contextlib.suppress(UsageError, OSError):
        if not records.read_index(root).functions:
            (root / records.INDEX).unlink()
