"""What a rule is."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jxinspect.core.model import Finding, Report, Severity
from jxinspect.core.settings import Settings


@dataclass(frozen=True)
class Rule:
    """A check with a stable code; ``explanation`` is what ``jxinspect explain`` prints."""

    code: str
    severity: Severity
    summary: str
    explanation: str
    check: Callable[[Report], Iterable[Finding]]
    configured: Callable[[Report, Settings], Iterable[Finding]] | None = None
    """For a rule with thresholds: called with the run's :class:`Settings` instead."""

    def run(self, report: Report, settings: Settings) -> Iterable[Finding]:
        """This rule's findings, with ``settings`` where the rule takes them."""
        return self.configured(report, settings) if self.configured else self.check(report)

    def finding(self, report: Report, message: str, path: str | None = None) -> Finding:
        """A finding of this rule, located at the user's function."""
        return Finding(self.code, self.severity, message, path, report.file, report.line)
