"""A recording of a run of several JAX processes at a glance (``jxinspect show FOLDER``):
per function, each process's program identities, whether they all lowered the same
programs, and the findings (JX403) where they did not."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding
from jxinspect.core.recording import GuardSummary

SCHEMA: Literal["jxinspect.processes/1"] = "jxinspect.processes/1"
"""``show FOLDER --format json`` of a recording of several processes."""


@dataclass(frozen=True)
class ProcessRun:
    """One process of the run, as its folder says."""

    process: int
    folder: str
    functions: int
    """How many programs it recorded."""
    exit_code: int | None
    """How it ended (``-N``: signal N; ``None``: it did not finish)."""
    guard: GuardSummary | None = None
    """What the guard checked in it (``record --guard``; ``None``: not guarded)."""


@dataclass(frozen=True)
class ProcessGroup:
    """The processes that lowered the same programs of one function."""

    programs: tuple[str, ...]
    """The program identities (SHA-256), in the order the first of them lowered them."""
    processes: tuple[int, ...]
    """Their process indices, in order."""


@dataclass(frozen=True)
class FunctionAcross:
    """One function across the processes: the programs each lowered of it."""

    function: str
    source: str | None
    programs: tuple[ProcessGroup, ...]
    """The processes by the programs they lowered, the most processes first (one group:
    every process that lowered it lowered the same programs)."""
    missing: tuple[int, ...] = ()
    """Processes that did not lower it at all."""
    comparison: ProgramComparison | None = None
    """Where the processes lowered different programs: the first process of the largest
    group against the first of the next, by the first program of each that the other
    lacks (where one lacks none, its first)."""

    @property
    def same(self) -> bool:
        """Every process that lowered it lowered the same programs."""
        return len(self.programs) <= 1


@dataclass(frozen=True)
class ProcessesSummary:
    """What ``show`` says of a recording of several processes."""

    schema: Literal["jxinspect.processes/1"] = field(init=False, default_factory=lambda: SCHEMA)
    folder: str
    processes: int
    """How many process folders the recording holds."""
    runs: tuple[ProcessRun, ...]
    functions: tuple[FunctionAcross, ...]
    findings: tuple[Finding, ...] = ()
