"""A program's identity, and how two lowerings of one function compare: across the
processes of one run (JX403), across two runs or within one (JX404).

Plain data: :mod:`jxinspect.record.identity` computes an identity from the lowered
module's text, :mod:`jxinspect.record.programs` finds the first real difference, the
rules judge a :class:`ProgramComparison`, the renderers draw it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Across = Literal["processes", "runs", "run"]
"""What two lowerings of one function are: of two processes of one run, of two runs,
or two lowerings in one run."""

DifferenceKind = Literal["input", "static", "op", "names", "renamed"]
"""The first real difference: an argument's type or sharding, a static value, an
operation of the program, (the program the same) the names it carries, or the names of
its functions alone (``@clip_0`` → ``@clip_1``: JAX's persistent-cache key hashes them)."""


@dataclass(frozen=True)
class ProgramIdentity:
    """What a lowering made, hashed: equal ``program`` digests are the same program."""

    program: str
    """SHA-256 of the lowered module without locations, metadata or names (hex)."""
    names: str
    """SHA-256 of the names kept apart: the module's, the arguments' and the results'."""
    source: str | None = None
    """SHA-256 of the source text the program was traced from (the function's and every
    helper's and method's its equations were traced through); ``None`` where it could
    not be read."""

    @property
    def short(self) -> str:
        """The program digest's first 12 characters, as a table shows it."""
        return self.program[:12]


@dataclass(frozen=True)
class Difference:
    """The first real difference between two lowerings of one function."""

    kind: DifferenceKind
    path: str | None
    """The argument's path or the static argument's name (``None`` for an operation)."""
    before: str | None
    after: str | None
    """What each side has (a type and sharding, a value, an operation); ``None``: none."""
    before_line: str | None = None
    after_line: str | None = None
    """``train.py:12``: the user's source line of the operation on each side."""

    def __str__(self) -> str:
        if self.kind == "renamed":
            olds, news = (self.before or "").split(", "), (self.after or "").split(", ")
            pairs = ", ".join(f"{old} → {new}" for old, new in zip(olds, news, strict=False))
            return (
                f"the same program but for the names of its functions ({pairs}): JAX's "
                "persistent-cache key hashes them, so no cache hit between them"
            )
        if self.kind == "op":
            return (
                f"operation `{self.before or '(none)'}` ({self.before_line or 'no line'}) vs "
                f"`{self.after or '(none)'}` ({self.after_line or 'no line'})"
            )
        what = {"input": "argument", "static": "static argument", "names": "names"}[self.kind]
        return f"{what} {self.path or ''}: {self.before or '(none)'} vs {self.after or '(none)'}"


@dataclass(frozen=True)
class ProgramComparison:
    """One function lowered on two sides, compared."""

    function: str
    source: str | None
    """``step at train.py:12``."""
    across: Across
    before: str
    after: str
    """Which side each is: ``process 0``, a record folder."""
    before_identity: ProgramIdentity
    after_identity: ProgramIdentity
    difference: Difference | None = None
    """The first real difference; ``None`` where the programs are the same."""
    file: str | None = None
    line: int | None = None
    """Where the function is defined, for a finding."""
    key_differences: tuple[str, ...] = ()
    """The parts of JAX's persistent-cache key besides the program that differ between
    the sides (``XLA flags: --xla_a=1 added``): where any does, one side's cache entry
    never serves the other, however equal the programs."""

    @property
    def same_program(self) -> bool:
        return self.before_identity.program == self.after_identity.program

    @property
    def same_source(self) -> bool:
        """Both sides were traced from the same source text: the function's and every
        helper's and method's it called (known on both)."""
        mine, theirs = self.before_identity.source, self.after_identity.source
        return mine is not None and mine == theirs

    @property
    def same_inputs(self) -> bool:
        """No argument type, sharding or static value tells the sides apart."""
        return self.difference is None or self.difference.kind in ("op", "names", "renamed")
