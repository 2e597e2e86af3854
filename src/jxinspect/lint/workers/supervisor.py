"""Stage ``lint``'s targets in worker processes whose failures cannot take the run down.

The supervisor (the process that judges the run) never imports the user's code. It
starts up to ``count`` workers, forked from the JAX it imported once (spawned, each
importing JAX, where forking is not safe); each stages one target at a time, and is
reused while it stays healthy. A worker that exits (``os._exit``), dies on a signal (a
crash in XLA, an abort), or runs past the per-target timeout is killed and replaced:
the target it was staging gets a result that says what happened, and the other targets
go on. ``SystemExit``, ``KeyboardInterrupt``, recursion and memory errors raised by user
code are caught inside the worker and are that target's failure.

A worker keeps the modules it imported while it stages targets of one module; before a
target of another module, the user's own modules (everything outside the installed
packages and the standard library) are forgotten, so sibling folders that each hold a
``models.py`` never see each other's. Targets of one module go to the worker that already
imported it.

Ctrl-C or SIGTERM (in the supervisor only: workers leave SIGINT to it) kills the workers
and ends the run with what finished; a worker of one run also ends when the supervisor
does, however it ends (Linux's parent-death signal).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jxinspect.core.interrupts import signal_named
from jxinspect.core.vocabulary import INTERNAL, TIMEOUT, USER_CODE
from jxinspect.lint.workers.protocol import NOT_STAGED, Job, Outcome, received
from jxinspect.lint.workers.worker import load_jax, worker_main

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from jxinspect.lint.workers.kept import Kept, KeptProcess

DEFAULT_TIMEOUT_S = 300.0
"""Per target, unless ``--timeout`` or the ``timeout`` config key says otherwise."""
MAX_DEFAULT_JOBS = 8
"""Each worker holds its own JAX (several hundred MB): more only when asked."""


def default_jobs() -> int:
    """Workers when ``--jobs`` is not given: the cores this process may use, at most
    :data:`MAX_DEFAULT_JOBS` (never more than there are targets to stage)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT_JOBS))


@dataclass(frozen=True)
class KeepWorkers:
    """Keep the workers for later runs (``--keep-workers``): where they are found, and
    how long they wait for the next run."""

    folder: Path
    idle: float


@dataclass
class _Worker:
    process: BaseProcess | KeptProcess
    conn: Connection
    devices: int | None = None
    """The devices it simulates: fixed by its first job."""
    assigned: bool = False
    job: Job | None = None
    started: float = 0.0
    group: str | None = None
    ready: bool = False
    kept: Kept | None = None
    """A kept worker (``--keep-workers``): it lives on after this run."""


def _how_it_ended(process: BaseProcess | KeptProcess) -> str:
    """``signal 11 (SIGSEGV)``, or the exit code of a process that exited by itself."""
    code = process.exitcode
    if code is not None and code < 0:
        hint = "; out of memory?" if -code == signal.SIGKILL else ""
        return f"{signal_named(-code)}{hint}"
    if code is None:  # a kept worker that an earlier run started
        return "a kept worker; its exit status is not known here"
    return f"exit code {code}: os._exit, or a crash in native code"


def _fork_with_jax() -> bool:
    """Whether workers are forked from this process, with JAX imported here once (so a
    worker starts at once and shares JAX's pages with the others): on Linux, while this
    process runs no other thread and JAX's backend has not started here. Importing JAX
    starts no thread of its own (NumPy's BLAS pool is fork-safe); its backend does.
    Otherwise they are spawned, and each imports JAX."""
    import threading

    if sys.platform != "linux" or threading.active_count() != 1:
        return False
    if "jax" not in sys.modules:
        return True
    from jxinspect.tracer import seam

    return not seam.backend_started()


class Supervisor:
    """Hands jobs to workers and turns every way a worker can end into an outcome."""

    def __init__(
        self,
        count: int,
        root: Path,
        timeout: float | None,
        show_traceback: bool,
        keep: KeepWorkers | None = None,
    ) -> None:
        self.count, self.root, self.keep = max(1, count), root, keep
        self.timeout, self.show_traceback = timeout, show_traceback
        self.devices: int | None = None
        self.planned = False
        """Whether :meth:`run` set ``devices`` (a prestarted worker came before)."""
        self.done: Callable[[int], None] = lambda _: None
        self.workers: list[_Worker] = []
        self.outcomes: dict[str, Outcome] = {}
        self.pending: list[Job] = []
        self.retried: set[str] = set()
        self.failed_starts = 0

    # ---- workers ----

    def prestart(self) -> None:
        """Start one worker now, so that it imports JAX while the run is planned; where
        workers are forked from a JAX this process loads (:func:`_fork_with_jax`), the
        first one that a job needs starts instead."""
        if not self.workers and (self.keep is not None or not _fork_with_jax()):
            self._start()

    def _start(self) -> _Worker:
        if self.keep is not None:
            return self._start_kept(self.keep)
        import multiprocessing

        fork = _fork_with_jax()
        if fork and "jax" not in sys.modules:
            load_jax()  # once, here: every worker forked after it starts with JAX
        context: Any = multiprocessing.get_context("fork" if fork else "spawn")
        parent, child = context.Pipe()
        process = context.Process(
            target=worker_main,
            args=(child, str(self.root), self.show_traceback, os.getpid()),
            daemon=True,
            name="jxinspect-worker",
        )
        process.start()
        child.close()
        worker = _Worker(process, parent)
        self.workers.append(worker)
        return worker

    def _start_kept(self, keep: KeepWorkers) -> _Worker:
        """An idle kept worker of an earlier run, or a new one that stays after this."""
        from jxinspect.lint.workers import kept as kept_workers

        # before the run is planned (prestart) any idle worker will do; after, one whose
        # backend simulates the run's devices (or has not started)
        wanted = self.devices if self.planned else kept_workers.ANY_DEVICES
        kept = kept_workers.adopt(keep.folder, self.root, wanted) or kept_workers.spawn(
            keep.folder, self.root, keep.idle, self.show_traceback
        )
        worker = _Worker(kept.process, kept.conn, kept.devices, kept.simulated, kept=kept)
        self.workers.append(worker)
        return worker

    def _stop(self, worker: _Worker, kill: bool, wait: bool = True) -> None:
        if worker.kept is not None:
            if kill:  # it is staging: it does not go back to the pool
                worker.process.kill()
            else:
                self._park(worker, wait)
            worker.conn.close()
            worker.kept.release()
            self.workers.remove(worker)
            return
        if kill and worker.process.is_alive():
            worker.process.kill()
        else:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        worker.process.join(5 if not kill else None)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.conn.close()
        self.workers.remove(worker)

    def _park(self, worker: _Worker, wait: bool) -> None:
        """End this run's session with a kept worker; with ``wait``, return once it is
        back in the pool (so a run right after this one finds it), unless it is still
        importing JAX (started for this run and never used)."""
        assert worker.kept is not None
        with contextlib.suppress(OSError, EOFError):
            worker.conn.send(None)
            if wait and (worker.ready or worker.kept.claim is not None):
                while worker.conn.poll(5) and worker.conn.recv() != "parked":
                    pass

    def _next_job(self, worker: _Worker) -> Job | None:
        for index, job in enumerate(self.pending):  # the module it already imported first
            if job.group == worker.group:
                return self.pending.pop(index)
        return self.pending.pop(0) if self.pending else None

    def _assign(self) -> None:
        idle = [w for w in self.workers if w.job is None]
        for worker in idle:  # its backend simulates other devices than the run needs
            if worker.assigned and (self.devices or 0) != (worker.devices or 0):
                self._stop(worker, kill=False)
        while self.pending:
            idle = [w for w in self.workers if w.job is None]
            if not idle:
                if len(self.workers) >= min(self.count, len(self.pending) + self._busy()):
                    return
                idle = [self._start()]
            worker = idle[0]
            job = self._next_job(worker)
            assert job is not None
            if not worker.assigned:
                worker.devices, worker.assigned = self.devices, True
            worker.job, worker.started, worker.group = job, time.monotonic(), job.group
            worker.conn.send((job, worker.devices))

    def _busy(self) -> int:
        return sum(w.job is not None for w in self.workers)

    # ---- results ----

    def _finish(self, worker: _Worker, outcome: Outcome) -> None:
        job = worker.job
        assert job is not None
        worker.job = None
        outcome = replace(outcome, seconds=round(time.monotonic() - worker.started, 3))
        if outcome.needs_devices and job.name not in self.retried:
            # a declaration read at import asks for more devices than the workers have
            self.retried.add(job.name)
            self.devices = max(self.devices or 0, outcome.needs_devices)
            self.pending.insert(0, job)
            return
        self.outcomes[job.name] = outcome
        self.done(1)

    def _receive(self, worker: _Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._died(worker)
            return
        if message == "ready":
            worker.ready, self.failed_starts = True, 0
            return
        assert worker.job is not None
        self._finish(worker, received(message, worker.job.name))

    def _died(self, worker: _Worker) -> None:
        job = worker.job
        if job is not None and not worker.ready and worker.kept and worker.kept.claim:
            # an earlier run's kept worker that ended before it took this run's first job
            worker.job = None
            self.pending.insert(0, job)
            self._stop(worker, kill=True)
            return
        worker.process.join()
        ended = _how_it_ended(worker.process)
        if job is not None and not worker.ready:
            self.failed_starts += 1
            self._finish(worker, Outcome(None, f"a worker could not start ({ended})", INTERNAL))
        elif job is not None:
            message = f"the process staging it ended abruptly ({ended})"
            self._finish(worker, Outcome(None, message, USER_CODE))
        self._stop(worker, kill=True)
        if self.failed_starts >= 2:  # workers cannot start at all: say so for every target
            while self.pending:
                job = self.pending.pop(0)
                self.outcomes[job.name] = Outcome(
                    None, "not staged: worker processes could not start", INTERNAL
                )
                self.done(1)

    def _timed_out(self, worker: _Worker) -> None:
        assert self.timeout is not None
        self._finish(
            worker,
            Outcome(
                None,
                f"timed out after {self.timeout:g} s (raise the limit with --timeout "
                "or the `timeout` configuration key)",
                TIMEOUT,
            ),
        )
        self._stop(worker, kill=True)

    def run(
        self,
        jobs: list[Job],
        devices: int | None,
        done: Callable[[int], None],
        meanwhile: Callable[[], list[Job]] | None = None,
    ) -> dict[str, Outcome]:
        """Stage every job in workers that simulate ``devices`` CPU devices, calling
        ``done`` as they finish; on Ctrl-C, stop the workers and mark what did not finish.
        ``meanwhile`` runs here once the first jobs are handed out, and returns more jobs
        to stage."""
        self.pending, self.devices, self.done = list(jobs), devices, done
        self.planned = True
        try:
            if meanwhile is not None:
                self._assign()
                self.pending += meanwhile()
            while self.pending or self._busy():
                self._assign()
                self._wait()
        except KeyboardInterrupt:
            for job in [*(w.job for w in self.workers if w.job is not None), *self.pending]:
                self.outcomes[job.name] = NOT_STAGED
            self.pending = []
            raise Interrupted(self.outcomes) from None
        finally:
            self.close()
        return self.outcomes

    def close(self) -> None:
        """Stop every worker: a busy one, or one started early and never used, is killed
        (a kept one that is not busy waits for the next run; one this run did not use
        first starts JAX's backend for the run's devices, so that the next run's first
        target does not pay for it)."""
        for worker in list(self.workers):
            warm = worker.kept is not None and not worker.assigned and worker.job is None
            if warm:  # not waited for: it warms up after this run
                with contextlib.suppress(OSError):
                    worker.conn.send((None, self.devices))
            unused = not worker.assigned and worker.kept is None
            self._stop(worker, kill=worker.job is not None or unused, wait=not warm)

    def _wait(self) -> None:
        busy = [w for w in self.workers if w.job is not None]
        if not busy:
            return
        timeout = None
        if self.timeout is not None:
            now = time.monotonic()
            timeout = max(0.0, min(w.started + self.timeout for w in busy) - now)
        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = wait(handles, timeout)
        for worker in busy:
            if worker.conn in ready or worker.conn.poll():
                self._receive(worker)
            elif worker.process.sentinel in ready:
                self._died(worker)
        if self.timeout is not None:
            now = time.monotonic()
            for worker in [w for w in self.workers if w.job is not None]:
                if now - worker.started >= self.timeout:
                    self._timed_out(worker)


class Interrupted(Exception):
    """Ctrl-C: the outcomes so far, with every unfinished target marked."""

    def __init__(self, outcomes: dict[str, Outcome]) -> None:
        super().__init__("interrupted")
        self.outcomes = outcomes
