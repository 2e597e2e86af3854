"""A record folder at a glance (``jxinspect show FOLDER``): one row per recorded function,
then what the run lowered but did not record. Plain aligned text, or JSON."""

from __future__ import annotations

import dataclasses
import shlex
from collections import Counter
from typing import Any

from jxinspect.core import codec
from jxinspect.core.model import Report
from jxinspect.core.recompiles import by_function
from jxinspect.core.recording import Index, Recording, ShownEntry, ShownRecording
from jxinspect.core.vocabulary import STATUSES
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.table import plain_table
from jxinspect.render.record import recompiles

COLUMNS = ("function", "folder", "signature", "stage", "inputs", "outputs", "findings", "lowered",
           "replay", "source")  # fmt: skip


def _statuses(leaves: Any) -> str:
    counts = Counter(leaf.status for leaf in leaves)
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]) or "none"


def _findings(report: Report) -> str:
    codes = Counter(f.code for f in report.findings)
    return ", ".join(f"{code}×{n}" if n > 1 else code for code, n in sorted(codes.items()))


def run_line(index: Index) -> str:
    """How the run ended, in words."""
    if index.stopped_after is not None:
        return f"stopped after `{index.stopped_after}` was recorded, as asked"
    if index.exit_code is None:
        return "the run did not finish (it is running, or jxinspect record was killed)"
    if index.exit_code < 0:
        return f"the run was killed by signal {-index.exit_code}: the recording is incomplete"
    if index.exit_code:
        return f"the run exited with {index.exit_code}: the recording may be incomplete"
    return "the run exited with 0"


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
            f"  {failure.count}× `{esc(failure.function or '?')}`: {esc(failure.error)}"
            for failure in index.failures
        )
    for entry in index.functions:
        if entry.lowerings > 1:
            lines.append(f"`{esc(entry.name)}` ({entry.folder}): the same program was traced "
                         f"and lowered {entry.lowerings} times, each a miss of JAX's cache "
                         "(a new jit object or function per call, or cleared caches)")  # fmt: skip
    names = Counter(e.name for e in index.functions)
    for name, count in names.items():
        if count > 1:
            folders = ", ".join(e.folder for e in index.functions if e.name == name)
            lines.append(f"`{esc(name)}` was lowered as {count} programs ({folders}): other "
                         "input types, static arguments or closed-over values; each is a new "
                         "trace and compile")  # fmt: skip
    return lines


_BRIEF = 36
"""How much of a signature a row shows (the index holds it whole)."""


def _brief(text: str) -> str:
    return text if len(text) <= _BRIEF else text[: _BRIEF - 1] + "…"


def render(recording: Recording) -> str:
    """The summary as plain text."""
    folder, index, reports = recording.folder, recording.index, recording.reports
    command = shlex.join(index.command)
    head = [
        f"recording: {esc(folder)}",
        f"command:   {esc(command)}",
        f"jax:       {index.jax_version or 'not recorded'}",
        f"run:       {run_line(index)}",
        "",
    ]
    rows: list[tuple[str, ...]] = [
        (
            entry.name,
            entry.folder,
            esc(_brief(entry.input_types)),
            entry.stage,
            _statuses(report.inputs),
            _statuses(report.outputs),
            _findings(report),
            f"{entry.lowerings}×",
            "yes" if problem is None else "no",
            entry.source or "",
        )
        for entry, report, problem in reports
    ]
    body = plain_table(COLUMNS, rows) if rows else ["no functions recorded"]
    notes = not_recorded(index)
    if any(problem is not None for _, _, problem in reports):
        notes.append("replay: `jxinspect lower FILE:FUNCTION --args-from-record FOLDER/NAME`; "
                     "a `no` says why in NAME/call.json")  # fmt: skip
    tail = ["", *(f"note: {line}" for line in notes)] if notes else []
    again = recompiles.render_text(list(recording.compiles), recording.compiles_dropped)
    return "\n".join([*head, *body, *again, *tail]) + "\n"


def render_json(recording: Recording) -> str:
    """The summary as JSON: the index, with each function's replay and leaf counts, what
    was not recorded, and what compiled again."""
    index = recording.index
    kept = {f.name: getattr(index, f.name) for f in dataclasses.fields(Index) if f.init}
    functions = [
        ShownEntry(
            **vars(entry),
            replay=problem is None,
            replay_problem=problem,
            inputs=dict(Counter(leaf.status for leaf in report.inputs)),
            outputs=dict(Counter(leaf.status for leaf in report.outputs)),
            finding_codes=sorted({f.code for f in report.findings}),
        )
        for entry, report, problem in recording.reports
    ]
    shown = ShownRecording(
        **{**kept, "functions": functions},
        folder=recording.folder,
        notes=not_recorded(index),
        recompiles=by_function(recording.compiles),
        compiles_dropped=recording.compiles_dropped,
    )
    return codec.dumps(shown)
