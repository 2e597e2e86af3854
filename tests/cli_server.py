"""A warm starting point for the tests' runs of the ``jxinspect`` command and of Python.
``python tests/cli_server.py KIND OWNER ADDRESS`` imports what a run imports (``jax``:
JAX and the whole tool, for ``lower``, ``diff-debug`` and ``lint``, whose workers fork
from it; ``libs``: that and Flax, Equinox and Optax, for targets whose module imports
them and for the ``python`` commands run under ``record`` (``warm_python.py``);
``plain``: the tool without JAX, for the commands whose process never imports it), then
serves every test process of the run (each pytest-xdist worker) on the abstract Unix
socket ``ADDRESS``, until the process ``OWNER`` (the run's first pytest process) ends or
a client asks it to stop. A second server started for a taken address says so and ends.

A client connects, sends one JSON line, ``{"argv": [...], "cwd": ..., "env": {...}}``
(``argv`` is what follows ``python``), and hands over its standard streams as three file
descriptors. A process forked for the connection forks a child that becomes what a new
``python ARGS`` process would be (its folder, environment, standard streams at the file
descriptor level, ``sys.argv`` and ``sys.path[0]``, ``PYTHONPATH`` and its
``sitecustomize``, a JAX backend that has not started, none of the user's modules) and
answers ``{"pid": N}`` when the child starts and ``{"rc": CODE}`` when it ends (a
negative code for a signal, as :mod:`subprocess` says it; a client that goes away first
takes the child with it), or ``{"fallback": true}``
where a variable read when JAX starts differs from the server's: the client starts a
real process then. Runs never wait for each other.

The server never starts JAX's backend, never runs user code and runs no thread of its
own (a fork copies only the forking thread), so every child starts as clean as a new
process, about a second sooner: importing JAX is most of a run. A child ends as Python
ends a process, up to the teardown that frees each object (:func:`_exit`). What cannot
be the same is what the interpreter read when it started (``PYTHON*`` variables other
than ``PYTHONPATH``: ``helpers.run_cli`` starts a real process for those) and the modules
already imported (a test that looks at ``sys.modules`` runs a real process). The client
is ``helpers``; this file is not a test module.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import select
import signal
import socket
import sys
import traceback
import types
from typing import Any

PRELOAD = {
    "jax": (
        "jax",
        "jax.numpy",
        "jxinspect.cli.app",
        "jxinspect.cli.common",
        "jxinspect.cli.lower",
        "jxinspect.cli.diff",
        "jxinspect.cli.lint",
        "jxinspect.pipeline",
        "jxinspect.tracer.stage",
        "jxinspect.tracer.partitioner_run",
        "jxinspect.tracer.read.report",
        "jxinspect.tracer.inputs",
        "jxinspect.tracer.devices",
        "jxinspect.compare.sources",
        "jxinspect.render.report.text",
        "jxinspect.render.compare.text",
        "jxinspect.lint.run",
        "jxinspect.render.lint.text",
        "jxinspect.render.report.views",
        "jxinspect.render.report.code",
        "jxinspect.render.report.sharding_view",
        "jxinspect.render.report.memory_view",
        "jxinspect.render.report.profile_view",
        "jxinspect.tracer.call",
        "jxinspect.tracer.read.compiled",
        "jxinspect.tracer.read.paths",
        "jxinspect.tracer.read.residuals",
        "jxinspect.tracer.read.provenance",
        "jxinspect.tracer.adapters",
        "google.protobuf.descriptor_pb2",
        "google.protobuf.message_factory",
        "google.protobuf.text_format",
        "jaxlib.mlir.dialects.builtin",
        "jxinspect.compare.diff",
        "jxinspect.compare.survey",
        "jxinspect.cli.survey",
        "jxinspect.survey.run",
        "jxinspect.cli.profile",
        "jxinspect.record.recorder",
        "jxinspect.record.guard",
        "jxinspect.record.profiling",
        "jaxlib.mlir.dialects.mhlo",
    ),
    "libs": (
        "flax.nnx",
        "flax.linen",
        "equinox",
        "optax",
    ),
    "plain": (
        "jxinspect.cli.app",
        "jxinspect.cli.common",
        "jxinspect.cli.lint",
        "jxinspect.cli.record",
        "jxinspect.record.recording",
        "jxinspect.render.record.summary",
        "jxinspect.pipeline",
        "jxinspect.render.report.text",
        "jxinspect.cli.trend",
        "jxinspect.record.judged",
        "jxinspect.render.record.html",
    ),
}
"""What each kind imports before it serves (a module that is not there is skipped:
another release of the tool may lay them out differently)."""


def _preload(kind: str) -> None:
    import importlib

    for name in PRELOAD[kind] + (PRELOAD["jax"] if kind == "libs" else ()):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    if kind == "plain":
        assert "jax" not in sys.modules, "the plain server must not import JAX"
    else:
        _hide_own_frames()
    import gc

    gc.collect()
    gc.freeze()  # what is imported here is never collected: children skip it


def _hide_own_frames() -> None:
    """A forked child runs its script below this server's frames and runpy's, which a new
    Python does not have: JAX would put them in every location's call stack and in the
    tracebacks it filters. They are excluded as JAX excludes its own files."""
    from jax._src import source_info_util, traceback_util

    for path in (os.path.abspath(__file__), runpy.run_path.__code__.co_filename):
        source_info_util.register_exclusion(path)
        traceback_util.register_exclusion(path)


def _python(args: list[str]) -> int:
    """Run what ``python ARGS`` runs (``-c CODE``, ``-m MODULE`` or a script) in this
    process, with ``sys.argv`` and ``sys.path[0]`` as Python sets them; its exit code."""
    try:
        if args[:1] == ["-c"]:
            sys.argv = ["-c", *args[2:]]
            sys.path[0] = ""
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(args[1], "<string>", "exec"), main.__dict__)
        elif args[:1] == ["-m"]:
            sys.argv = ["-m", *args[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            script = os.path.abspath(args[0])  # Python names the script whole (3.9 on)
            sys.path[0] = os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exit:
        code = exit.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _exit(code: int) -> None:
    """End the process as Python's exit does, up to its teardown: other threads joined,
    ``atexit`` handlers run, the standard streams flushed (a failed flush is exit 120,
    as Python says). The teardown itself, which frees every object JAX made, is left to
    the kernel: it was a third of a short run."""
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            if stream is sys.stdout and code == 0:
                code = 120
    os._exit(code)


STARTUP_VARS = ("JAX_", "TF_", "LD_")
"""Prefixes of variables JAX or jaxlib read when they are imported: a run that sets them
otherwise than the server needs a process of its own."""

READ_WHEN_CALLED = frozenset({"JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"})
"""Of those, the ones nothing reads at import: ``jax.distributed.initialize`` reads the
coordinator's address when it is called, and the process count and index are
``record --processes``'s, for the program to read. A run that sets them forks as well."""


SET_WHEN_FORKED = {"JAX_EXPLAIN_CACHE_MISSES": "jax_explain_cache_misses",
                   "JAX_LOG_COMPILES": "jax_log_compiles",
                   "JAX_ENABLE_COMPILATION_CACHE": "jax_enable_compilation_cache"}  # fmt: skip
"""Of those, the ones that give a JAX option its value when JAX is imported, an option JAX
reads only when it traces or compiles: a child forked with one sets the option as
importing JAX would have (:func:`_set_options`)."""


def startup(env: dict[str, str] | os._Environ[str],
            prefixes: tuple[str, ...] = STARTUP_VARS) -> dict[str, str]:  # fmt: skip
    """The variables of ``env`` read when a process starts, as importing JAX leaves them."""
    found = {key: value for key, value in env.items() if key.startswith(prefixes)
             and key not in READ_WHEN_CALLED and key not in SET_WHEN_FORKED}  # fmt: skip
    found.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # what importing JAX sets by default
    return found


_STARTED_WITH = startup(os.environ)
"""The server's own, read before it imports JAX (which sets ``TF_CPP_MIN_LOG_LEVEL``)."""


def _std_streams() -> None:
    """``sys.std*`` on descriptors 0, 1 and 2, as a new Python makes them
    (``PYTHONIOENCODING``, ``PYTHONUNBUFFERED``; stderr line-buffered)."""
    encoding = os.environ.get("PYTHONIOENCODING", "").partition(":")[0] or "utf-8"
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(
            open(fd, "rb" if fd == 0 else "wb", buffering=0 if unbuffered and fd else -1,
                 closefd=False),
            encoding=encoding,
            errors="backslashreplace" if fd == 2 else "strict",
            line_buffering=fd == 2 or (fd == 1 and os.isatty(1)),
            write_through=unbuffered,
        )  # fmt: skip
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _python_startup(pythonpath: str) -> None:
    """What Python's start does with ``PYTHONPATH``: its folders after ``sys.path[0]``
    (those the server did not start with), and the ``sitecustomize`` found there
    imported."""
    folders = [os.path.abspath(f) for f in pythonpath.split(os.pathsep) if f]
    folders = [f for f in folders if f not in sys.path]
    sys.path[1:1] = folders
    if any(os.path.isfile(os.path.join(f, "sitecustomize.py")) for f in folders):
        sys.modules.pop("sitecustomize", None)
        import importlib

        importlib.import_module("sitecustomize")


def _set_options(env: dict[str, str]) -> None:
    """The options of :data:`SET_WHEN_FORKED` that ``env`` gives, set as importing JAX
    sets them (JAX's own reading of a boolean variable)."""
    if "jax" not in sys.modules:
        return
    import jax
    from jax._src.config import bool_env

    for variable, option in SET_WHEN_FORKED.items():
        if variable in env:
            jax.config.update(option, bool_env(variable, False))


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """In a forked child: become ``python ARGS`` with the client's streams, and end."""
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _set_options(request["env"])
    _std_streams()
    _python_startup(request["env"].get("PYTHONPATH", ""))
    _exit(_python(request["argv"]))


WARM_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warm_python.py")


def _warm_partitioner_runs(address: str) -> None:
    """``lower --why`` starts the partitioner's debug run as a new Python: the server's
    children fork it from the server instead (:mod:`warm_python`), as they are forked
    themselves (set once here, before any child). What the debug run is given (the work
    and the report's conditions on its standard input) reaches a forked process as it
    reaches a new one."""
    partitioner_run = sys.modules.get("jxinspect.tracer.partitioner_run")
    if partitioner_run is not None:
        partitioner_run.PYTHON = (sys.executable, WARM_PYTHON, f"--server={address}")


def _serve(sock: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """In the process forked for one connection: run the request in a child of its own,
    answering its pid and then its exit code."""
    if startup(request["env"]) != _STARTED_WITH:
        sock.sendall(b'{"fallback": true}\n')
        return
    pid = os.fork()
    if pid == 0:
        sock.close()
        _become(request, fds)
    for fd in fds:
        os.close(fd)
    sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    status = _wait(sock, pid)
    with contextlib.suppress(OSError):  # the client is gone
        sock.sendall(json.dumps({"rc": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


def _wait(sock: socket.socket, pid: int) -> int:
    """The child's wait status. A client that goes first (killed: ``warm_python.py`` under
    a run that kills it) takes the child with it, as a new process would have gone with
    it: nothing it started runs on."""
    child = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(child, select.POLLIN)
        poller.register(sock, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            if child in ready:
                break
            try:
                gone = not sock.recv(1 << 10)
            except OSError:
                gone = True
            if gone:
                os.kill(pid, signal.SIGKILL)
                break
    finally:
        os.close(child)
    return os.waitpid(pid, 0)[1]


def _receive(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """One request line and the descriptors sent with it (``None`` if the client left)."""
    data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None, []
        data += chunk
    return json.loads(data), fds


def _owner_alive(owner: int) -> bool:
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def main() -> None:
    kind, owner, address = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    # the ready line goes to the starting client; the server's own 0, 1 and 2 go nowhere
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind("\0" + address)
    except OSError:  # another client started this kind first
        replies.write(b'{"taken": true}\n')
        return
    listener.listen(64)  # clients that come while it imports wait in the queue
    _preload(kind)
    _warm_partitioner_runs(address)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the serving processes reap themselves
    replies.write(json.dumps({"ready": os.getpid()}).encode() + b"\n")
    replies.close()
    while True:
        ready, _, _ = select.select([listener], [], [], 1.0)
        if not ready:
            if not _owner_alive(owner):
                return
            continue
        sock, _ = listener.accept()
        request, fds = _receive(sock)
        if request is None or request.get("stop"):
            sock.close()
            if request is not None:
                return
            continue
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            listener.close()
            try:
                _serve(sock, request, fds)
            finally:
                os._exit(0)
        sock.close()
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    main()
