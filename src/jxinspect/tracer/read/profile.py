"""N steps of a compiled program, measured: run under JAX's profiler, its events joined to
the program's instructions by (``hlo_module``, ``hlo_op``), then to the user's lines (the
optimized HLO's frames, :meth:`HloText.located`) and to the collectives the compiled
stage already read (kind, axes, the paths each moves)."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jxinspect.core.model import Collective, Report
from jxinspect.core.profile import (
    TIMELINE_SPANS,
    CollectiveTime,
    InstructionTime,
    LineTime,
    Profile,
    Span,
    StepSeconds,
)
from jxinspect.tracer import seam
from jxinspect.tracer.read.frames import UserLine
from jxinspect.tracer.read.hlo_text import HloText, Instruction, parse
from jxinspect.tracer.read.xplane import TraceEvent, trace_events

MAX_INSTRUCTIONS_PER_LINE = 8
"""Instructions a line lists (the most time first; all count)."""


@dataclass(frozen=True)
class Measure:
    """What ``jxinspect profile`` asks: warm-up steps, then measured steps, and where to
    keep the profiler's trace (``None``: a temporary folder, removed)."""

    steps: int = 10
    warmup: int = 2
    keep: Path | None = None


def measured(report: Report, compiled: Any, measure: Measure) -> Profile:
    """``compiled`` run ``measure.warmup`` then ``measure.steps`` times on random inputs of
    its own arguments (fresh ones for donated arguments, made outside the timed call),
    the steps under the profiler."""
    arrays = seam.concrete_inputs(compiled)
    donated = seam.donated_arguments(compiled)
    for _ in range(measure.warmup):
        arrays = _step(compiled, arrays, donated)[0]
    if measure.keep is not None:
        measure.keep.mkdir(parents=True, exist_ok=True)
        return _traced(report, compiled, measure, arrays, donated, measure.keep)
    with tempfile.TemporaryDirectory(prefix="jxinspect-profile-") as folder:
        return _traced(report, compiled, measure, arrays, donated, Path(folder))


def _step(compiled: Any, arrays: list[Any], donated: list[bool]) -> tuple[list[Any], float]:
    """One step's wall seconds; the arrays for the next (donated ones made anew)."""
    started = time.perf_counter()
    seam.run_compiled(compiled, arrays)
    seconds = time.perf_counter() - started
    if any(donated):
        fresh = seam.concrete_inputs(compiled)
        arrays = [new if gone else old for old, new, gone in zip(arrays, fresh, donated)]
    return arrays, seconds


def _traced(
    report: Report,
    compiled: Any,
    measure: Measure,
    arrays: list[Any],
    donated: list[bool],
    folder: Path,
) -> Profile:
    seconds = []
    with seam.profiler_traced(folder, kept=measure.keep is not None):
        for _ in range(measure.steps):
            arrays, took = _step(compiled, arrays, donated)
            seconds.append(took)
    platform, kind, devices = seam.profiled_devices(compiled)
    step = StepSeconds(statistics.median(seconds), min(seconds), max(seconds))
    flops = report.compiled.flops if report.compiled is not None else None
    base = Profile(
        measure.steps, measure.warmup, step, platform or report.platform or "", kind,
        devices or 1, None, None,
        flops_per_second=flops / step.median if flops is not None and step.median > 0 else None,
        trace=str(measure.keep) if measure.keep is not None else None,
    )  # fmt: skip
    events = trace_events(folder, seam.profiled_module(compiled))
    if isinstance(events, str):
        return replace(base, unread=events)
    return _joined(base, events, parse(compiled.as_text()), report)


def _joined(base: Profile, events: list[TraceEvent], module: HloText, report: Report) -> Profile:
    """The events per step and device, by instruction, by the user's line and by
    collective."""
    per = max(1, base.steps * base.devices)
    seconds: dict[str, float] = defaultdict(float)
    runs: dict[str, int] = defaultdict(int)
    for event in events:
        seconds[event.instruction] += event.seconds
        runs[event.instruction] += 1
    total = sum(seconds.values())
    where = {name: _line(module, name) for name in seconds}
    ranked = sorted(seconds, key=lambda name: -seconds[name])
    by_instruction = tuple(
        InstructionTime(name, seconds[name] / per, _share(seconds[name], total),
                        round(runs[name] / per), where[name].file, where[name].line)
        for name in ranked
    )  # fmt: skip
    return replace(
        base,
        timeline=_timeline(events, where),
        instruction_seconds=total / per,
        busy=(total / per) / base.step_seconds.median if base.step_seconds.median > 0 else None,
        by_instruction=by_instruction,
        by_line=_by_line(ranked, seconds, runs, where, total, per),
        collectives=_collectives(report, seconds, runs, per),
    )


def _timeline(events: list[TraceEvent], where: dict[str, UserLine]) -> tuple[Span, ...]:
    """The step whose span is the median's, on the first device, its instructions in the
    order they began (at most :data:`TIMELINE_SPANS`)."""
    device = min((e.device for e in events), default="")
    runs: dict[int | None, list[TraceEvent]] = defaultdict(list)
    for event in events:
        if event.device == device:
            runs[event.run].append(event)
    if not runs:
        return ()
    spans = sorted(runs.values(), key=_span)
    chosen = sorted(spans[len(spans) // 2], key=lambda e: e.start)[:TIMELINE_SPANS]
    began = chosen[0].start
    return tuple(
        Span(e.start - began, e.seconds, e.instruction, where[e.instruction].file,
             where[e.instruction].line, where[e.instruction].library_file,
             where[e.instruction].library_line)
        for e in chosen
    )  # fmt: skip


def _span(events: list[TraceEvent]) -> float:
    """From the first event's start to the last one's end."""
    return max(e.start + e.seconds for e in events) - min(e.start for e in events)


def recorded_profile(
    report: Report, program_text: str, events: list[TraceEvent] | str, calls: int
) -> Profile:
    """The first ``calls`` runs of a recorded program (after the first, which follows its
    compile) in a trace of the user's own run (``record --profile N``): ``events`` are its
    module's, of this executable alone, or a line saying why there are none."""
    platform, kind, devices = report.platform or "", None, max(1, report.num_devices)
    if isinstance(events, str):
        return Profile(0, 1, StepSeconds(0.0, 0.0, 0.0), platform, kind, devices, None, None,
                       recorded=True, unread=events)  # fmt: skip
    runs: dict[int | None, list[TraceEvent]] = defaultdict(list)
    for event in events:
        runs[event.run].append(event)
    ordered = sorted(runs.values(), key=lambda run: min(e.start for e in run))
    kept = ordered[1 : calls + 1]
    if not kept:
        return Profile(0, 1, StepSeconds(0.0, 0.0, 0.0), platform, kind, devices, None, None,
                       recorded=True, unread="the run called it once only, the call that "
                       "followed its compile")  # fmt: skip
    seconds = [_span(run) for run in kept]
    step = StepSeconds(statistics.median(seconds), min(seconds), max(seconds))
    flops = report.compiled.flops if report.compiled is not None else None
    base = Profile(
        len(kept), 1, step, platform, kind, devices, None, None,
        flops_per_second=flops / step.median if flops is not None and step.median > 0 else None,
        recorded=True,
    )  # fmt: skip
    chosen = [event for run in kept for event in run]
    return _joined(base, chosen, parse(program_text), report)


def _by_line(
    ranked: list[str],
    seconds: dict[str, float],
    runs: dict[str, int],
    where: dict[str, UserLine],
    total: float,
    per: int,
) -> tuple[LineTime, ...]:
    lines: dict[UserLine, list[str]] = defaultdict(list)
    for name in ranked:
        lines[where[name]].append(name)
    found = [
        LineTime(
            at.file, at.line, sum(seconds[n] for n in names) / per,
            _share(sum(seconds[n] for n in names), total), tuple(names[:MAX_INSTRUCTIONS_PER_LINE]),
            round(sum(runs[n] for n in names) / per), at.library_file, at.library_line,
        )
        for at, names in lines.items()
    ]  # fmt: skip
    return tuple(sorted(found, key=lambda line: -line.seconds))


_HEAVY = ("dot", "convolution", "custom-call")
"""What a fusion's time is put on first: its matrix products and kernels."""


def _line(module: HloText, name: str) -> UserLine:
    """The user's line of instruction ``name``; for a fusion or call, that of its costliest
    operation inside (a matrix product or kernel, else its root, else the first with a
    line), where XLA wrote the fusion's own metadata from its root alone."""
    instruction = module.instructions.get(name)
    if instruction is None:
        return UserLine(None, None)
    inside = _inside(module, instruction)
    heavy = [i for i in inside if i.opcode in _HEAVY]
    for candidate in [*heavy, instruction, *reversed(inside)]:
        found = module.located(candidate)
        if found.file is not None or found.library_file is not None:
            return found
    return UserLine(None, None)


def _inside(module: HloText, instruction: Instruction, depth: int = 0) -> list[Instruction]:
    """The instructions of the computations ``instruction`` calls, nested calls included
    (a few levels), in order."""
    if depth > 3:
        return []
    found: list[Instruction] = []
    for computation in instruction.called():
        for inner in module.instructions.values():
            if inner.computation == computation:
                found.append(inner)
                found += _inside(module, inner, depth + 1)
    return found


def _collectives(
    report: Report, seconds: dict[str, float], runs: dict[str, int], per: int
) -> tuple[CollectiveTime, ...]:
    compiled = report.compiled
    if compiled is None or not compiled.collectives:
        return ()
    found = []
    for collective in compiled.collectives:
        names = _names(collective)
        took = sum(seconds.get(n, 0.0) for n in names) / per
        count = max((runs.get(n, 0) for n in names), default=0) / per
        rate = collective.bytes * count / took if took > 0 else None
        found.append(CollectiveTime(collective.instruction, collective.kind, collective.axes,
                                    collective.operand_paths, took, collective.bytes,
                                    rate))  # fmt: skip
    return tuple(sorted(found, key=lambda c: -c.seconds))


def _names(collective: Collective) -> tuple[str, ...]:
    """The instructions a collective is measured by: an asynchronous pair's start and done."""
    name = collective.instruction
    if "-start" in name:  # all-reduce-start.1 and all-reduce-done.1
        return name, name.replace("-start", "-done", 1)
    return (name,)


def _share(part: float, total: float) -> float:
    return part / total if total > 0 else 0.0
