"""A recording of several JAX processes at a glance (``jxinspect show FOLDER``): the
processes, then one row per function with its program on each process, then the
findings (JX403) where the processes lowered different programs. Text, or JSON."""

from __future__ import annotations

from collections import defaultdict

from jxinspect.core import codec
from jxinspect.core.processes import FunctionAcross, ProcessesSummary
from jxinspect.render.common.guard import guard_said
from jxinspect.render.common.source import shown_text
from jxinspect.render.common.table import plain_table

COLUMNS = ("function", "programs", "source")


def ranges(numbers: list[int]) -> str:
    """``0-3, 5, 7-9``: process indices, sorted, as ranges."""
    parts: list[str] = []
    start = previous = None
    for number in sorted(numbers):
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = number
    if start is not None:
        parts.append(str(start) if start == previous else f"{start}-{previous}")
    return ", ".join(parts)


def programs(function: FunctionAcross) -> str:
    """``same on all: 29232baf43e1``, or each group of processes and its programs, the
    most processes first."""
    if len(function.programs) == 1:
        return f"same on all: {_short(function.programs[0].programs)}"
    return "; ".join(
        f"{_processes(list(g.processes))}: {_short(g.programs)}" for g in function.programs
    )


def _short(programs: tuple[str, ...]) -> str:
    return ", ".join(p[:12] or "no identity" for p in programs)


def _processes(numbers: list[int]) -> str:
    return f"process{'es' if len(numbers) > 1 else ''} {ranges(numbers)}"


def _exit(code: int | None) -> str:
    if code is None:
        return "did not finish"
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"


def _guarded(summary: ProcessesSummary) -> list[str]:
    """What the guard checked (``record --guard``): the programs each process found the
    same on all, and why it stopped the run where it did."""
    guarded = [(run.process, run.guard) for run in summary.runs if run.guard is not None]
    if not guarded:
        return []
    return [f"guard: {shown_text(line)}" for line in guard_said(guarded, summary.processes)]


def render(summary: ProcessesSummary) -> str:
    """The summary as plain text."""
    head = [f"recording: {shown_text(summary.folder)} ({summary.processes} processes)"]
    by_end: dict[str, list[int]] = defaultdict(list)
    for run in summary.runs:
        by_end[_exit(run.exit_code)].append(run.process)
    head += [f"  {_processes(p)}: {end}" for end, p in sorted(by_end.items())]
    head += _guarded(summary)
    rows: list[tuple[str, ...]] = [
        (f.function, programs(f), shown_text(f.source or "")) for f in summary.functions
    ]
    body = plain_table(COLUMNS, rows) if rows else ["no functions recorded"]
    notes = [
        f"note: `{shown_text(f.function)}` was not lowered by {_processes(list(f.missing))}"
        for f in summary.functions
        if f.missing
    ]
    same = sum(f.same for f in summary.functions)
    verdict = (
        f"{same} of {len(summary.functions)} functions lowered the same program on every process"
    )
    findings = [f"{f.severity} {f.code} {shown_text(f.message)}" for f in summary.findings]
    return "\n".join([*head, "", *body, "", verdict, *findings, *notes]) + "\n"


def render_json(summary: ProcessesSummary) -> str:
    """The summary as JSON: ``processes``, each function's ``identities`` by process."""
    return codec.dumps(summary) + "\n"
