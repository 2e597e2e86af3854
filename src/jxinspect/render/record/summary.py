"""A record folder at a glance (``jxinspect show FOLDER``): one row per recorded function,
then what the run lowered but did not record. Plain aligned text, or JSON."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence

from jxinspect.core import codec
from jxinspect.core.recompiles import Compile, by_function
from jxinspect.core.recording import (
    Index,
    Recording,
    ShownEntry,
    ShownRecording,
    Tally,
    differences,
    programs_by_name,
)
from jxinspect.core.vocabulary import STATUSES, Status
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.source import shown_text
from jxinspect.render.common.table import plain_table
from jxinspect.render.record import recompiles

COLUMNS = ("function", "folder", "signature", "stage", "inputs", "outputs", "findings", "lowered",
           "replay", "source")  # fmt: skip


def _statuses(counts: dict[Status, int]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s)) or "none"


def _findings(tally: Tally) -> str:
    codes = sorted(tally.codes.items())
    return ", ".join(f"{code}×{n}" if n > 1 else code for code, n in codes)


def run_line(index: Index) -> str:
    """How the run ended, in words."""
    if index.stopped_after is not None:
        return f"stopped after `{shown_text(index.stopped_after)}` was recorded, as asked"
    if index.exit_code is None:
        return "the run did not finish (it is running, or jxinspect record was killed)"
    if index.exit_code < 0:
        return f"the run was killed by signal {-index.exit_code}: the recording is incomplete"
    if index.exit_code:
        return f"the run exited with {index.exit_code}: the recording may be incomplete"
    return "the run exited with 0"


def compile_line(index: Index, compiles: Sequence[Compile], dropped: int = 0) -> str | None:
    """Where the run's time went to compiles (JAX's duration events: trace, lower and
    backend compile), the user's functions' and JAX's own with the lines that made most
    of them; ``None`` where nothing was compiled."""
    count = len(compiles) + dropped
    if not count and not index.internal:
        return None
    yours = sum(c.seconds for c in compiles)
    of_run = f" of the run's {index.run_s:.1f} s" if index.run_s is not None else ""
    parts = [f"{count} compile{'s' if count != 1 else ''} of your functions {yours:.1f} s"]
    if index.internal:
        most = sorted(index.internal_lines.items(), key=lambda item: (-item[1], item[0]))[:3]
        at = ", ".join(f"{shown_text(line)} {n}×" for line, n in most)
        parts.append(
            f"{index.internal} of JAX's own {index.internal_s:.1f} s"
            + (f", most at {at}" if at else "")
        )
    total = yours + index.internal_s
    return f"compiling took {total:.1f} s{of_run}: " + "; ".join(parts)


def not_recorded(index: Index) -> list[str]:
    """What the run lowered that is not in the folder, and retracing worth a look."""
    lines = []
    if index.internal:
        lines.append(f"{index.internal} computations of JAX's own (eager operations, jnp "
                     "functions) were lowered and not recorded")  # fmt: skip
    if index.not_selected:
        lines.append(f"{index.not_selected} lowerings of functions left out by --only")
    if index.over_limit:
        lines.append(f"{index.over_limit} lowerings after --max-functions was reached "
                     "were not recorded")  # fmt: skip
    if index.other_processes:
        lines.append(f"{index.other_lowerings} lowerings of functions of yours in "
                     f"{index.other_processes} other processes of the run were not recorded: "
                     "only the first process that stages one is (record one process, e.g. "
                     "pytest without -n)")  # fmt: skip
    if index.failed:
        lines.append(f"{index.failed} lowerings could not be recorded (the run went on "
                     "without their reports):")  # fmt: skip
        lines.extend(
            f"  {failure.count}× `{shown_text(failure.function or '?')}`: "
            f"{shown_text(failure.error)}"
            for failure in index.failures
        )
    for entry in index.functions:
        if entry.lowerings > 1:
            lines.append(f"`{shown_text(entry.name)}` ({shown_text(entry.folder)}): the same "
                         "program was traced "
                         f"and lowered {entry.lowerings} times, each a miss of JAX's cache "
                         "(a new jit object or function per call, or cleared caches)")  # fmt: skip
    for name, entries in programs_by_name(index.functions).items():
        folders = [entry.folder for entry in entries]
        if len(folders) > 1:
            count, listed = len(folders), shown_text(", ".join(folders))
            lines.append(f"`{shown_text(name)}` was lowered as {count} programs ({listed}): other "
                         "input types, static arguments or closed-over values; each is a new "
                         "trace and compile")  # fmt: skip
    return lines


_BRIEF = 36
"""How much of a signature a row shows (the index holds it whole)."""


def _brief(text: str) -> str:
    return text if len(text) <= _BRIEF else text[: _BRIEF - 1] + "…"


def signatures(recording: Recording) -> list[str]:
    """Each row's signature: for a function recorded as several programs, what its
    program holds where they differ; for the rest, the input types (briefly)."""
    differ = differences([(entry, tally) for entry, tally, _ in recording.reports])
    return [differ.get(entry.folder) or _brief(entry.input_types)
            for entry, _, _ in recording.reports]  # fmt: skip


def render(recording: Recording) -> str:
    """The summary as plain text."""
    folder, index, reports = recording.folder, recording.index, recording.reports
    command = shlex.join(index.command)
    head = [
        f"recording: {shown_text(folder)}",
        f"command:   {shown_text(command)}",
        f"jax:       {shown_text(index.jax_version or 'not recorded')}",
        f"run:       {run_line(index)}",
    ]
    compiled = compile_line(index, recording.compiles, recording.compiles_dropped)
    head += [f"compiles:  {compiled}"] if compiled else []
    head.append("")
    rows: list[tuple[str, ...]] = [
        (
            entry.name,
            entry.folder,
            shown_text(signature),
            entry.stage,
            _statuses(tally.inputs),
            _statuses(tally.outputs),
            _findings(tally),
            f"{entry.lowerings}×",
            "yes" if problem is None else "no",
            shown_text(entry.source or ""),
        )
        for (entry, tally, problem), signature in zip(reports, signatures(recording))
    ]
    body = plain_table(COLUMNS, rows) if rows else ["no functions recorded"]
    notes = not_recorded(index)
    if any(problem is not None for _, _, problem in reports):
        notes.append("replay: `jxinspect lower FILE:FUNCTION --args-from-record FOLDER/NAME`; "
                     "a `no` says why in NAME/call.json")  # fmt: skip
    tail = ["", *(f"note: {line}" for line in notes)] if notes else []
    again = recompiles.render_text(list(recording.compiles), recording.compiles_dropped)
    cached = recompiles.cache_text(list(recording.compiles))
    measured = _measured(recording)
    return "\n".join([*head, *body, *again, *cached, *measured, *tail]) + "\n"


def _measured(recording: Recording) -> list[str]:
    """``record --profile N``: each measured function's calls, by line and collective."""
    from jxinspect.render.report import profile_view

    lines: list[str] = []
    for entry, tally, _ in recording.reports:
        if tally.measured is None:
            continue
        lines += ["", f"measured: {esc(entry.name)} ({esc(entry.folder)})"]
        lines += ["  " + line if line else "" for line in
                  profile_view.render(tally.measured).splitlines()]  # fmt: skip
    return lines


def render_json(recording: Recording) -> str:
    """The summary as JSON: the index, with each function's replay and leaf counts, what
    was not recorded, and what compiled again."""
    index = recording.index
    kept = {f.name: getattr(index, f.name) for f in dataclasses.fields(Index) if f.init}
    differ = differences([(entry, tally) for entry, tally, _ in recording.reports])
    functions = [
        ShownEntry(
            **{**vars(entry), "findings": sum(tally.codes.values())},  # as judged when read
            replay=problem is None,
            replay_problem=problem,
            inputs=dict(tally.inputs),
            outputs=dict(tally.outputs),
            finding_codes=sorted(tally.codes),
            differs=differ.get(entry.folder),
            profile=tally.measured,
        )
        for entry, tally, problem in recording.reports
    ]
    shown = ShownRecording(
        **{**kept, "functions": functions},
        folder=recording.folder,
        notes=not_recorded(index),
        recompiles=by_function(recording.compiles),
        compiles_dropped=recording.compiles_dropped,
    )
    return codec.dumps(shown)
