"""Record folders read by ``diff-debug`` and ``lint --records``, end to end: real runs
recorded with ``jxinspect record``, then compared and judged through the installed command."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest
from helpers import WARM_PYTHON, error_line, run_cli

BEFORE = """\
import jax, jax.numpy as jnp

@jax.jit
def step(params, x):
    return {"y": params["w"] * x}

@jax.jit
def gone(a):
    return a + 1

step({"w": jnp.ones(3)}, jnp.ones(3))
gone(jnp.ones(2))
gone(jnp.ones(4))
"""

AFTER = """\
import jax, jax.numpy as jnp

@jax.jit
def step(*args):
    return {"y": args[0]["w"] * args[1]}

@jax.jit
def added(a):
    return a * 2

step({"w": jnp.ones(3)}, jnp.ones(3))
added(jnp.ones(2))
"""

ONLY_REMOVED = """\
import jax, jax.numpy as jnp

@jax.jit
def step(params, x):
    return {"y": params["w"] * x}

step({"w": jnp.ones(3)}, jnp.ones(3))
"""

CRASHES = """\
import jax, jax.numpy as jnp

@jax.jit
def step(params, x):
    return {"y": params["w"] * x}

step({"w": jnp.ones(3)}, jnp.ones(3))
raise SystemExit(5)
"""


def record(tmp: Path, name: str, script: str, rc: int = 0) -> Path:
    (tmp / f"{name}.py").write_text(script)
    result = run_cli("record", "-o", name, "--", *WARM_PYTHON, f"{name}.py", cwd=tmp)
    assert result.returncode == rc, result.describe()
    return tmp / name


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("records")
    record(tmp, "before", BEFORE)
    record(tmp, "after", AFTER)
    record(tmp, "removed", ONLY_REMOVED)
    record(tmp, "crashed", CRASHES, rc=5)
    return tmp


def test_diff_two_record_folders_text(folders: Path) -> None:
    result = run_cli("diff-debug", "before", "after", cwd=folders)
    assert result.returncode == 1, result.describe()  # step's names degraded into args[...]
    out = result.stdout
    assert "== step ==" in out
    assert "args[0]['w']" in out and "degraded" in out
    assert "functions recorded on one side only (not compared)" in out
    # two signatures, each named by its folder and input types, never JAX's long repr
    assert "only before: gone (f32[2])" in out and "only before: gone.2 (f32[4])" in out
    assert "only after: added" in out
    assert "== gone" not in out and "== added" not in out


def test_diff_record_folders_json_and_markdown(folders: Path) -> None:
    result = run_cli("diff-debug", "before", "after", "--format", "json", cwd=folders)
    assert result.returncode == 1, result.describe()
    data = json.loads(result.stdout)
    assert [t["name"] for t in data["targets"]] == ["step"]
    assert len(data["only_before"]) == 2
    assert data["only_before"] == ["gone (f32[2])", "gone.2 (f32[4])"]
    assert data["only_after"] == ["added"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = importlib.resources.files("jxinspect").joinpath("schemas/diff.schema.json")
    jsonschema.validate(data, json.loads(schema.read_text()))

    result = run_cli("diff-debug", "before", "after", "--format", "markdown", cwd=folders)
    assert result.returncode == 1, result.describe()
    assert "### Functions recorded on one side only (not compared)" in result.stdout
    assert "- only after: `added`" in result.stdout


def test_disappeared_function_alone_does_not_fail(folders: Path) -> None:
    result = run_cli("diff-debug", "before", "removed", cwd=folders)
    assert result.returncode == 0, result.describe()
    assert "no changes" in result.stdout
    assert "only before: gone (f32[2])\n  only before: gone.2 (f32[4])\n" in result.stdout
    assert result.stdout.rstrip().endswith("ok: 0 regressions, 0 improvements, 0 neutral")


def test_diff_one_recorded_function_folder_as_a_side(folders: Path) -> None:
    result = run_cli("diff-debug", "before/step", "after/step", "--format", "json", cwd=folders)
    assert result.returncode == 1, result.describe()
    data = json.loads(result.stdout)
    assert len(data["targets"]) == 1 and data["only_before"] == []


def test_diff_record_folder_with_a_program_is_a_usage_error(folders: Path) -> None:
    result = run_cli("diff-debug", "before", "before/step", cwd=folders)
    assert result.returncode == 2, result.describe()
    assert "record folder" in error_line(result)


def test_lint_records_text_and_json(folders: Path) -> None:
    result = run_cli("lint", "--records", "after", cwd=folders)
    assert result.returncode == 0, result.describe()  # JX102 warns; the gate is error
    assert "after.py:step: " in result.stdout and "after.py:added: ok" in result.stdout
    assert "JX102" in result.stdout

    result = run_cli("lint", "--records", "before", "--format", "json", cwd=folders)
    assert result.returncode == 0, result.describe()
    data = json.loads(result.stdout)
    names = [t["target"] for t in data["targets"]]
    assert "before.py:step" in names
    assert [n for n in names if "gone" in n] == [
        "before.py:gone (f32[2])",
        "before.py:gone (f32[4])",
    ]
    assert data["summary"]["failed"] == 0

    failing = run_cli("lint", "--records", "after", "--fail-on", "warning", cwd=folders)
    assert failing.returncode == 1, failing.describe()


def test_lint_records_baseline(folders: Path) -> None:
    written = run_cli(
        "lint", "--records", "after", "--fail-on", "warning", "--write-baseline", cwd=folders
    )
    assert written.returncode == 0, written.describe()
    again = run_cli("lint", "--records", "after", "--fail-on", "warning", cwd=folders)
    assert again.returncode == 0, again.describe()
    (folders / "jxinspect-baseline.json").unlink()


def test_lint_records_incomplete_run_fails(folders: Path) -> None:
    result = run_cli("lint", "--records", "crashed", "--format", "json", cwd=folders)
    assert result.returncode == 3, result.describe()
    data = json.loads(result.stdout)
    assert data["summary"]["failed"] == 1
    failed = [t for t in data["targets"] if t["error"]]
    assert failed[0]["target"] == "crashed" and "did not complete" in failed[0]["error"]
    assert "crashed.py:step" in [t["target"] for t in data["targets"]]
    assert "did not complete" in error_line(result)

    text = run_cli("lint", "--records", "crashed", "--exit-zero", cwd=folders)
    assert text.returncode == 3, text.describe()  # --exit-zero covers findings only


def test_lint_records_usage_errors(folders: Path) -> None:
    result = run_cli("lint", "--records", "nowhere", cwd=folders)
    assert result.returncode == 2, result.describe()
    assert "not a record folder" in error_line(result)
    result = run_cli("lint", "--records", "before", "before.py", cwd=folders)
    assert result.returncode == 2, result.describe()
    assert "--records" in error_line(result)
