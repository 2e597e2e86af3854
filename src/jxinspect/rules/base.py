"""What a rule is."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jxinspect.core.facts import Facts
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Report, Severity
from jxinspect.core.survey import Outcome

Check = Callable[[Report, Facts], Iterable[Finding]]
"""A rule's check: its findings on a report, given the facts it reads besides it (the
run's thresholds, a recording's compiles, a baseline's accepted cost)."""


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

    def finding(
        self,
        report: Report,
        message: str,
        path: str | None = None,
        inside_jax: bool = False,
        shape: str | None = None,
    ) -> Finding:
        """A finding of this rule, located at the user's function (``inside_jax``: about
        JAX's own code; ``shape``: the program shape it is about, for the advice)."""
        return Finding(
            self.code, self.severity, message, path, report.file, report.line, inside_jax, shape
        )


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

    def finding(self, comparison: ProgramComparison, message: str) -> Finding:
        """A finding of this rule, located at the function's definition."""
        return Finding(self.code, self.severity, message, None, comparison.file, comparison.line)
