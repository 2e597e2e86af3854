"""What a rule is."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jxinspect.core.model import Finding, Report, Severity
from jxinspect.core.settings import Settings

Check = Callable[[Report, Settings], Iterable[Finding]]
"""A rule's check: its findings on a report, under the run's thresholds."""


@dataclass(frozen=True)
class Rule:
    """A check with a stable code; ``explanation`` is what ``jxinspect explain`` prints."""

    code: str
    severity: Severity
    summary: str
    explanation: str
    check: Check
    surveyed: str | None = None
    """The prefix of the program shapes its findings name (``nested:``), whose shipped
    surveys ``jxinspect explain`` summarizes."""

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
