"""``record --profile N``: the run's own calls of each recorded function, measured.

Nothing of ours runs per call (the recorder hooks lowering only), so the run's calls are
never counted as they happen: JAX's profiler is started once the first function to
measure is recorded (after the recorder's own compile of it, so only the user's run is
traced) and stopped when the run ends (an ``atexit`` handler registered once JAX is
imported, so it runs before JAX's own clean-up). A run that starts JAX's profiler itself
meanwhile cannot (JAX runs one trace at a time); where the run's own trace is on when
ours would start, no call is measured and the reports say so. The trace is then read: each recorded
program's events by its module's name (``jit_step``) and executable (``program_id``),
its calls told apart by ``run_id``; the first call (the one that follows the compile) is
left out and the next N are joined to the program's lines and collectives as
``jxinspect profile`` joins them, and written into the function's ``report.json``. The
trace is kept in the recording's ``profile-trace`` folder, in XProf's layout (replacing the
recording removes it).
"""

from __future__ import annotations

import atexit
import sys
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from jxinspect.core.model import Report
from jxinspect.record import folder as records
from jxinspect.tracer import seam
from jxinspect.tracer.read.hlo_text import parse
from jxinspect.tracer.read.profile import recorded_profile
from jxinspect.tracer.read.xplane import TraceEvent, events_by_module


@dataclass
class Watched:
    """One recorded function whose calls are measured."""

    report_path: Path
    report: Report
    module: str
    """The compiled module's name, as the profiler's events say it (``jit_step``)."""
    program_text: str
    """Its optimized HLO (``compiled.as_text()``), which places instructions on lines."""


@dataclass
class RunProfiler:
    """The profiler over the user's run, and the functions it measures."""

    calls: int
    watched: list[Watched] = field(default_factory=list)
    folder: Path | None = None
    """Where the profiler writes its trace (``None``: not started)."""
    failed: str | None = None
    """Why the profiler could not be started (the run's own trace on, say)."""

    def watch(self, report_path: Path, report: Report, module: str, program_text: str) -> None:
        """Measure the function whose report was just written at ``report_path`` (its
        compiled ``module``'s name and optimized HLO), starting the profiler if it is
        not on."""
        self.watched.append(Watched(report_path, report, module, program_text))
        if self.folder is not None or self.failed is not None:
            return
        folder = report_path.parent.parent / records.PROFILE_TRACE
        atexit.register(self.finish)
        try:
            seam.start_profiler(folder)
        except Exception as err:  # the run's own trace is on: JAX runs one at a time
            self.failed = f"JAX's profiler could not be started ({type(err).__name__}: {err})"
            return
        self.folder = folder

    def finish(self) -> None:
        """Stop the profiler and write each watched function's measured calls into its
        report (the trace read once), or why none were. Never raises: the run's exit is
        its own."""
        folder, self.folder = self.folder, None
        try:
            if folder is not None:
                seam.stop_profiler()
                grouped = _by_module(self.watched)
                read = events_by_module(folder, frozenset(grouped))
            else:
                grouped, read = _by_module(self.watched), self.failed or "not started"
            for module, group in grouped.items():
                events = read if isinstance(read, str) else read[module]
                for watched, found in _assigned(group, events):
                    measured = recorded_profile(watched.report, watched.program_text, found,
                                                self.calls)  # fmt: skip
                    if folder is not None:
                        measured = replace(measured, trace=records.PROFILE_TRACE)
                    report = replace(watched.report, profile=measured)
                    records.write_json(watched.report_path, report)
        except Exception as err:  # never break the user's run at its exit
            print(f"jxinspect record: the run's calls were not measured: {err!r}",
                  file=sys.stderr)  # fmt: skip


def _by_module(watched: list[Watched]) -> dict[str, list[Watched]]:
    grouped: dict[str, list[Watched]] = defaultdict(list)
    for one in watched:
        grouped[one.module].append(one)
    return grouped


def _assigned(
    group: list[Watched], events: list[TraceEvent] | str
) -> list[tuple[Watched, list[TraceEvent] | str]]:
    """Each watched program of one module name with its own events: those of the
    executables (``program_id``) whose instructions are all its own and no other's; a
    line saying why where none are."""
    if isinstance(events, str):
        return [(one, events) for one in group]
    names = [set(parse(one.program_text).instructions) for one in group]
    by_program: dict[int | None, list[TraceEvent]] = defaultdict(list)
    for event in events:
        by_program[event.program].append(event)
    mine: list[list[TraceEvent]] = [[] for _ in group]
    shared: set[int] = set()
    for found in by_program.values():
        ran = {event.instruction for event in found}
        owners = [k for k, known in enumerate(names) if ran <= known]
        if len(owners) == 1:
            mine[owners[0]] += found
        shared.update(owners if len(owners) > 1 else ())
    module = group[0].module
    return [
        (one, f"several recorded programs named {module} run the same instructions: their "
              "calls cannot be told apart" if k in shared else
              mine[k] or f"the trace holds no call of {module} by this program")
        for k, one in enumerate(group)
    ]  # fmt: skip
