"""The rules that judge two lowerings of one function (JX403, JX404): each fires where
its case is, and only there; `jxinspect explain` explains them as it does every rule."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import run_cli

from jxinspect.core.identity import Difference, ProgramComparison, ProgramIdentity
from jxinspect.rules import COMPARISON_RULES, EXPLAINED, RULES, apply_comparison_rules

ONE = ProgramIdentity("a" * 64, "n" * 64, "s" * 64)
OTHER = ProgramIdentity("b" * 64, "n" * 64, "s" * 64)
OP = Difference("op", None, "%0 = stablehlo.add", "%0 = stablehlo.multiply", "t.py:3", "t.py:3")
SHAPE = Difference("input", "x", "f32[4]", "f32[5]")


def comparison(across: str, after: ProgramIdentity, found: Difference | None) -> ProgramComparison:
    return ProgramComparison(
        "step", "step at t.py:1", across, "process 0", "process 1",  # type: ignore[arg-type]
        ONE, after, found, "t.py", 1,
    )  # fmt: skip


def codes(case: ProgramComparison) -> list[str]:
    return [f.code for f in apply_comparison_rules(case)]


def test_jx403_where_processes_lowered_different_programs() -> None:
    (finding,) = apply_comparison_rules(comparison("processes", OTHER, SHAPE))
    assert (finding.code, finding.severity, finding.file, finding.line) == (
        "JX403", "error", "t.py", 1,
    )  # fmt: skip
    assert "argument x: f32[4] vs f32[5]" in finding.message
    assert codes(comparison("processes", ONE, None)) == []


def test_jx404_where_the_same_source_and_inputs_made_another_program() -> None:
    for across in ("runs", "run"):
        (finding,) = apply_comparison_rules(comparison(across, OTHER, OP))
        assert finding.code == "JX404" and "t.py:3" in finding.message
        assert codes(comparison(across, OTHER, SHAPE)) == []  # other inputs
        assert codes(comparison(across, replace(OTHER, source="t" * 64), OP)) == []  # edited
        assert codes(comparison(across, replace(OTHER, source=None), OP)) == []  # unknown
        assert codes(comparison(across, ONE, None)) == []  # the same program
    assert codes(comparison("processes", OTHER, OP)) == ["JX403"]


@pytest.mark.parametrize("rule", COMPARISON_RULES, ids=lambda r: r.code)
def test_comparison_rules_are_explained(rule: object) -> None:
    code = rule.code
    assert EXPLAINED[code] is rule and code not in {r.code for r in RULES}
    result = run_cli("explain", code.lower())
    assert result.returncode == 0, result.describe()
    assert result.stdout.startswith(f"{code} (error): ") and "Fix:" in result.stdout
