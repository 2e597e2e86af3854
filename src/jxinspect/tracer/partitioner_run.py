"""The partitioner's debug run: the same target staged and compiled again in a child
process whose XLA writes Shardy's record of where each sharding came from.

That compile runs apart because it can crash where the plain one does not (XLA's
verbose propagation segfaults on a program with a ``scan`` and a ``shard_map``
together, on 0.10.2 and 0.12): a crash there costs the report its provenance, never the
report. The child is spawned (a fresh interpreter, never a fork of a process whose XLA
runs threads) when the run starts, so it stages while this process does; its output,
the user's prints included, goes to a log in its own folder, never to this process's
streams. The persistent compilation cache is off there: a cache hit writes no dump.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

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


def _main() -> None:
    """The child (``python -m jxinspect.tracer.partitioner_run``): the work, pickled by
    the parent on standard input (the two are one program: nothing else writes it)."""
    import pickle

    work = pickle.loads(sys.stdin.buffer.read())
    work()


@dataclass
class PartitionerRun:
    """A child staging the target again under :func:`seam.partitioner_dump_flags`."""

    folder: str
    process: subprocess.Popen[bytes]
    asked: tuple[str, ...] = ()
    """The values whose origins are wanted besides the collectives' (``--why-of``)."""

    @classmethod
    def start(cls, work: Callable[[], object], asked: tuple[str, ...] = ()) -> PartitionerRun:
        """Start the child; ``work`` must be picklable (a ``functools.partial`` of a
        module-level function over plain data). Its output goes to its folder's log; the
        dump flags are set in its environment, before its JAX starts a backend."""
        import pickle

        folder = tempfile.mkdtemp(prefix="jxinspect-why-")
        try:
            dump_flags = seam.partitioner_dump_flags(folder)  # the folder quoted
        except UsageError:
            os.rmdir(folder)
            raise
        env = dict(os.environ)
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {dump_flags}"
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        with open(os.path.join(folder, "child.log"), "xb") as log:
            process = subprocess.Popen(
                [*PYTHON, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=log,
                env=env,
            )
        assert process.stdin is not None
        with process.stdin:
            process.stdin.write(pickle.dumps(work))
        return cls(folder, process, asked)

    def finish(self, module_name: str, wait_s: float = DEFAULT_WAIT_S) -> tuple[str | None, str]:
        """Wait for the child; ``(text of the module after propagation, "")``, or
        ``(None, why there is none)``. The folder is removed either way."""
        try:
            try:
                code = self.process.wait(wait_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return None, f"the partitioner's debug run took over {wait_s:.0f} s and was stopped"
            if code != 0:
                return None, f"the partitioner's debug run {_ended(code)}{self._log_tail()}"
            path = seam.after_propagation(self.folder, module_name)
            if path is None:
                return None, "the partitioner's debug run wrote no record of propagation"
            try:
                return read_text(Path(path), limit=PROGRAM_LIMIT, inside=Path(self.folder)), ""
            except UsageError as err:
                return None, f"the partitioner's record of propagation was not read: {err}"
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def stop(self) -> None:
        """End the child without reading it (the run failed before it needed it)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _log_tail(self) -> str:
        try:
            text = read_text(Path(self.folder, "child.log"), limit=SMALL_LIMIT)
        except (UsageError, OSError):
            return ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return f" (its last line: {lines[-1][-LOG_TAIL:]})" if lines else ""


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
