"""``jxinspect lint`` end to end: the installed command on a copy of ``sample_repo/``.

The sample repository has one deliberate regression (``models/train.py``: a 31 MiB
embedding table left replicated, JX201, an error under its jxinspect.yaml), a pmap step
that leaks JAX's internal axis name (JX203, a warning; its JX102 is ignored for that
target), and clean models. Each test copies it, so runs may write and edit files.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, CliResult, error_line

SAMPLE_REPO = REPO / "sample_repo"
SARIF_SCHEMA = REPO / ".." / "shared" / "schemas" / "sarif-schema-2.1.0.json"
TARGETS = [
    "models/attention.py:attention",
    "models/legacy.py:step",
    "models/mlp.py:loss",
    "models/mlp.py:predict",
    "models/train.py:train_step",
]
REGRESSION = ("models/train.py:train_step", "JX201", "error", "state['params']['embed']")
PMAP = ("models/legacy.py:step", "JX203", "warning", None)

Run = Callable[..., CliResult]


def copy_repo(folder: Path) -> Path:
    return Path(
        shutil.copytree(
            SAMPLE_REPO, folder / "repo", ignore=shutil.ignore_patterns("__pycache__", "*.json")
        )
    )


def findings(report: dict[str, Any], new_only: bool = True) -> list[tuple[Any, ...]]:
    return [
        (target["target"], f["code"], f["severity"], f["path"])
        for target in report["targets"]
        for f in target["findings"]
        if not (new_only and f["baselined"])
    ]


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy for the tests that only read it."""
    return copy_repo(tmp_path_factory.mktemp("lint"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_repo(tmp_path)


@pytest.fixture(scope="module")
def lint_json(shared_repo: Path, run_cli: Run) -> tuple[CliResult, dict[str, Any]]:
    result = run_cli("lint", "--format", "json", cwd=shared_repo)
    return result, json.loads(result.stdout)


# ---- formats -----------------------------------------------------------------------------


def test_text_groups_by_target_and_ends_with_a_summary(shared_repo: Path, run_cli: Run) -> None:
    result = run_cli("lint", cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    assert result.stderr == "", "no progress bar or diagnostics off a terminal"
    lines = result.stdout.splitlines()
    assert lines[0] == "models/attention.py:attention: ok"
    assert "models/train.py:train_step: 1 finding" in lines
    assert (
        "  models/train.py:12: JX201 error   argument state['params']['embed'] (f32[32000,256], "
        "31.2 MiB) is replicated on all 8 devices (threshold 4.0 MiB)"
    ) in lines
    assert lines[-1] == "5 targets; 2 new findings: 1 error, 1 warning"


def test_json_lists_every_target_with_configured_severities(
    lint_json: tuple[CliResult, dict[str, Any]],
) -> None:
    result, report = lint_json
    assert result.returncode == 1, result.describe()
    assert report["schema"] == "jxinspect.lint/1" and report["config"] == "jxinspect.yaml"
    assert [t["target"] for t in report["targets"]] == TARGETS
    assert {t["reached"] for t in report["targets"]} == {"lowered"}
    # JX201 is an error by the config's severity; legacy's JX102 and JX110 are ignored
    assert findings(report) == [PMAP, REGRESSION]
    assert report["summary"] == {
        "targets": 5,
        "failed": 0,
        "baselined": 0,
        "gone": 0,
        "new": {"error": 1, "warning": 1, "info": 0},
    }


def test_sarif_is_valid_located_and_byte_identical_across_runs(
    shared_repo: Path, run_cli: Run
) -> None:
    first, second = shared_repo / "first.sarif", shared_repo / "second.sarif"
    for path in (first, second):
        result = run_cli("lint", "--format", "sarif", "-o", path, cwd=shared_repo)
        assert result.returncode == 1 and result.stdout == "", result.describe()
    assert first.read_bytes() == second.read_bytes()
    log = json.loads(first.read_text(encoding="utf-8"))
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"the SARIF 2.1.0 schema is not at {SARIF_SCHEMA} (../shared is absent)")
    from jsonschema import Draft7Validator

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(Draft7Validator(schema).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert rules[run["results"][1]["ruleIndex"]]["id"] == "JX201"
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in rules}["JX201"] == "error"
    regression = run["results"][1]
    assert regression["level"] == "error" and regression["baselineState"] == "new"
    location = regression["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "models/train.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 12},
    }
    assert len(regression["partialFingerprints"]["jxinspect/v1"]) == 32
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_github_annotations(shared_repo: Path, run_cli: Run) -> None:
    result = run_cli("lint", "--format", "github", cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    assert result.stdout.splitlines() == [
        "::warning file=models/legacy.py,line=7,title=JX203::models/legacy.py:step: internal "
        "axis name '_internal_pmap_axis_name' leaks into the program (pmap without axis_name)",
        "::error file=models/train.py,line=12,title=JX201::models/train.py:train_step: argument "
        "state['params']['embed'] (f32[32000,256], 31.2 MiB) is replicated on all 8 devices "
        "(threshold 4.0 MiB)",
        "5 targets; 2 new findings: 1 error, 1 warning",
    ]


def test_junit_has_one_case_per_target(shared_repo: Path, run_cli: Run) -> None:
    out = shared_repo / "report.xml"
    result = run_cli("lint", "--format", "junit", "--output", out, cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    suites = ET.parse(out).getroot()
    assert suites.attrib == {"name": "jxinspect lint", "tests": "5", "failures": "1", "errors": "0"}
    cases = {case.get("name"): case for case in suites.iter("testcase")}
    assert sorted(cases) == TARGETS
    failure = cases["models/train.py:train_step"].find("failure")
    assert failure is not None and failure.get("type") == "JX201"
    assert failure.get("message") == "1 new finding at or above error: JX201"
    legacy = cases["models/legacy.py:step"]
    assert legacy.find("failure") is None  # a warning does not fail at --fail-on error
    assert "JX203 warning" in (legacy.findtext("system-out") or "")


def test_jobs_give_the_same_result(
    shared_repo: Path, run_cli: Run, lint_json: tuple[CliResult, dict[str, Any]]
) -> None:
    result = run_cli("lint", "--format", "json", "--jobs", "2", cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    assert result.stdout == lint_json[0].stdout


# ---- baseline -----------------------------------------------------------------------------


def test_baseline_write_reuse_new_and_gone(repo: Path, run_cli: Run) -> None:
    written = run_cli("lint", "--write-baseline", cwd=repo)
    assert written.returncode == 0, written.describe()
    assert written.stderr == "wrote 2 findings to the baseline jxinspect-baseline.json\n"
    baseline = json.loads((repo / "jxinspect-baseline.json").read_text(encoding="utf-8"))
    assert baseline == {
        "schema": "jxinspect.baseline/1",
        "findings": [
            {"target": "models/legacy.py:step", "code": "JX203", "path": None, "count": 1},
            {
                "target": "models/train.py:train_step",
                "code": "JX201",
                "path": "state['params']['embed']",
                "count": 1,
            },
        ],
    }

    again = run_cli("lint", "--fail-on", "warning", cwd=repo)
    assert again.returncode == 0, again.describe()
    assert again.stdout.splitlines()[-1] == "5 targets; no new findings; 2 baselined"

    # Fix the regression, add lines above the pmap step (the baseline has no line numbers)
    # and introduce a new problem: attention's output sharding is no longer declared.
    train = repo / "models" / "train.py"
    train.write_text(train.read_text().replace("'embed': P(),", "'embed': P('model', None),"))
    legacy = repo / "models" / "legacy.py"
    legacy.write_text("# moved\n\n\n" + legacy.read_text())
    attention = repo / "models" / "attention.py"
    text = attention.read_text()
    assert '"out_specs": "P(\'data\', None, None)",\n' in text
    attention.write_text(text.replace('"out_specs": "P(\'data\', None, None)",\n', ""))
    later = run_cli("lint", "--format", "json", "--fail-on", "warning", cwd=repo)
    assert later.returncode == 1, later.describe()
    report = json.loads(later.stdout)
    assert findings(report) == [("models/attention.py:attention", "JX202", "warning", "result")]
    assert findings(report, new_only=False)[1:] == [PMAP]
    assert report["gone"] == [
        {
            "target": "models/train.py:train_step",
            "code": "JX201",
            "path": "state['params']['embed']",
            "count": 1,
        }
    ]


# ---- select / ignore / severity / exit codes --------------------------------------------


def test_select_ignore_and_fail_on_from_the_command_line(shared_repo: Path, run_cli: Run) -> None:
    result = run_cli(
        "lint",
        "--select",
        "JX2",
        "--ignore",
        "jx201",
        "--fail-on",
        "warning",
        "--format",
        "json",
        cwd=shared_repo,
    )
    assert result.returncode == 1, result.describe()
    assert findings(json.loads(result.stdout)) == [PMAP]


def test_config_severity_override_and_exit_zero(repo: Path, run_cli: Run) -> None:
    config = repo / "jxinspect.yaml"
    config.write_text(config.read_text().replace("JX201: error", "JX201: info"))
    clean = run_cli("lint", cwd=repo)
    assert clean.returncode == 0, clean.describe()
    assert "JX201 info" in clean.stdout
    config.write_text(config.read_text().replace("JX201: info", "JX203: error"))
    zero = run_cli("lint", "--exit-zero", cwd=repo)
    assert zero.returncode == 0, zero.describe()
    assert "JX203 error" in zero.stdout and "1 new finding" not in zero.stdout


def test_a_failing_target_is_reported_and_the_others_still_run(repo: Path, run_cli: Run) -> None:
    (repo / "models" / "broken.py").write_text(
        'raise RuntimeError("config server unreachable")\nJXINSPECT = {"f": {"args": "f32[3]"}}\n'
    )
    (repo / "models" / "shapes.py").write_text(
        "import jax.numpy as jnp\n\ndef bad(x):\n    return jnp.dot(x, jnp.ones((3, 5)))\n\n"
        'JXINSPECT = {"bad": {"args": "f32[4,4]"}}\n'
    )
    result = run_cli("lint", "--format", "json", cwd=repo)
    assert result.returncode == 3, result.describe()
    report = json.loads(result.stdout)
    failed = {t["target"]: t for t in report["targets"] if t["error"]}
    assert sorted(failed) == ["models/broken.py:f", "models/shapes.py:bad"]
    assert failed["models/broken.py:f"]["error"] == (
        "importing models/broken.py failed: RuntimeError: config server unreachable "
        "(at models/broken.py:1 in <module>)"
    )
    assert failed["models/shapes.py:bad"]["error"].startswith("tracing failed: TypeError: ")
    assert failed["models/shapes.py:bad"]["line"] == 3
    assert findings(report) == [PMAP, REGRESSION]  # the other targets still ran
    # A target that ends its worker process takes only itself down.
    (repo / "models" / "dies.py").write_text(
        'import os\n\ndef f(x):\n    os._exit(7)\n\nJXINSPECT = {"f": {"args": "f32[3]"}}\n'
    )
    github = run_cli("lint", "--format", "github", "--jobs", "2", cwd=repo)
    assert github.returncode == 3, github.describe()
    lines = github.stdout.splitlines()
    assert lines[0] == (
        "::error file=models/broken.py,title=jxinspect%3A target failed::models/broken.py:f: "
        "importing models/broken.py failed: RuntimeError: config server unreachable "
        "(at models/broken.py:1 in <module>)"
    )
    assert lines[1] == (
        "::error file=models/dies.py,line=3,title=jxinspect%3A target failed::models/dies.py:f: "
        "the process staging it ended abruptly (BrokenProcessPool)"
    )
    assert lines[3].startswith(
        "::error file=models/shapes.py,line=3,title=jxinspect%3A target failed::"
        "models/shapes.py:bad: tracing failed: TypeError: "
    )
    assert lines[2].startswith("::warning file=models/legacy.py,line=7,title=JX203::")
    assert lines[4].startswith("::error file=models/train.py,line=12,title=JX201::")
    assert lines[-1] == "8 targets (3 failed); 2 new findings: 1 error, 1 warning"


# ---- configuration and usage errors (exit 2, one line) ---------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("ignore: [JX110]", "ignore: [JX110"),
            "error: jxinspect.yaml:11: YAML syntax error: expected ',' or ']', but got '<scalar>' "
            "(column 1), while parsing a flow sequence started on line 10",
        ),
        (
            (
                "  - target: models/legacy.py:step\n",
                "  - target: models/legacy.py:step\n    static_argnum: 1\n",
            ),
            "error: jxinspect.yaml:15: targets[1].static_argnum: unknown key "
            "(did you mean `static_argnums`?)",
        ),
        (
            ("devices: 8 ", "devices: eight "),
            "error: jxinspect.yaml:3: defaults: `devices` must be a positive int, got 'eight'",
        ),
        (
            ("models/mlp.py:loss", "models/mlps.py:loss"),
            "error: jxinspect.yaml:12: targets[0].target: no such file: models/mlps.py "
            "(relative to the folder of jxinspect.yaml)",
        ),
    ],
)
def test_config_errors(repo: Path, run_cli: Run, edit: tuple[str, str], expected: str) -> None:
    config = repo / "jxinspect.yaml"
    text = config.read_text()
    assert edit[0] in text
    config.write_text(text.replace(edit[0], edit[1], 1))
    result = run_cli("lint", cwd=repo)
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith(expected), result.describe()
    assert result.stdout == ""


def test_pyproject_configuration_and_no_targets(tmp_path: Path, run_cli: Run) -> None:
    repo = copy_repo(tmp_path)
    (repo / "jxinspect.yaml").unlink()
    (repo / "pyproject.toml").write_text(
        '[tool.jxinspect]\npaths = ["models"]\nignore = ["JX110", "JX102"]\n'
        "[tool.jxinspect.defaults]\ndevices = 8\n"
    )
    result = run_cli("lint", "--format", "json", cwd=repo / "models")  # found from below
    assert result.returncode == 0, result.describe()  # JX201 is a warning by default
    report = json.loads(result.stdout)
    assert [t["target"] for t in report["targets"]] == [t for t in TARGETS if "loss" not in t]
    assert findings(report) == [PMAP, REGRESSION[:2] + ("warning", REGRESSION[3])]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".git").mkdir()
    nothing = run_cli("lint", cwd=empty)
    assert nothing.returncode == 2
    assert "no targets: nothing in the configuration or" in error_line(nothing)


def test_explain_a_lint_rule(run_cli: Run) -> None:
    result = run_cli("explain", "JX201")
    assert result.returncode == 0
    assert result.stdout.startswith(
        "JX201 (warning): large argument left fully replicated on a multi-device mesh\n"
    )
