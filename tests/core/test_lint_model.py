"""A lint result as the codec writes and reads it, against ``schemas/lint.schema.json``.

The JSON ``lint --format json`` writes is the result's fields in order (the key names
the lint JSON has always had), with the counts derived; what is kept for the run alone
(a target's timing, the rules' texts, the notes said on stderr) is never written.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import replace
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jxinspect.core import codec
from jxinspect.core.lint import (
    GoneEntry,
    LintFinding,
    LintResult,
    RuleInfo,
    ShardInfo,
    TargetResult,
)
from jxinspect.core.model import Finding

FINDING = LintFinding("JX201", "warning", "big argument replicated", "w", "m.py", 3,
                      shape="pmap:args", fixed_in="0.7.2")  # fmt: skip
BASELINED = LintFinding("JX105", "error", "argument unused is unused", "unused", "m.py", 3,
                        baselined=True)  # fmt: skip
RESULT = LintResult(
    version="0.1.0", config="jxinspect.yaml", baseline="b.json", fail_on="warning",
    targets=(
        TargetResult("m.py:f", "m.py", 3, "f at m.py:3", "lowered",
                     findings=(FINDING, BASELINED), cached=True, seconds=1.25),
        TargetResult("m.py:g", "m.py", 9, error="tracing failed: boom", error_kind="user-code"),
    ),
    gone=(GoneEntry("m.py:h", "JX102", None, 2),),
    baseline_size=3,
    rules=(RuleInfo("JX105", "error", "unused argument", "An argument…"),
           RuleInfo("JX201", "warning", "replicated", "A big argument…")),
    shard=ShardInfo(1, 2, 4, "0123456789abcdef"),
    interrupted=True,
    notes=("a note said on stderr",),
)  # fmt: skip


def lint_schema() -> dict[str, Any]:
    resource = importlib.resources.files("jxinspect").joinpath("schemas/lint.schema.json")
    schema: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return schema


def test_the_json_has_the_lint_results_keys_in_order() -> None:
    data = json.loads(codec.dumps(RESULT))
    assert list(data) == ["schema", "version", "config", "baseline", "fail_on", "summary",
                          "targets", "gone", "baseline_size", "baseline_costs", "rules",
                          "shard"]  # fmt: skip
    assert data["summary"] == {"targets": 2, "failed": 1, "interrupted": True,
                               "new": {"error": 0, "warning": 1, "info": 0},
                               "baselined": 1, "gone": 2}  # fmt: skip
    assert list(data["targets"][0]) == ["target", "file", "line", "function", "reached",
                                        "error", "error_kind", "findings"]  # fmt: skip
    assert data["targets"][0]["findings"][0] == {
        "code": "JX201", "severity": "warning", "message": "big argument replicated",
        "path": "w", "file": "m.py", "line": 3, "inside_jax": False, "shape": "pmap:args",
        "fixed_in": "0.7.2", "library_file": None, "library_line": None, "baselined": False,
    }  # fmt: skip
    assert data["rules"] == [{"code": "JX105", "severity": "error"},
                             {"code": "JX201", "severity": "warning"}]  # fmt: skip
    assert data["shard"] == {"index": 1, "count": 2, "targets": 4, "plan": "0123456789abcdef"}


def test_it_reads_back_equal_and_says_it_was_interrupted() -> None:
    back = codec.decode(codec.dumps(RESULT), LintResult, source="r.json")
    assert back == RESULT  # timings, rule texts and notes do not compare
    assert back.interrupted and back.summary == RESULT.summary
    assert back.exit_code() == RESULT.exit_code() == 130
    assert back.targets[0].seconds is None and back.rules[0].summary == "" and not back.notes
    assert codec.dumps(back) == codec.dumps(RESULT)
    plain = replace(RESULT, interrupted=False, shard=None)
    again = codec.decode(codec.dumps(plain), LintResult, source="r.json")
    assert not again.interrupted and again.shard is None


def test_the_schema_is_valid_and_the_result_an_example_of_it() -> None:
    schema = lint_schema()
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert not list(validator.iter_errors(codec.plain(RESULT)))
    assert not list(validator.iter_errors(codec.plain(replace(RESULT, shard=None))))
    broken = codec.plain(RESULT)
    broken["targets"][0]["seconds"] = 1.0
    assert list(validator.iter_errors(broken))  # what is not written is not allowed


def test_a_lint_finding_is_a_finding_with_whether_it_was_baselined() -> None:
    finding = Finding("JX102", "warning", "named args[0]", "x", "/abs/m.py", 7, shape="jit:args")
    lint = LintFinding.of(finding, severity="error", file="m.py")
    assert isinstance(lint, Finding) and not lint.baselined
    assert (lint.code, lint.severity, lint.file, lint.line, lint.shape) == (
        "JX102", "error", "m.py", 7, "jit:args",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["targets"][0].update(line="3"),
         "at $.targets[0].line: expected `int | null`, got `str`"),
        (lambda d: d["targets"][1].update(error_kind="crash"),
         "at $.targets[1].error_kind: invalid enum value 'crash'"),
        (lambda d: d.update(fail_on="always"), "at $.fail_on: invalid enum value 'always'"),
        (lambda d: d["gone"][0].update(code="X1"),
         "at $.gone[0].code: expected `str` matching regex '^JX[0-9]{3}$'"),
    ],
)  # fmt: skip
def test_a_result_that_is_not_one_is_one_line(change: Any, problem: str) -> None:
    data = codec.plain(RESULT)
    change(data)
    with pytest.raises(codec.DecodeError) as raised:
        codec.convert(data, LintResult, source="part.json")
    assert str(raised.value) == f"part.json: {problem}"
