"""What the supervisor and its workers say to each other: plain, picklable data.

A run sends a worker ``(job, devices)`` pairs (``job`` is ``None`` to only warm up, the
message ``None`` ends the session) and gets back one :class:`Outcome` per job, after a
first ``"ready"``; an outcome's report crosses as the codec's JSON text and is read back,
typed, by the supervisor. The same messages serve one-run workers and kept ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from jxinspect.core import codec
from jxinspect.core.errors import internal_error
from jxinspect.core.model import Report
from jxinspect.core.vocabulary import INTERNAL, INTERRUPTED, ErrorKind
from jxinspect.project.resolve import Resolved


@dataclass(frozen=True)
class Job:
    """One target to stage; plain data, so it can be sent to a worker process."""

    name: str
    resolved: Resolved
    """The target (an absolute path for files) and its layered options."""
    compile: bool
    group: str
    """The module's source file: a worker that imported it gets its other targets."""
    memory: bool = False
    """Also the buffers live at the peak (compiled, under a ``peak_per_device`` budget)."""
    why: bool = False
    """Also where each sharding came from (``why: true``: Shardy's record, read from a
    second compile in a child)."""


@dataclass(frozen=True)
class Outcome:
    """What staging one target gave: its report (unjudged: the run judges it), or why
    there is none."""

    report: Report | None
    """Read by the supervisor from :attr:`text` (:func:`received`), or from the cache."""
    error: str | None = None
    kind: ErrorKind | None = None
    """Whose fault the failure is; ``None`` when there is a report."""
    needs_devices: int | None = None
    """The target needs more CPU devices than the worker's backend started with."""
    seconds: float | None = None
    """How long staging took in the worker (``None`` when it was not staged)."""
    cached: bool = False
    """Read from the cache of an earlier run, not staged."""
    text: str | None = None
    """The report as the codec's JSON line: what a worker sends (a string crosses the
    pipe in milliseconds, a report's thousands of objects do not) and the cache keeps."""


NOT_STAGED = Outcome(None, "not staged: the run was interrupted (Ctrl-C)", INTERRUPTED)
"""The outcome of a target Ctrl-C stopped before it reported."""


def sent(report: Report) -> Outcome:
    """A worker's outcome of a staged target: its report as text."""
    return Outcome(None, text=codec.line(report))


def received(outcome: Outcome, name: str) -> Outcome:
    """A worker's outcome as the run keeps it: the report read back, typed, from its
    text (one that is not a report, which only a jxinspect bug can send, is an internal
    error)."""
    if outcome.text is None or outcome.report is not None:
        return outcome
    try:
        report = codec.decode(outcome.text, Report, source=f"the worker's report of {name}")
    except codec.DecodeError as err:
        return Outcome(None, internal_error(err), INTERNAL, seconds=outcome.seconds)
    return replace(outcome, report=report)
