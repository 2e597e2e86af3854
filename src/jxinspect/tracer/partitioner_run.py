"""The partitioner's debug run: the same target staged and compiled again in a child
process whose XLA writes Shardy's record of where each sharding came from.

That compile runs apart because it can crash where the plain one does not (XLA's
verbose propagation segfaults on a program with a ``scan`` and a ``shard_map``
together, on 0.10.2 and 0.12): a crash there costs the report its provenance, never the
report. The child is spawned (a fresh interpreter, never a fork of a process whose XLA
runs threads) when the run starts, so it loads JAX while this process imports the user's
module; it stages once this process sends it the conditions the report stages under
(:class:`StagingConditions`: the environment and JAX's settings as importing the module left
them, ``XLA_FLAGS`` and simulated devices included), so that it stages what the report
stages whatever way the module or a config set them. Its output, the user's prints
included, goes to a log in its own folder, never to this process's streams. Its compile
writes Shardy's record through the compile's own options (never ``XLA_FLAGS``, which the
module may set), with the persistent compilation cache off: a cache hit writes no dump.

The child ends with its parent, however the parent ends: the parent holds the child's
standard input open while it lives, and its end (the parent stopped by a signal, or
killed: a ``lint`` worker) makes the child remove its folder and exit. So the child
outlives its work: it says how the work ended on its standard output (one byte, its
prints going to the log) and waits for the parent to read the folder and end it; a
parent killed meanwhile leaves the folder to the child, never to no one. Ctrl-C at the
terminal is the parent's to handle (it stops the child); a program the child starts
gets the default SIGINT.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from jxinspect.core import interrupts, progress
from jxinspect.core.artifacts import PROGRAM_LIMIT, SMALL_LIMIT, read_text
from jxinspect.core.errors import UsageError
from jxinspect.core.interrupts import signal_named
from jxinspect.core.model import Report
from jxinspect.tracer import seam
from jxinspect.tracer.read.mlir import string_value

DEFAULT_WAIT_S = 300.0
"""How long the run waits for the child once its own report is ready."""
LOG_TAIL = 400
"""The characters of the child's log a failure note quotes at most."""
PYTHON: tuple[str, ...] = (sys.executable,)
"""The command that starts the child's Python: this interpreter (the tests' warm server
names a launcher that forks the child from the server instead)."""


CONDITIONS_FILE = "conditions.json"
"""Where a failed child writes the conditions it staged under, for the parent to compare."""
SHOWN_DIFFERENCES = 3
"""The differences between the child's conditions and the report's a failure names at most."""


@dataclass(frozen=True)
class StagingConditions:
    """What staging depends on besides the target: the environment, JAX's settings, and
    the devices where the backend has started (``None``: not yet)."""

    environment: dict[str, str]
    settings: dict[str, Any]
    devices: int | None

    @classmethod
    def now(cls) -> StagingConditions:
        started = seam.backend_started()
        return cls(dict(os.environ), seam.config_values(),
                   seam.device_count() if started else None)  # fmt: skip

    def apply(self) -> None:
        """Stage under these conditions from here on (in the child, before its backend
        starts): its environment replaced, JAX's settings updated."""
        os.environ.clear()
        os.environ.update(self.environment)
        seam.restore_config(self.settings)

    def to_json(self) -> dict[str, Any]:
        return {"environment": self.environment, "devices": self.devices,
                "settings": {k: repr(v) for k, v in self.settings.items()}}  # fmt: skip


def differences(child: dict[str, Any], report: StagingConditions) -> list[str]:
    """What the child's conditions (:meth:`StagingConditions.to_json`, as it wrote them) had
    otherwise than the report's run: devices, environment variables, JAX settings."""
    said: list[str] = []
    theirs, ours = child.get("devices"), report.devices
    if isinstance(theirs, int) and ours is not None and theirs != ours:
        said.append(f"{theirs} devices where the report's run had {ours}")
    env = child.get("environment") or {}
    for name in sorted(set(env) | set(report.environment)):
        if env.get(name) != report.environment.get(name):
            said.append(f"{name}={env.get(name)!r} where the report's run had "
                        f"{report.environment.get(name)!r}")  # fmt: skip
    settings = child.get("settings") or {}
    for name, value in sorted(report.settings.items()):
        if name in settings and settings[name] != repr(value) and name not in _OURS:
            said.append(f"{name}={settings[name]} where the report's run had {value!r}")
    return said


_OURS = frozenset({"jax_enable_compilation_cache"})
"""Settings the child sets otherwise on purpose (a cache hit writes no record)."""


_SIZE_BYTES = 8
"""Each message's size, before it on the child's standard input."""


_DONE, _FAILED = b"0", b"1"
"""What the child says on its standard output once the work ended: staged and compiled,
or failed (its traceback in the log)."""


def _main() -> None:
    """The child (``python -m jxinspect.tracer.partitioner_run``): its folder and the work,
    then the report's :class:`StagingConditions`, each pickled by the parent on standard input
    (the two are one program: nothing else writes it), which stays open until the parent
    ends. JAX loads between the two; a parent that ends before sending the conditions
    (its own run failed) ends the child. Once the work ended it says how (:data:`_DONE`,
    :data:`_FAILED`) and waits for the parent's end, which removes the folder."""
    import threading
    import traceback

    interrupts.leave_to_parent()
    said = os.dup(1)  # the parent's pipe; the user's prints go to the log
    os.dup2(2, 1)
    folder, work = _receive()
    seam.import_jax()
    conditions: StagingConditions = _receive(folder)
    watcher = threading.Thread(target=_end_with_parent, args=(folder,), daemon=True)
    watcher.start()
    conditions.apply()
    seam.persistent_cache_off()
    from jxinspect.tracer.stage import dumping_propagation

    ended = _DONE
    try:
        with dumping_propagation(folder):
            work()
    except BaseException:
        traceback.print_exc()
        with open(os.path.join(folder, CONDITIONS_FILE), "w", encoding="utf-8") as out:
            json.dump(StagingConditions.now().to_json(), out)
        ended = _FAILED
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(said, ended)
    watcher.join()


def _receive(folder: str | None = None) -> Any:
    """The parent's next message; the parent gone before it sent it: remove ``folder``
    (the run's, once known: the parent leaves it to this process) and exit."""
    size = int.from_bytes(_read_exactly(_SIZE_BYTES, folder), "big")
    return pickle.loads(_read_exactly(size, folder))


def _read_exactly(size: int, folder: str | None) -> bytes:
    """``size`` bytes of standard input; the parent gone before it sent them: remove
    ``folder`` (where given) and exit."""
    chunks: list[bytes] = []
    while size:
        chunk = os.read(0, size)
        if not chunk:
            _remove_and_exit(folder)
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _end_with_parent(folder: str) -> None:
    """In the child: once standard input ends (the parent is gone), remove the folder
    (again, where XLA was writing into it meanwhile) and exit."""
    while os.read(0, 4096):
        pass
    _remove_and_exit(folder)


def _remove_and_exit(folder: str | None) -> NoReturn:
    """Exit, and have the run's ``folder`` removed: the parent is gone, and left it to
    this process. XLA's threads may still be writing into it (a compile dumping Shardy's
    record creates the folder again for each file), so a process forked here removes it
    once this one, and every thread of it, has ended (where no process can be forked,
    this one removes it before it exits)."""
    if folder is not None and os.path.lexists(folder):
        exiting = os.getpid()
        try:
            remover = os.fork() == 0
        except OSError:
            _remove(folder)
        else:
            if remover:  # nothing but this runs here
                while os.getppid() == exiting:
                    time.sleep(0.01)
                _remove(folder)
                os._exit(0)
    os._exit(1)


def _remove(folder: str) -> None:
    """Remove ``folder``, again where something made it again meanwhile (a few tries)."""
    tries_left = 5
    while os.path.lexists(folder) and tries_left > 0:
        shutil.rmtree(folder, ignore_errors=True)
        tries_left -= 1


@dataclass
class PartitionerRun:
    """A child staging the target again under :func:`seam.partitioner_dump_options`."""

    folder: str
    process: subprocess.Popen[bytes]
    asked: tuple[str, ...] = ()
    """The values whose origins are wanted besides the collectives' (``--why-of``)."""

    @classmethod
    def start(cls, work: Callable[[], object], asked: tuple[str, ...] = ()) -> PartitionerRun:
        """Start the child; ``work`` must be picklable (a ``functools.partial`` of a
        module-level function over plain data). Its output goes to its folder's log; it
        stages once :meth:`send_conditions` says under what."""
        folder = tempfile.mkdtemp(prefix="jxinspect-why-")
        with open(os.path.join(folder, "child.log"), "xb") as log:
            process = subprocess.Popen([*PYTHON, "-m", __name__], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=log)  # fmt: skip
        run = cls(folder, process, asked)
        run._send((folder, work))
        return run

    def send_conditions(self) -> None:
        """Let the child stage, under this process's :class:`StagingConditions` now (once the
        user's module is imported and the devices prepared, before anything is staged)."""
        self._send(StagingConditions.now())

    def _send(self, value: object) -> None:
        """One message to the child; the pipe stays open: its end tells the child this
        process ended."""
        stdin = self.process.stdin
        if stdin is None or stdin.closed:
            return
        payload = pickle.dumps(value)
        try:
            stdin.write(len(payload).to_bytes(_SIZE_BYTES, "big") + payload)
            stdin.flush()
        except OSError:  # the child already ended: finish() says how
            pass

    def finish(self, module_name: str, wait_s: float = DEFAULT_WAIT_S) -> tuple[str | None, str]:
        """Wait for the child's work; ``(text of the module after propagation, "")``, or
        ``(None, why there is none)``. The child ends and the folder is removed either way."""
        try:
            ended = self._wait_for_work(wait_s)
            if ended is None:
                return None, f"the partitioner's debug run took over {wait_s:.0f} s and was stopped"
            if ended != _DONE:
                how = "failed" if ended == _FAILED else _ended(self.process.wait())
                return None, f"the partitioner's debug run {how}{self._log_tail()}" + (
                    self._differences()
                )
            path = seam.after_propagation(self.folder, module_name)
            if path is None:
                return None, "the partitioner's debug run wrote no record of propagation"
            try:
                return read_text(Path(path), limit=PROGRAM_LIMIT, inside=Path(self.folder)), ""
            except UsageError as err:
                return None, f"the partitioner's record of propagation was not read: {err}"
        finally:
            self._end()
            shutil.rmtree(self.folder, ignore_errors=True)

    def _wait_for_work(self, wait_s: float) -> bytes | None:
        """What the child said of its work (:data:`_DONE`, :data:`_FAILED`, or ``b""``: it
        ended without a word, a crash), or ``None`` after ``wait_s`` seconds."""
        import select

        said = self.process.stdout
        if said is None:
            return b""
        ready, _, _ = select.select([said], [], [], wait_s)
        return os.read(said.fileno(), 1) if ready else None

    def stop(self) -> None:
        """End the child without reading it (the run failed before it needed it, or a
        signal stopped the run)."""
        self._end()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _end(self) -> None:
        """Kill the child unless it ended, wait for it, and close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    def _log_tail(self) -> str:
        try:
            text = read_text(Path(self.folder, "child.log"), limit=SMALL_LIMIT)
        except (UsageError, OSError):
            return ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return f" (its last line: {lines[-1][-LOG_TAIL:]})" if lines else ""

    def _differences(self) -> str:
        """``; it staged with 1 devices where the report's run had 8, …`` where the
        failed child's conditions differed from this process's; ``""`` where they did not
        or it wrote none."""
        try:
            child = json.loads(read_text(Path(self.folder, CONDITIONS_FILE), limit=PROGRAM_LIMIT))
        except (UsageError, OSError, ValueError):
            return ""
        said = differences(child, StagingConditions.now()) if isinstance(child, dict) else []
        if not said:
            return ""
        more = f" and {len(said) - SHOWN_DIFFERENCES} more" if len(said) > SHOWN_DIFFERENCES else ""
        return f"; it staged with {', '.join(said[:SHOWN_DIFFERENCES])}{more}"


def _ended(code: int | None) -> str:
    """``crashed (signal 11, SIGSEGV)`` or ``failed (exit code 1)``."""
    if code is not None and code < 0:
        return f"crashed ({signal_named(-code)})"
    return f"failed (exit code {code})"


GSPMD_KEEPS_NONE = (
    "the GSPMD partitioner keeps no record of where a sharding came from (Shardy does: "
    "JAX 0.7 on by default, or --partitioner shardy)"
)


def with_provenance(report: Report, lowered: Any, run: PartitionerRun) -> Report:
    """``report`` (compiled) with each collective's origins from ``run``'s record, or
    with :attr:`~jxinspect.core.model.CompiledInfo.origins_unread` saying why there are
    none; ``lowered`` is JAX's ``Lowered`` of the same program."""
    from jxinspect.tracer.read import provenance

    compiled = report.compiled
    if compiled is None or compiled.collectives is None:
        run.stop()
        return report
    if report.partitioner != "shardy":
        run.stop()
        return replace(report, compiled=replace(compiled, origins_unread=GSPMD_KEEPS_NONE))
    module = seam.stablehlo_module(lowered)
    name = string_value(module.operation.attributes["sym_name"])
    progress.stage("waiting for the partitioner's run")
    dumped, why_not = run.finish(name)
    if dumped is None:
        unread = f"{why_not}; the report is without provenance"
        return replace(report, compiled=replace(compiled, origins_unread=unread))
    try:
        return provenance.with_origins(report, dumped, module, run.asked)
    except Exception as err:  # a record this reader does not know: said, never raised
        unread = f"the partitioner's record was not read ({type(err).__name__}: {err})"
        return replace(report, compiled=replace(compiled, origins_unread=unread))


if __name__ == "__main__":
    _main()
