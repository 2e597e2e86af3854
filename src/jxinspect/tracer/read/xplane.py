"""The profiler's trace, read: ``jax.profiler.trace(folder)`` writes
``folder/plugins/profile/<run>/<host>.xplane.pb`` (an ``XSpace``, XProf's layout), decoded
here by the one protobuf reader (:mod:`.xla_protos`) on every release (0.4.35's JAX has no
``jax.profiler.ProfileData``). On CPU each XLA thunk is an event of the host's ``tf_XLA…``
lines carrying the stats ``hlo_module`` (``jit_f``), ``hlo_op`` (the instruction, named as
in ``compiled.as_text()``), ``run_id`` (one per execution) and ``device_ordinal``. A
TPU's device plane (``/device:TPU:0``, read on a v5e chip with libtpu 0.0.42.1) says it
otherwise: its line ``XLA Modules`` holds one event per execution, named ``jit_f(PROGRAM
ID)``, with its ``run_id``; its line ``XLA Ops`` one event per instruction run, named by the
instruction's text (``%fusion.1 = f32[] fusion(...)``), its metadata's ``program_id``
naming the module; ``Async XLA Ops`` spans an asynchronous pair (start to done), which its
two instructions already hold."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jxinspect.core.artifacts import read_bytes
from jxinspect.tracer.read import xla_protos

TRACE_LIMIT = 1 << 30
"""The largest trace file read (a few steps of a large program are tens of MB)."""


@dataclass(frozen=True)
class TraceEvent:
    """One instruction's run, as the profiler recorded it."""

    module: str
    instruction: str
    seconds: float
    run: int | None
    """The execution it belongs to (``run_id``); ``None`` where the event says none."""
    device: str
    """Which device ran it (``device_ordinal``, else the plane and line)."""
    start: float = 0.0
    """When it began, in seconds on the trace's clock (its line's start and its offset)."""
    program: int | None = None
    """The executable it belongs to (``program_id``); ``None`` where the event says none."""


def newest_trace(folder: Path) -> Path | None:
    """The newest ``HOST.xplane.pb`` under ``folder``'s XProf layout."""
    found = sorted(folder.glob("plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def trace_events(folder: Path, module: str) -> list[TraceEvent] | str:
    """The events of ``module``'s instructions in the newest trace under ``folder``; a
    line saying why where none could be read."""
    found = events_by_module(folder, frozenset((module,)))
    return found if isinstance(found, str) else found[module]


def events_by_module(
    folder: Path, modules: frozenset[str]
) -> dict[str, list[TraceEvent] | str] | str:
    """The events of each of ``modules``' instructions in the newest trace under
    ``folder`` (the file read once), or a line saying why for a module that has none; a
    line saying why where the trace could not be read."""
    path = newest_trace(folder)
    if path is None:
        return f"the profiler wrote no trace under {folder}"
    try:
        space = xla_protos.decode("XSpace", read_bytes(path, limit=TRACE_LIMIT, inside=folder))
    except Exception as err:  # a trace this reader does not know: unknown, never empty
        return f"the profiler's trace was not read ({type(err).__name__}: {err})"
    found: dict[str, list[TraceEvent]] = {module: [] for module in modules}
    for plane in space.planes:
        for event in _plane_events(plane, modules):
            found[event.module].append(event)
    return {
        module: events or f"the profiler's trace holds no event of {module}'s instructions"
        for module, events in found.items()
    }


def _plane_events(plane: Any, modules: frozenset[str]) -> list[TraceEvent]:
    stat_names = {entry.key: entry.value.name for entry in plane.stat_metadata}
    if any(line.name == "XLA Ops" for line in plane.lines):
        return _device_plane_events(plane, modules, stat_names)
    says_module = {key for key, name in stat_names.items() if name == "hlo_module"}
    if not says_module:  # a plane of no XLA program (the metadata, a Python thread's)
        return []
    metadata = {entry.key: entry.value for entry in plane.event_metadata}
    described: dict[int, dict[str, object]] = {}  # each event metadata's stats, read once
    found = []
    for line in plane.lines:
        for event in line.events:
            key = event.metadata_id
            base = described.get(key)
            if base is None:
                shared = metadata.get(key)
                base = described[key] = _stats(shared.stats, stat_names) if shared else {}
            if "hlo_module" not in base and not any(
                stat.metadata_id in says_module for stat in event.stats
            ):
                continue  # no program's event (a thread pool's, the runtime's)
            stats = {**base, **_stats(event.stats, stat_names)}
            module = stats.get("hlo_module")
            if module not in modules or "hlo_op" not in stats:
                continue
            run, program = stats.get("run_id"), stats.get("program_id")
            device = stats.get("device_ordinal", f"{plane.name}/{line.name}")
            start = line.timestamp_ns / 1e9 + event.offset_ps / 1e12
            program = program if isinstance(program, int) else None
            found.append(TraceEvent(str(module), str(stats["hlo_op"]), event.duration_ps / 1e12,
                                    int(run) if isinstance(run, int) else None, str(device),
                                    start, program))  # fmt: skip
    return found


def _stats(stats: Any, names: dict[int, str]) -> dict[str, object]:
    """Each stat by its name, its value as written (a reference: the name it refers to).
    The fields a stat sets are listed in one call (``ListFields``: the profiler writes
    tens of thousands of events)."""
    found: dict[str, object] = {}
    for stat in stats:
        name: str | None = None
        kind, value = None, None
        for described, given in stat.ListFields():
            if described.name == "metadata_id":
                name = names.get(given)
            else:
                kind, value = described.name, given
        if name is None and kind is not None:
            name = names.get(0)  # a metadata id of 0, unlisted where written as default
        if name is None or kind is None:
            continue
        found[name] = names.get(value, "") if kind == "ref_value" else value  # type: ignore[arg-type]
    return found


def _device_plane_events(
    plane: Any, modules: frozenset[str], stat_names: dict[int, str]
) -> list[TraceEvent]:
    """A TPU device plane's instruction runs: each ``XLA Ops`` event, of the module its
    metadata's ``program_id`` names (the ``XLA Modules`` events' names), in the execution
    whose ``XLA Modules`` event spans it."""
    metadata = {entry.key: entry.value for entry in plane.event_metadata}
    lines = {line.name: line for line in plane.lines}
    programs: dict[int, str] = {}  # program id → module name
    runs: list[tuple[float, float, int | None]] = []  # each execution's start, end, run id
    for event in getattr(lines.get("XLA Modules"), "events", ()):
        named = _MODULE_RUN.fullmatch(metadata[event.metadata_id].name)
        if named is None:
            continue
        programs[int(named.group(2))] = named.group(1)
        start = lines["XLA Modules"].timestamp_ns / 1e9 + event.offset_ps / 1e12
        run = _stats(event.stats, stat_names).get("run_id")
        runs.append(
            (start, start + event.duration_ps / 1e12, run if isinstance(run, int) else None)
        )
    runs.sort()
    ops = lines["XLA Ops"]
    described: dict[int, tuple[str, int | None]] = {}
    found = []
    for event in ops.events:
        key = event.metadata_id
        if key not in described:
            shared = metadata.get(key)
            program = _stats(shared.stats, stat_names).get("program_id") if shared else None
            named = _INSTRUCTION.match(shared.name) if shared else None
            described[key] = (
                named.group(1) if named else "",
                program if isinstance(program, int) else None,
            )
        instruction, program = described[key]
        module = programs.get(program) if program is not None else None
        if module not in modules or not instruction:
            continue
        start = ops.timestamp_ns / 1e9 + event.offset_ps / 1e12
        at = bisect.bisect_right(runs, (start, float("inf"), None)) - 1
        run = runs[at][2] if at >= 0 and runs[at][1] >= start else None
        found.append(TraceEvent(str(module), instruction, event.duration_ps / 1e12, run,
                                plane.name, start, program))  # fmt: skip
    return found


_MODULE_RUN = re.compile(r"(.+)\((\d+)\)")
"""An ``XLA Modules`` event's name: the module's, then its program id."""
_INSTRUCTION = re.compile(r"%?([^\s=]+)(?: = |$)")
"""An ``XLA Ops`` event's name: the instruction's text, its name first."""
