"""A warm starting point for the tests' runs of the ``jxinspect`` command.

``python tests/cli_server.py KIND`` imports what a run of the command imports (``jax``:
JAX and the whole tool, for ``lower``, ``diff-debug`` and ``lint``, whose workers fork
from it; ``libs``: that and Flax, Equinox and Optax, for targets whose module imports
them; ``plain``: the tool without JAX, for the commands whose process never imports
it; ``python``: what ``libs`` imports, for ``python`` commands run under ``record``,
served to ``warm_python.py`` on a Unix socket: :func:`_serve_python`), then serves
requests, one JSON
line each on stdin: ``{"command": [...], "argv": [...], "cwd": ..., "env": {...},
"stdout": FILE, "stderr": FILE}``. For each it forks a child, which becomes what a new
``jxinspect ARGS`` process would be (its own folder, environment, standard streams at
the file descriptor level, ``sys.argv`` and ``sys.path[0]``, a JAX backend that has not
started, none of the user's modules) and runs the installed console script (for
``"argv": ["-c", CODE]``, the code as ``python -c`` runs it). The server answers
``{"pid": N}`` when the child starts and ``{"rc": CODE}`` when it ends (a negative code
for a signal, as :mod:`subprocess` says it).

The server never starts JAX's backend, never runs user code and runs no thread of its
own (a fork copies only the forking thread), so every child starts as clean as a new
process, about a second sooner: importing JAX is most of a run. A child ends as Python
ends a process, up to the teardown that frees each object (:func:`_exit`). What cannot
be the same
is what the interpreter or JAX read when they started (``PYTHON*``, ``JAX_*``
variables: ``helpers.run_cli`` starts a real process for those) and the modules already
imported (a test that looks at ``sys.modules`` runs a real process). The client is
``helpers.run_cli``; this file is not a test module.
"""

from __future__ import annotations

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
from typing import Any, BinaryIO

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
        "jxinspect.tracer.read.report",
        "jxinspect.tracer.inputs",
        "jxinspect.tracer.devices",
        "jxinspect.compare.sources",
        "jxinspect.render.report.json",
        "jxinspect.render.report.text",
        "jxinspect.render.compare.text",
        "jxinspect.lint.run",
        "jxinspect.render.lint.json",
        "jxinspect.render.lint.text",
        "jaxlib.mlir.dialects.mhlo",
    ),
    "libs": (
        "flax.nnx",
        "flax.linen",
        "equinox",
        "optax",
    ),
    "python": ("flax.nnx", "flax.linen", "equinox", "optax"),
    "plain": (
        "jxinspect.cli.app",
        "jxinspect.cli.common",
        "jxinspect.cli.lint",
        "jxinspect.cli.record",
        "jxinspect.record.run",
        "jxinspect.render.record.summary",
    ),
}
"""What each kind imports before it serves (a module that is not there is skipped:
another release of the tool may lay them out differently)."""


def _preload(kind: str) -> None:
    import importlib

    for name in PRELOAD[kind] + (PRELOAD["jax"] if kind in ("libs", "python") else ()):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    if kind == "plain":
        assert "jax" not in sys.modules, "the plain server must not import JAX"
    import gc

    gc.collect()
    gc.freeze()  # what is imported here is never collected: children skip it


def _streams(stdout: str, stderr: str) -> None:
    """Standard streams as a new process has them (:func:`_std_streams`), on
    ``/dev/null`` and the two files."""
    stdin = os.open(os.devnull, os.O_RDONLY)
    out = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for fd, target in ((stdin, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
        os.close(fd)
    _std_streams()


def _child(request: dict[str, Any]) -> int:
    """Become the new process and run the command; its exit code."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _streams(request["stdout"], request["stderr"])
    command: list[str] = request["command"]
    argv: list[str] = request["argv"]
    if command[-2:] == ["-m", "jxinspect"]:
        return _python(["-m", "jxinspect", *argv])
    if argv[:1] == ["-c"]:
        return _python(argv)
    return _python([command[-1], *argv])


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
            sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
            runpy.run_path(args[0], run_name="__main__")
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


def _reply(replies: BinaryIO, message: dict[str, Any]) -> None:
    replies.write(json.dumps(message).encode() + b"\n")
    replies.flush()


_STARTUP_VARS = ("JAX_", "TF_", "LD_")
"""Prefixes of variables JAX or jaxlib read when they are imported: a Python run that
sets them otherwise than the server needs a process of its own."""


def _startup(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key.startswith(_STARTUP_VARS)}


_STARTED_WITH = _startup(os.environ)
"""The server's own, read before it imports JAX (which sets ``TF_CPP_MIN_LOG_LEVEL``)."""


def _python_run(sock: socket.socket) -> None:
    """Serve one ``warm_python.py`` client: become ``python ARGS`` in a forked process
    with the client's streams, and answer its exit code (or that it must start a real
    Python)."""
    data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 3)
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            return
        data += chunk
    request = json.loads(data)
    env: dict[str, str] = request["env"]
    if _startup(env) != _STARTED_WITH:
        sock.sendall(b'{"fallback": true}\n')
        return
    pid = os.fork()
    if pid == 0:
        sock.close()
        for fd, target in zip(fds, (0, 1, 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        _std_streams()
        _python_startup(env.get("PYTHONPATH", ""))
        _exit(_python(request["argv"]))
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    sock.sendall(json.dumps({"rc": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


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
    """What Python's start does with ``PYTHONPATH``: its folders after ``sys.path[0]``,
    and the ``sitecustomize`` found there imported."""
    folders = [os.path.abspath(f) for f in pythonpath.split(os.pathsep) if f]
    sys.path[1:1] = folders
    if any(os.path.isfile(os.path.join(f, "sitecustomize.py")) for f in folders):
        sys.modules.pop("sitecustomize", None)
        import importlib

        importlib.import_module("sitecustomize")


def _serve_python(requests: BinaryIO, replies: BinaryIO) -> None:
    """The ``python`` kind: serve ``warm_python.py`` clients on an abstract Unix socket
    until the tests close the server's stdin. Each client is served by a forked process
    of its own, so runs of several tests, or a run inside a run, never wait for each
    other."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"jxinspect-tests-python-{os.getpid()}"
    listener.bind("\0" + name)
    listener.listen()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the serving processes reap themselves
    _reply(replies, {"ready": os.getpid(), "address": name})
    while True:
        ready, _, _ = select.select([requests, listener], [], [])
        if requests in ready:
            return  # the tests closed stdin: stop serving
        sock, _ = listener.accept()
        if os.fork() == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            listener.close()
            requests.close()
            replies.close()
            try:
                _python_run(sock)
            finally:
                os._exit(0)
        sock.close()


def main() -> None:
    kind = sys.argv[1]
    # the protocol gets its own descriptors; the server's own 0, 1 and 2 go nowhere
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    _preload(kind)
    if kind == "python":
        _serve_python(requests, replies)
        return
    _reply(replies, {"ready": os.getpid()})
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            _exit(_child(request))
        _reply(replies, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        _reply(replies, {"rc": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main()
