"""A warm starting point for the tests' runs of the ``jxinspect`` command.

``python tests/cli_server.py KIND`` imports what a run of the command imports (``jax``:
JAX and the whole tool, for ``lower``, ``diff-debug`` and ``lint``, whose workers fork
from it; ``libs``: that and Flax, Equinox and Optax, for targets whose module imports
them; ``plain``: the tool without JAX, for the commands whose process never imports
it), then serves requests, one JSON
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
process, about a second sooner: importing JAX is most of a run. What cannot be the same
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

    for name in PRELOAD[kind] + (PRELOAD["jax"] if kind == "libs" else ()):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    if kind == "plain":
        assert "jax" not in sys.modules, "the plain server must not import JAX"


def _streams(stdout: str, stderr: str) -> None:
    """Standard streams as a new process with ``PYTHONIOENCODING=utf-8`` has them, on
    ``/dev/null`` and the two files."""
    stdin = os.open(os.devnull, os.O_RDONLY)
    out = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for fd, target in ((stdin, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
        os.close(fd)
    encoding = os.environ.get("PYTHONIOENCODING", "utf-8").partition(":")[0] or "utf-8"
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        open(0, "rb", closefd=False), encoding=encoding, errors="strict"
    )
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        open(1, "wb", closefd=False), encoding=encoding, errors="strict"
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        open(2, "wb", closefd=False),
        encoding=encoding,
        errors="backslashreplace",
        line_buffering=True,
    )


def _child(request: dict[str, Any]) -> int:
    """Become the new process and run the command; its exit code."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _streams(request["stdout"], request["stderr"])
    command: list[str] = request["command"]
    argv: list[str] = request["argv"]
    try:
        if argv[:1] == ["-c"]:  # python -c CODE
            sys.argv = argv[:1] + argv[2:]
            sys.path[0] = ""
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        elif command[-2:] == ["-m", "jxinspect"]:
            sys.argv = ["-m", *argv]
            sys.path[0] = os.getcwd()
            runpy.run_module("jxinspect", run_name="__main__", alter_sys=True)
        else:
            script = command[-1]
            sys.argv = [script, *argv]
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


def _reply(replies: BinaryIO, message: dict[str, Any]) -> None:
    replies.write(json.dumps(message).encode() + b"\n")
    replies.flush()


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
    _reply(replies, {"ready": os.getpid()})
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            code = _child(request)
            sys.exit(code)  # the interpreter's own exit: flush, atexit, children reaped
        _reply(replies, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        _reply(replies, {"rc": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main()
