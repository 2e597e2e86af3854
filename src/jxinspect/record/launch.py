"""``jxinspect record --processes N -- COMMAND``: a run of N JAX processes on this
machine, each recorded into its own folder (:mod:`jxinspect.record.processes`).

Each process is the command, unchanged, with ``JAX_COORDINATOR_ADDRESS`` (127.0.0.1
and a free port; JAX reads it itself), ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID``
set: the program passes the last two to ``jax.distributed.initialize``. Each process
runs in a process group of its own. When one fails, or after ``--timeout``, the others'
groups are stopped (SIGTERM, then SIGKILL), as on Ctrl-C: no process is left behind
(JAX's preemption service, on by default under ``jax.distributed``, takes SIGTERM as a
preemption notice and goes on: the SIGKILL ends it).
The exit status is the worst of the processes that ended by themselves (the one that
failed first: the others were stopped because of it), 124 where the time ran out, 130
where the launcher was interrupted (each process's folder is completed all the same).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jxinspect.core import interrupts
from jxinspect.core.errors import EXIT_INTERRUPTED
from jxinspect.core.recording import Index
from jxinspect.record import folder as records
from jxinspect.record import processes, recording

STOP_GRACE_S = 5.0
"""How long a stopped process has to end after SIGTERM before its group gets SIGKILL."""
TIMED_OUT = 124
"""The exit status of a run stopped by ``--timeout`` (as ``timeout`` says it)."""
POLL_S = 0.05


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_environment(base: dict[str, str], port: int, count: int, number: int) -> dict[str, str]:
    """The environment of process ``number`` of ``count``."""
    return {
        **base,
        "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}",
        "JAX_NUM_PROCESSES": str(count),
        "JAX_PROCESS_ID": str(number),
    }


@dataclass
class Launched:
    """One process of the run and how it ended."""

    number: int
    process: subprocess.Popen[bytes]
    code: int | None = None
    """How it ended, as ``Popen`` says it (``-N`` for signal N); ``None``: running."""
    stopped: bool = False
    """Stopped by the launcher (another process failed, the time ran out, Ctrl-C)."""

    @property
    def status(self) -> int | None:
        """Its exit status as a shell says it (``128 + N`` for signal N)."""
        return None if self.code is None else (128 - self.code if self.code < 0 else self.code)


class _Interrupted(Exception):
    """Ctrl-C or SIGTERM reached the launcher."""


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`_Interrupted` while the processes run."""

    def interrupt(signum: int, frame: object) -> None:
        interrupts.note(signum)  # record ends with 128 + N
        raise _Interrupted

    saved = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def _poll(launched: list[Launched]) -> bool:
    """Note the processes that ended; whether one of them failed."""
    failed = False
    for each in launched:
        if each.code is None and (code := each.process.poll()) is not None:
            each.code = code
            failed = failed or (code != 0 and not each.stopped)
    return failed


def stop(launched: list[Launched]) -> None:
    """Stop every process group still running: SIGTERM, then SIGKILL after
    :data:`STOP_GRACE_S`; and what is left of the groups of those that ended."""
    for each in launched:
        if each.status is None:
            each.stopped = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(each.process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while any(e.status is None for e in launched) and time.monotonic() < deadline:
        _poll(launched)
        time.sleep(POLL_S)
    for each in launched:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(each.process.pid, signal.SIGKILL)
        if each.code is None:
            each.code = each.process.wait()


Ended = Literal["ran", "timed out", "interrupted"]
"""How the run of the processes ended: each by itself (or stopped because one failed),
stopped by ``--timeout``, or by Ctrl-C or SIGTERM reaching the launcher."""


def supervise(launched: list[Launched], timeout: float | None) -> Ended:
    """Wait for every process; stop the rest when one fails, on Ctrl-C, or once
    ``timeout`` seconds have passed. How the run ended."""
    deadline = None if timeout is None else time.monotonic() + timeout
    ended: Ended = "ran"
    try:
        if interrupts.stopped_by() is not None:  # while the processes were started
            raise _Interrupted
        with _interruptible():
            while any(e.status is None for e in launched):
                if _poll(launched):
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    ended = "timed out"
                    break
                time.sleep(POLL_S)
    except _Interrupted:
        ended = "interrupted"
    stop(launched)
    return ended


def worst(launched: list[Launched], ended: Ended) -> int:
    """The run's exit status: the worst of the processes that ended by themselves; 124
    where the time ran out, 130 where the launcher was interrupted."""
    own = [e.status or 0 for e in launched if not e.stopped]
    failed = [status for status in own if status]
    if failed:
        return max(failed)
    return {"ran": 0, "timed out": TIMED_OUT, "interrupted": EXIT_INTERRUPTED}[ended]


def run_processes(
    command: list[str],
    folder: Path,
    settings: records.RecordSettings,
    count: int,
    timeout: float | None,
) -> tuple[int, list[tuple[Path, Index]]]:
    """Run ``count`` processes of ``command`` recording into ``folder``; the run's exit
    status, and each process folder with its final index."""
    recording.check_command(command)
    recording.check_config()
    started = recording.prepare_folder(folder, command)  # checks the process folders too
    for old in processes.old_process_folders(folder):  # all of them are started here
        processes.remove_process_folder(old)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="jxinspect-record-") as claims:
        base = recording.environment(folder, settings, Path(claims))
        launched: list[Launched] = []
        try:
            for number in range(count):
                env = process_environment(base, port, count, number)
                launched.append(Launched(number, recording.start(command, env, group=True)))
        finally:
            ended = supervise(launched, timeout)
        folders = processes.claimed(Path(claims), folder)
    finished = [_finished(e, folders, folder, command, count, started) for e in launched]
    return worst(launched, ended), finished


def _finished(
    each: Launched,
    folders: dict[int, Path],
    root: Path,
    command: list[str],
    count: int,
    started: int,
) -> tuple[Path, Index]:
    """A process's folder and its completed index; a process that recorded nothing (it
    ended before its first lowering) gets a folder saying how it ended."""
    where = folders.get(each.process.pid)
    if where is None:
        where = root / processes.PROCESS_FOLDER.format(index=each.number)
        where.mkdir(parents=True, exist_ok=True)
        records.write_index(where, Index(command=command, process=each.number, processes=count))
    return where, recording.finish(where, each.code or 0, root, started)
