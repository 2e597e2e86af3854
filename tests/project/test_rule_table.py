"""A lint result's rules come from the project's rule table (lint never imports the rules
package itself): every rule with the policy's severity for a run, and a merged part's
texts read back."""

from __future__ import annotations

import pytest

from jxinspect.core import codec
from jxinspect.core.errors import UsageError
from jxinspect.core.lint import LintResult, RuleInfo
from jxinspect.project.config import Policy
from jxinspect.project.rule_table import described, rule_infos
from jxinspect.rules import RULES, RULES_BY_CODE


def test_a_run_describes_every_rule_with_the_policys_severity() -> None:
    infos = rule_infos(Policy(severity=(("JX1", "error"),)))
    assert [info.code for info in infos] == [rule.code for rule in RULES]
    jx105 = next(info for info in infos if info.code == "JX105")
    assert jx105.severity == "error" and jx105.summary == RULES_BY_CODE["JX105"].summary
    assert jx105.explanation == RULES_BY_CODE["JX105"].explanation


def test_a_result_read_back_gets_this_jxinspects_texts() -> None:
    written = LintResult(targets=(), rules=(RuleInfo("JX105", "info", "old", "old text"),))
    back = codec.decode(codec.dumps(written), LintResult, source="part.json")
    assert back.rules[0].summary == ""  # not written
    (rule,) = described(back, "part.json").rules
    assert (rule.severity, rule.summary) == ("info", RULES_BY_CODE["JX105"].summary)


def test_a_rule_this_jxinspect_does_not_know_is_one_line() -> None:
    with pytest.raises(UsageError) as raised:
        described(LintResult(targets=(), rules=(RuleInfo("JX999", "info"),)), "part.json")
    assert str(raised.value) == (
        "part.json names rules this jxinspect does not know (JX999); read it with the "
        "jxinspect that wrote it"
    )
