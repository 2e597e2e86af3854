"""What a compiled program's steps took, measured (``jxinspect profile``): the profiler's
own events of N steps, joined to the compiled program's instructions, then to the user's
lines and the pytree paths the compiled stage already names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepSeconds:
    """Wall seconds of one step (the call until its outputs are ready), over the steps."""

    median: float
    min: float
    max: float


@dataclass(frozen=True)
class LineTime:
    """The time of the instructions one line of the user's made, per step."""

    file: str | None
    line: int | None
    """The innermost frame in the user's files; ``None``: no frame of the user's known."""
    seconds: float
    """Per step, summed over the devices' events and divided by the devices."""
    share: float
    """Of all the program's measured instruction time."""
    instructions: tuple[str, ...]
    """The instructions it is made of (the most time first)."""
    count: int
    """Instruction runs per step and device."""
    library_file: str | None = None
    library_line: int | None = None
    """The innermost frame where it is a library's (Flax's ``linear.py``)."""


@dataclass(frozen=True)
class InstructionTime:
    """One instruction of the compiled program, measured per step."""

    instruction: str
    seconds: float
    share: float
    count: int
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class CollectiveTime:
    """One collective of the compiled program, measured per step."""

    instruction: str
    kind: str
    axes: tuple[str, ...] | None
    moves: tuple[str, ...]
    """The argument and result paths whose data it moves (as ``--compile`` names them)."""
    seconds: float
    bytes: int
    """Operand bytes per device and run, as the compiled program says."""
    bytes_per_second: float | None
    """``bytes`` × runs over ``seconds``; ``None`` where no time was measured."""


@dataclass(frozen=True)
class Span:
    """One instruction's run within one measured step, on the first device (a timeline)."""

    start: float
    """Seconds from the step's first instruction's start."""
    seconds: float
    instruction: str
    file: str | None = None
    line: int | None = None
    """Its user's line, as :class:`LineTime` places it (``None``: none known)."""
    library_file: str | None = None
    library_line: int | None = None


@dataclass(frozen=True)
class Profile:
    """N steps of the compiled program, measured under JAX's profiler."""

    steps: int
    warmup: int
    step_seconds: StepSeconds
    platform: str
    device_kind: str | None
    devices: int
    """Devices the program ran on (each one's events are counted)."""
    instruction_seconds: float | None
    """The instructions' measured time per step and device; ``None``: no events read."""
    busy: float | None
    """``instruction_seconds`` over the median step: how much of a step the device spent
    in the program's instructions (over 1 where a CPU runs several at once)."""
    by_line: tuple[LineTime, ...] = ()
    by_instruction: tuple[InstructionTime, ...] = ()
    collectives: tuple[CollectiveTime, ...] = ()
    flops_per_second: float | None = None
    """XLA's cost analysis FLOPs per device over the median step; ``None``: unknown."""
    trace: str | None = None
    """The folder the profiler's trace was kept in (XProf's layout), ``-o``."""
    unread: str | None = None
    """Why no instruction was measured (the profiler unavailable, or no events)."""
    timeline: tuple[Span, ...] = ()
    """One step (the one whose span is the median's) on the first device, its
    instructions in the order they began (at most ``TIMELINE_SPANS``; the rest left off)."""
    recorded: bool = False
    """The run's own calls (``record --profile N``), not random inputs: ``steps`` counts
    the calls measured, ``warmup`` the first calls left out (the first after the compile),
    and ``step_seconds`` is each call's span in the trace (its first instruction's start to
    its last one's end, over the devices), the call's own wall time unknown."""


TIMELINE_SPANS = 2000
"""The most instruction runs a :attr:`Profile.timeline` holds."""
