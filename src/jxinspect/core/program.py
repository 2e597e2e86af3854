"""The program texts a report can carry for the views (plain data, no JAX).

``jxinspect.tracer.read.annotate`` prints the jaxpr and the lowered module the way JAX prints
them, lays ``@main``'s signature (and the jaxpr's inputs and outputs) out one value per
line, and records marks (:class:`Mark`): which line stands for which input, output,
nested jaxpr or source line. ``jxinspect.render`` draws the notes from the report's
leaves, so a text and its report always agree. Built only when a view asks for it
(:class:`TextRequest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TextKind = Literal["jaxpr", "stablehlo", "hlo"]
ModuleDialect = Literal["stablehlo", "hlo"]
MarkKind = Literal["input", "output", "extra", "jaxpr", "source"]


@dataclass(frozen=True)
class TextRequest:
    """Which texts to keep: what ``--show`` and ``--format html`` need, nothing more."""

    jaxpr: bool = True
    module: ModuleDialect | None = "stablehlo"
    """The lowered module's dialect, or ``None`` for no module text."""
    debug_info: bool = False
    """Keep source locations in the module (``loc(...)``, HLO ``metadata``)."""
    source: bool = False
    """Record the user's ``file:line`` for each jaxpr equation."""


@dataclass(frozen=True)
class Mark:
    """A line of a program text that stands for something in the report."""

    line: int
    """0-based line number in :attr:`ProgramText.text`."""
    kind: MarkKind
    index: int = -1
    """``input``/``output``: the leaf's index in the report; ``extra``: the position in
    ``@main`` of an argument or result JAX added itself."""
    text: str = ""
    """``jaxpr``: the jaxpr's place (``top``, or a nested jaxpr's ``where``);
    ``source``: ``file:line``; ``extra``: its kind (``token``, ``constant``…)."""


@dataclass(frozen=True)
class ProgramText:
    """One text as JAX printed it, except for the value-per-line layout, with its marks."""

    kind: TextKind
    text: str
    marks: tuple[Mark, ...] = ()
    debug_info: bool = False


@dataclass(frozen=True)
class Program:
    """The texts kept on a :class:`~jxinspect.core.model.Report` (not part of its JSON)."""

    jaxpr: ProgramText | None = None
    module: ProgramText | None = None
    module_error: str | None = None
    """Why the requested module text is missing although lowering succeeded."""
