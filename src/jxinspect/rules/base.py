"""What a rule is."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from jxinspect.core.facts import Facts, Read
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Placed, Report, Severity
from jxinspect.core.settings import Settings
from jxinspect.core.survey import Outcome

Check = Callable[[Report, Facts], Iterable[Finding]]
"""A rule's check: its findings on a report, given the facts it reads besides it (the
run's thresholds, a recording's compiles, a baseline's accepted cost)."""


@dataclass(frozen=True)
class Conditions:
    """What decides what a rule needs read: the thresholds, and whether the program is
    compiled for a TPU topology."""

    settings: Settings
    topology: bool = False


Needs = Callable[[Conditions], Iterable[Read]]
"""What a rule cannot judge without, under ``conditions``: what is staged for it, and
what the judge checks was read before it runs the rule (else one finding says so)."""


def needs_nothing(conditions: Conditions) -> Iterable[Read]:
    """A rule that judges whatever was read (the lowered report is always there)."""
    return ()


class RulePolicy(Protocol):
    """What :func:`jxinspect.rules.needs` reads of a policy (the project's ``Policy``)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def compile(self) -> bool: ...
    @property
    def why(self) -> bool: ...
    def enabled(self, code: str) -> bool: ...


@dataclass(frozen=True)
class Surveyed:
    """The program shapes a rule's findings name (by prefix: ``nested:``), and when a
    release counts as fixing what such a finding says was lost."""

    shapes: str
    fixed_when: Outcome = "kept"
    """The worst verdict each cell of the shape may have in a release that fixes it:
    ``kept`` for a name; ``wrong`` for a nested jaxpr with no debug info (any debug info
    at all fixes that); ``partial`` for one whose names do not match its variables."""


@dataclass(frozen=True)
class Rule:
    """A check with a stable code; ``explanation`` is what ``jxinspect explain`` prints."""

    code: str
    severity: Severity
    summary: str
    explanation: str
    check: Check
    surveyed: Surveyed | None = None
    """The program shapes its findings name, whose shipped surveys advise them (and
    ``jxinspect explain`` summarizes)."""
    reads: tuple[Read, ...] = ("lowered",)
    """Everything it reads, where it was read (the rule pages list them)."""
    needs: Needs = needs_nothing
    """Which of ``reads`` it cannot judge without, under which settings."""

    def finding(
        self,
        report: Report,
        message: str,
        path: str | None = None,
        inside_jax: bool = False,
        shape: str | None = None,
        at: Placed | None = None,
    ) -> Finding:
        """A finding of this rule, located at the user's function, or ``at`` the line of
        the buffer, collective or operation it is about (the library's frame beside it;
        the function's line where the user's is not known); ``inside_jax``: about JAX's
        own code; ``shape``: the program shape it is about, for the advice."""
        file, line = report.file, report.line
        library: tuple[str | None, int | None] = (None, None)
        if at is not None:
            library = (at.library_file, at.library_line)
            if at.file is not None and at.line is not None:
                file, line = at.file, at.line
        return Finding(
            self.code, self.severity, message, path, file, line, inside_jax, shape,
            library_file=library[0], library_line=library[1],
        )  # fmt: skip


ComparisonCheck = Callable[[ProgramComparison], Iterable[Finding]]
"""A check of two lowerings of one function: its findings."""


@dataclass(frozen=True)
class ComparisonRule:
    """A check with a stable code that judges two lowerings of one function (of two
    processes of a run, of two runs, or twice in one run), not one report: what it
    finds is in no single report. ``explanation`` is what ``jxinspect explain`` prints."""

    code: str
    severity: Severity
    summary: str
    explanation: str
    check: ComparisonCheck
    reads: tuple[Read, ...] = ("comparisons",)
    """What it reads: lowerings compared, never one report."""

    def finding(self, comparison: ProgramComparison, message: str) -> Finding:
        """A finding of this rule, located at the function's definition."""
        return Finding(self.code, self.severity, message, None, comparison.file, comparison.line)
