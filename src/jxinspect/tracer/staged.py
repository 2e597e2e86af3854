"""What staging produces, as jxinspect's own frozen values (after JAX's ``stages.py``).

    stage.stage_function ─► Lowered | LoweringFailed    (both hold the Traced)
    stage.recorded       ─► Lowered                     (a lowering a real run made)
    stage.compile        ─► Compiled | CompileFailed    (both hold the Lowered)

A tracing error is the user's and is raised (:class:`~jxinspect.core.errors.UserCodeError`);
a lowering (or compiling) error is carried as a value, :class:`LoweringFailed`
(:class:`CompileFailed`), so that the report still says what was traced (lowered).
Each value is frozen: made when its stage is done, then remade with ``replace`` where the
staging step learns more (an adapter's or a split call's leaves and notes). The readers in
:mod:`jxinspect.tracer.read` take these values; this module imports nothing of the tracer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from jxinspect.core.model import StaticArg
from jxinspect.core.vocabulary import Stage

Paths = tuple[list[str | None] | None, list[StaticArg]]
"""The user's path of each flat input (``None``: the callable has no signature to name
them by), and the call's static arguments."""


@dataclass(frozen=True)
class Traced:
    """A traced program: its jaxprs, and how its arguments relate to the user's call."""

    stage: Stage
    jaxpr: Any
    """The top-level ``core.Jaxpr``."""
    names_jaxpr: Any
    """The jaxpr whose debug info names the arguments (pmap's inner one)."""
    donated: tuple[bool, ...]
    """Per flat input: whether it is donated."""
    out_info: Any
    """The result pytree of abstract values (``None`` where JAX keeps none)."""
    wrapped: bool
    """The target was already a staged function; options were not applied."""
    wrapper: str | None = None
    """The library wrapper that staged the target (``nnx.jit``, ``eqx.filter_jit``)."""
    leaves: list[Any] | None = None
    """The objects the program receives, in order, when staging rearranged the call (a
    wrapper, or the array leaves split from the rest); ``None``: the call's own leaves."""
    call: tuple[Any, tuple[Any, ...], dict[str, Any]] | None = None
    """``(function, args, kwargs)`` whose leaves ``leaves`` are, to name them by."""
    notes: tuple[str, ...] = ()
    results: list[str | None] | None = None
    """The user's path of each result when a wrapper rearranged them (``None``: read
    them from ``out_info``); see :attr:`jxinspect.tracer.adapters.adapted.Adapted.results`."""
    declared: tuple[Any, ...] | None = None
    """Where lowering failed, per flat input: the JAX sharding its argument declared
    (``in_shardings``, else a ``ShapeDtypeStruct``'s, as ``f32[8@data]`` makes it), or
    ``None``; shown as the program's own are then unknown (``None``: lowering succeeded,
    or the inputs could not be told apart)."""
    open_outputs: tuple[bool, ...] | None = None
    """Per flat result: ``out_shardings`` gave it ``None``, leaving its layout to the
    compiler on purpose (``None``: no ``out_shardings`` said so)."""
    recorded: bool = False
    """A lowering of a recorded run (``jxinspect record``): what it says is read from it
    and the release table alone, nothing traced in the user's process."""
    paths: Paths | None = None
    """The user's path of each input the program receives and the call's static
    arguments, as JAX carries ``args_info``: worked out once where the call is split
    (:func:`jxinspect.tracer.stage.stage_function`, or :func:`~jxinspect.tracer.stage.recorded`
    under a library's wrapper); ``None``: not known (a recorded lowering of no wrapper)."""


@dataclass(frozen=True)
class Lowered:
    """A traced program that lowered."""

    traced: Traced
    lowered: Any
    """JAX's ``jax.stages.Lowered``."""


@dataclass(frozen=True)
class LoweringFailed:
    """A traced program that JAX could not lower."""

    traced: Traced
    error: str
    """One line: what JAX said."""
    traceback: str | None = None
    """The formatted traceback, for ``--traceback``."""


@dataclass(frozen=True)
class Compiled:
    """A lowered program that XLA compiled."""

    lowered: Lowered
    executable: Any
    """JAX's ``jax.stages.Compiled``."""
    assignment: bytes | None = None
    """XLA's buffer assignment as the compile dumped it (an ``HloProto``), where the
    executable keeps none (a TPU's) and it was asked for; else ``None``."""


@dataclass(frozen=True)
class CompileFailed:
    """A lowered program that XLA could not compile."""

    lowered: Lowered
    error: str
    """One line: what XLA said."""


Staged: TypeAlias = Lowered | LoweringFailed


def lowered_of(staged: Staged) -> Any | None:
    """JAX's ``Lowered`` of ``staged``; ``None`` when lowering failed."""
    return staged.lowered if isinstance(staged, Lowered) else None
