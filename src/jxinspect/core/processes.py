"""A recording of a run of several JAX processes at a glance (``jxinspect show FOLDER``):
per function, each process's program identities, whether they all lowered the same
programs, and the findings (JX403) where they did not."""

from __future__ import annotations

from dataclasses import dataclass

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding


@dataclass(frozen=True)
class ProcessRun:
    """One process of the run, as its folder says."""

    process: int
    folder: str
    functions: int
    """How many programs it recorded."""
    exit_code: int | None
    """How it ended (``-N``: signal N; ``None``: it did not finish)."""


@dataclass(frozen=True)
class FunctionAcross:
    """One function across the processes: the programs each lowered of it."""

    function: str
    source: str | None
    programs: dict[int, tuple[str, ...]]
    """Each process's program identities (SHA-256) of the function, in the order it
    lowered them, by process index (a process that lowered it once has one)."""
    missing: tuple[int, ...] = ()
    """Processes that did not lower it at all."""
    comparison: ProgramComparison | None = None
    """Where the processes lowered different programs: the first process that lowered
    the programs most did, against the first that did not (its first program the other
    lacks against the other's first that it lacks)."""

    @property
    def same(self) -> bool:
        """Every process that lowered it lowered the same programs."""
        return len({frozenset(found) for found in self.programs.values()}) <= 1


@dataclass(frozen=True)
class ProcessesSummary:
    """What ``show`` says of a recording of several processes."""

    folder: str
    processes: int
    """How many process folders the recording holds."""
    runs: tuple[ProcessRun, ...]
    functions: tuple[FunctionAcross, ...]
    findings: tuple[Finding, ...] = ()
