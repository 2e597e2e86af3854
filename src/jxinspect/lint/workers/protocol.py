"""What the supervisor and its workers say to each other: plain, picklable data.

A run sends a worker ``(job, devices)`` pairs (``job`` is ``None`` to only warm up, the
message ``None`` ends the session) and gets back one :class:`Outcome` per job, after a
first ``"ready"``. The same messages serve one-run workers and kept ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jxinspect.core.settings import Settings
from jxinspect.core.vocabulary import ErrorKind
from jxinspect.project.resolve import Resolved


@dataclass(frozen=True)
class Job:
    """One target to stage; plain data, so it can be sent to a worker process."""

    name: str
    resolved: Resolved
    """The target (an absolute path for files) and its layered options."""
    settings: Settings
    compile: bool
    group: str
    """The module's source file: a worker that imported it gets its other targets."""


@dataclass(frozen=True)
class Outcome:
    """What staging one target gave: a report (as its JSON dict) or why there is none."""

    report: dict[str, Any] | None
    error: str | None = None
    kind: ErrorKind | None = None
    """``user-code``, ``usage``, ``internal``, ``timeout`` or ``interrupted``."""
    needs_devices: int | None = None
    """The target needs more CPU devices than the worker's backend started with."""
    seconds: float | None = None
    """How long staging took in the worker (``None`` when it was not staged)."""
    cached: bool = False
    """Read from the cache of an earlier run, not staged."""
