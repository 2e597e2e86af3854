"""The rule table as this project describes it: each rule's code, the severity the
project's policy gives it, its summary and explanation.

Lint's results carry this description (the renderers that describe rules read it), and
a lint result read back from its JSON is described again by this jxinspect's table; lint
reaches the table through here (and the configuration, which checks rule codes against
it), never by importing :mod:`jxinspect.rules` itself.
"""

from __future__ import annotations

from dataclasses import replace

from jxinspect import rules
from jxinspect.core.errors import UsageError
from jxinspect.core.lint import LintResult, RuleInfo
from jxinspect.project.config import Policy


def rule_infos(policy: Policy) -> tuple[RuleInfo, ...]:
    """Every rule, with the severity ``policy`` gives it, its summary and explanation
    (for lint's results: the renderers that describe rules)."""
    return tuple(
        RuleInfo(r.code, policy.severity_of(r.code, r.severity), r.summary, r.explanation)
        for r in rules.RULES
    )


def described(result: LintResult, source: str) -> LintResult:
    """A lint result read back from its JSON (each rule's code and severity) with each
    rule's summary and explanation from this jxinspect's table; a code it does not know
    is a :class:`~jxinspect.core.errors.UsageError` naming ``source``."""
    unknown = [rule.code for rule in result.rules if rule.code not in rules.RULES_BY_CODE]
    if unknown:
        raise UsageError(
            f"{source} names rules this jxinspect does not know ({', '.join(unknown)}); read it "
            "with the jxinspect that wrote it"
        )
    table = rules.RULES_BY_CODE
    return replace(
        result,
        rules=tuple(
            replace(r, summary=table[r.code].summary, explanation=table[r.code].explanation)
            for r in result.rules
        ),
    )
