"""The pipeline's one judge step and its one report builder, in this process."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from jxinspect.core.errors import UsageError
from jxinspect.core.model import Report
from jxinspect.core.settings import Settings
from jxinspect.pipeline import inspect_function, judge
from jxinspect.project.config import Policy, project_config


def step(x: jax.Array, unused: jax.Array) -> jax.Array:
    return x * 2


ARGS = (jax.ShapeDtypeStruct((256, 256), jnp.float32), jax.ShapeDtypeStruct((4,), jnp.float32))


def codes(report: Report) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in report.findings]


def test_the_defaults_and_a_policy_judge_the_same_report() -> None:
    report = inspect_function(step, ARGS, {})
    assert codes(report) == [("JX105", "info")]  # `unused` is pruned; no budget
    policy = Policy(
        ignore=("JX105",),
        severity=(("JX3", "error"),),
        settings=Settings(bytes_per_device=1024),
    )
    judged = inspect_function(step, ARGS, {}, policy=policy)
    assert codes(judged) == [("JX302", "error")]
    assert codes(judge(report, policy)) == codes(judged)  # judged again: the same
    assert judge(judged) == report  # and back with the defaults


def test_a_lowering_failure_is_carried_into_the_report() -> None:
    def eig(matrix: jax.Array) -> jax.Array:
        return jnp.linalg.eig(matrix)  # type: ignore[return-value]

    matrix = jax.ShapeDtypeStruct((4, 4), jnp.float32)
    report = inspect_function(eig, (matrix,), {}, platform="tpu")  # a CPU-only lowering
    assert report.reached == "traced"
    assert report.error and report.error_traceback
    assert [i.path for i in report.inputs] == ["matrix"]
    assert "JX108" in [f.code for f in report.findings]


def test_project_config_is_found_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "jxinspect.yaml").write_text("ignore: [JX105]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert project_config().policy.ignore == ("JX105",)
    with pytest.raises(UsageError, match="no such configuration file"):
        project_config(tmp_path / "missing.yaml")
