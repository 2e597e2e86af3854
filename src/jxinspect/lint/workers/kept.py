"""Workers kept between ``lint`` runs (``--keep-workers``), so an edit loop pays for
JAX's import and the first program's warm-up once, not on every run.

A kept worker is a process of its own session (:func:`main`, started by :func:`spawn`)
that stages one run's targets at a time, exactly as a worker of one run does, then waits
for the next run on a Unix socket until it has been idle for ``idle`` seconds. Between
runs, and between modules, it forgets the user's own modules, resets ``sys.path`` and
puts back JAX's configuration as it was before any target, so a run served by a kept
worker reports what a fresh one would.

Kept workers are found in ``.jxinspect_cache/workers/ENV/``, where ``ENV`` digests
everything a worker's state depends on besides the user's code: the Python executable
and version, the import path, the installed distributions, jxinspect's own files and the
``JAX_*``/``XLA_*`` environment. A run uses only workers of its own ``ENV``. Each
worker has two files there, ``PID.lock`` (a run holds an exclusive ``flock`` on it while
it uses the worker) and ``PID.json`` (its record: its pid, socket address and the devices
it simulates). Removing the folder (``rm -r .jxinspect_cache``) stops them.

The folder is opened from the project root one component at a time, none a link
(:func:`~jxinspect.core.artifacts.open_folder`), and every file in it is opened, made
and removed from that open folder: nothing is read, written or removed through a link at
any level. A run removes only a worker's two files, and only when its record names
that worker and the worker has exited; anything else there, or that cannot be read, is
left as it is.

The socket is in Linux's abstract namespace; a worker serves only its own user (the
peer's uid is checked). Each run hands it its stderr (``SCM_RIGHTS``), so what user code
prints reaches the run that staged it, and its environment, working folder and
``sys.argv``, which user code may read at import as it would in a worker of that run.
Linux only.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any

from jxinspect.core import codec
from jxinspect.core.artifacts import SMALL_LIMIT, open_entry, open_folder
from jxinspect.core.errors import UsageError
from jxinspect.core.files import write_in

DEFAULT_IDLE_S = 600.0
"""How long a kept worker waits for the next run before it exits."""
_TICK_S = 1.0
"""How often an idle worker checks that its folder still exists (a stat a second)."""
_HELLO = b"jxinspect-worker/1"
_LOCK = re.compile(r"[1-9][0-9]*\.lock")
"""A worker's ``PID.lock``: what a run looks at in the folder, nothing else."""
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def _lock(file: IO[bytes]) -> None:
    """Lock ``file`` for this process, or raise ``OSError`` when another holds it."""
    import fcntl  # here: this module is imported off Linux too, where available() is False

    fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)


def available() -> bool:
    """Whether this platform can keep workers (Linux: abstract sockets and pidfds)."""
    return (
        sys.platform == "linux"
        and hasattr(os, "pidfd_open")
        and hasattr(signal, "pidfd_send_signal")
        and hasattr(socket, "send_fds")
    )


def environment_key(context: dict[str, Any]) -> str:
    """What a kept worker's state depends on besides the user's code: ``context`` (the
    cache's versions, installed distributions and environment), the interpreter, the
    import path and jxinspect's own files (an edited checkout is another environment)."""
    package = Path(__file__).parent
    files = []
    for folder, _, names in os.walk(package):
        for name in names:
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                files.append(f"{folder}/{name}:{stat.st_mtime_ns}:{stat.st_size}")
    material = {
        **context,
        "executable": sys.executable,
        "path": sys.path,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
        "jxinspect_files": sorted(files),
    }
    text = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---- the run's side ---------------------------------------------------------------------


class KeptProcess:
    """A kept worker seen from a run: the parts of ``multiprocessing.Process`` the
    supervisor uses, over a pidfd (the worker may be another run's child)."""

    def __init__(self, pid: int, popen: subprocess.Popen[bytes] | None = None) -> None:
        self.pid, self._popen = pid, popen
        self.sentinel = os.pidfd_open(pid)

    @property
    def exitcode(self) -> int | None:
        """The exit status when this run started the worker, else ``None`` (unknown)."""
        return self._popen.poll() if self._popen is not None else None

    def is_alive(self) -> bool:
        return not select.select([self.sentinel], [], [], 0)[0]

    def kill(self) -> None:
        with contextlib.suppress(OSError):  # by pidfd: never another process with its pid
            signal.pidfd_send_signal(self.sentinel, signal.SIGKILL)

    def join(self, timeout: float | None = None) -> None:
        select.select([self.sentinel], [], [], timeout)
        if self._popen is not None and not self.is_alive():
            self._popen.wait()

    def release(self) -> None:
        """Stop watching the worker (it lives on for the next run)."""
        with contextlib.suppress(OSError):
            os.close(self.sentinel)


@dataclass(frozen=True)
class WorkerRecord:
    """What a kept worker writes beside its lock (``PID.json``): who it is, where it
    listens, and the devices its backend has (``simulated``: CPU devices it made)."""

    pid: int
    address: str
    devices: int | None = None
    simulated: bool = False


@dataclass
class Kept:
    """A kept worker this run holds: its process, connection and claim."""

    process: KeptProcess
    conn: Connection
    devices: int | None = None
    simulated: bool = False
    """Whether its backend started (with ``devices`` CPU devices)."""
    claim: IO[bytes] | None = None
    """The locked ``PID.lock`` of a worker another run started (``None``: ours)."""

    def release(self) -> None:
        self.process.release()
        if self.claim is not None:
            self.claim.close()  # and so the lock


def _hello(sock: socket.socket) -> Connection:
    """Hand the worker this run's stderr, environment, working folder and arguments
    (what user code may read at import), then talk over ``sock``."""
    sys.stderr.flush()
    socket.send_fds(sock, [_HELLO], [2])
    conn = Connection(sock.detach())
    conn.send((dict(os.environ), os.getcwd(), list(sys.argv)))
    return conn


_BOOT = (
    "import sys; del sys.path[0]; import json; sys.path[:] = json.loads(sys.argv[1]); "
    "from jxinspect.lint.workers.kept import main; main(sys.argv[2:])"
)
"""A kept worker's start: with this run's import path (``python -c`` would put the
working folder first, where a project's ``json.py`` would shadow the standard library's)."""


def spawn(folder: Path, root: Path, idle: float, show_traceback: bool) -> Kept:
    """Start a kept worker for this run (and later ones) in ``folder``."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"jxinspect-worker-{uuid.uuid4().hex}"  # in the abstract namespace: \0 first
    argv = [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(theirs.fileno()), name,
            str(folder), str(root), repr(idle), "1" if show_traceback else "0"]  # fmt: skip
    with theirs:
        popen = subprocess.Popen(
            argv,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C at the terminal is the supervisor's to handle
        )
    return Kept(KeptProcess(popen.pid, popen), _hello(ours))


ANY_DEVICES = -1
"""For :func:`adopt`: a worker whatever devices its backend simulates."""


def adopt(folder: Path, root: Path, devices: int | None = ANY_DEVICES) -> Kept | None:
    """Claim an idle kept worker of this environment whose backend simulates ``devices``
    (or has not started), or ``None``; ``folder`` lies below the project ``root``, no
    link on the way. The two files of a worker that has exited are removed."""
    try:
        handle = open_folder(folder, below=root)
    except (OSError, ValueError):
        return None  # none yet, or a link: nothing is read or removed through it
    try:
        for name in sorted(n for n in os.listdir(handle) if _LOCK.fullmatch(n)):
            try:  # held while the run uses the worker; a FIFO there is never waited on
                claim: IO[bytes] = open_entry(handle, name, shown=name)
            except (OSError, UsageError):
                continue
            try:
                _lock(claim)
            except OSError:
                claim.close()  # another run is using it
                continue
            kept = _connect(handle, name, claim, devices)
            if kept is not None:
                return kept
            claim.close()
        return None
    finally:
        os.close(handle)


def _connect(folder: int, lock: str, claim: IO[bytes], wanted: int | None) -> Kept | None:
    """The worker whose ``PID.lock`` (``lock``, in the open ``folder``) this run holds;
    ``None`` when it is not to be used (the caller lets go of the lock)."""
    pid = int(lock.removesuffix(".lock"))
    entry = f"{pid}.json"
    try:
        with open_entry(folder, entry, shown=entry) as file:
            record = codec.decode(file.read(SMALL_LIMIT), WorkerRecord, source=entry)
        address, devices, simulated = record.address, record.devices, record.simulated
        if record.pid != pid or "\0" in address[1:]:
            return None  # not a record of this worker: left as it is
    except (OSError, UsageError, ValueError):
        return None  # unreadable, a FIFO, a link: not ours to judge, left as it is
    if simulated and wanted != ANY_DEVICES and devices != wanted:
        return None  # its backend simulates other devices: for another run
    try:
        process = KeptProcess(pid)
    except ProcessLookupError:
        process = None
    except OSError:
        return None
    if process is None or not process.is_alive():
        if process is not None:
            process.release()
        for gone in (entry, lock):  # the record names a worker that exited: ours to remove
            with contextlib.suppress(OSError):
                os.unlink(gone, dir_fd=folder)
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
        if _peer(sock) != (pid, os.getuid()):  # not the worker the record names
            raise OSError("another process")
        conn = _hello(sock)
    except OSError:
        sock.close()
        process.release()
        return None
    return Kept(process, conn, devices, simulated, claim)


# ---- the worker's side ------------------------------------------------------------------


def _session_socket(sock: socket.socket) -> Connection | None:
    """Take on a run's stderr, environment, working folder and arguments, as a worker
    forked by the run would have them; ``None`` when it is not one of ours."""
    try:
        message, fds, _, _ = socket.recv_fds(sock, len(_HELLO), 1)
    except OSError:
        sock.close()
        return None
    if message != _HELLO or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        sock.close()
        return None
    os.dup2(fds[0], 2)
    os.dup2(fds[0], 1)  # the user's prints never reach the run's payload
    os.close(fds[0])
    conn = Connection(sock.detach())
    try:
        environ, cwd, argv = conn.recv()
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)
    except (EOFError, OSError, ValueError, TypeError):
        conn.close()
        return None
    sys.argv[:] = argv
    return conn


def _peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of ``sock``."""
    credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", credentials)
    return pid, uid


class _Registration:
    """This worker's ``PID.lock`` and ``PID.json`` in the environment's folder, held open
    from the first time they are written (see the module's docstring)."""

    def __init__(self, folder: Path, root: Path, address: str) -> None:
        self.folder, self.root, self.address = folder, root, address
        self.lock = f"{os.getpid()}.lock"
        self.entry = f"{os.getpid()}.json"
        self.handle: int | None = None
        self.written: WorkerRecord | None = None

    def publish(self, devices: int | None, simulated: bool) -> None:
        data = WorkerRecord(os.getpid(), self.address, devices, simulated)
        if data == self.written:
            return
        with contextlib.suppress(OSError, ValueError):
            if self.handle is None:
                self.handle = self._open()
            write_in(self.handle, self.entry, codec.line(data), mode=0o600)
            os.close(os.open(self.lock, os.O_WRONLY | os.O_CREAT | _NOFOLLOW, 0o600,
                             dir_fd=self.handle))  # fmt: skip
            self.written = data

    def _open(self) -> int:
        """The folder, made when missing, opened with no link on the way."""
        parent = open_folder(self.folder.parent, below=self.root)
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.folder.name, 0o700, dir_fd=parent)
        finally:
            os.close(parent)
        return open_folder(self.folder, below=self.root)

    def present(self) -> bool:
        """Whether this worker's lock is still there (removing it, or the folder, stops it)."""
        if self.handle is None:
            return False
        try:
            os.stat(self.lock, dir_fd=self.handle, follow_symlinks=False)
        except OSError:
            return False
        return True

    def withdraw(self) -> bool:
        """Remove the entry unless a run has just claimed this worker."""
        if self.handle is None:
            return True
        try:
            with os.fdopen(os.open(self.lock, os.O_RDONLY | _NOFOLLOW, dir_fd=self.handle),
                           "rb") as claim:  # fmt: skip
                _lock(claim)
                for name in (self.entry, self.lock):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=self.handle)
            with contextlib.suppress(OSError, ValueError):  # the environment's last worker
                parent = open_folder(self.folder.parent, below=self.root)
                try:
                    os.rmdir(self.folder.name, dir_fd=parent)
                finally:
                    os.close(parent)
        except FileNotFoundError:
            return True  # the folder was removed: stop
        except OSError:
            return False
        return True


def _accept(listener: socket.socket, registration: _Registration, idle: float) -> socket.socket:
    """The next run's socket; exits the process once idle for ``idle`` seconds or when
    the folder is removed."""
    since = time.monotonic()
    while True:
        ready, _, _ = select.select([listener], [], [], min(_TICK_S, idle))
        if ready:
            sock, _ = listener.accept()
            if _peer(sock)[1] == os.getuid():  # only this user's runs
                return sock
            sock.close()
            continue
        gone = not registration.present()
        if (gone or time.monotonic() - since >= idle) and registration.withdraw():
            os._exit(0)


def serve(first: socket.socket, address: str, folder: Path, root: Path, idle: float,
          show_traceback: bool) -> None:  # fmt: skip
    """A kept worker: the run that started it first, then each run that claims it."""
    from jxinspect.core import interrupts
    from jxinspect.lint.workers import worker as workers

    interrupts.leave_to_parent()  # the runs it serves stop it while it stages
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen()
    registration = _Registration(folder, root, address)
    state: workers.WorkerState | None = None
    sock: socket.socket | None = first
    while True:
        if sock is None:
            sock = _accept(listener, registration, idle)
        conn = _session_socket(sock)
        sock = None
        if conn is None:
            continue
        if state is None:
            workers.prepare(root)
            state = workers.WorkerState(show_traceback)
        else:
            state.reset()
        with contextlib.suppress(OSError):  # the run may be over: what it sent still counts
            conn.send("ready")
        with contextlib.suppress(OSError):
            state.session(conn)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)  # the run's stderr is its own again
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
        registration.publish(state.devices, state.simulated)
        with contextlib.suppress(OSError):
            conn.send("parked")  # the run may end: the next one finds this worker
        conn.close()
        # while no run waits: drop this run's modules and collect what they leave (a
        # collection over the programs of a whole run costs the next run's first target
        # a third of a second otherwise)
        state.reset()
        gc.collect()


def main(argv: list[str]) -> None:
    fd, name, folder, root, idle, show_traceback = argv
    first = socket.socket(fileno=int(fd))
    serve(first, "\0" + name, Path(folder), Path(root), float(idle), show_traceback == "1")
