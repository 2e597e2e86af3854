"""The project's rule settings (``jxinspect.yaml`` found from the working folder) judge
every report, as ``jxinspect lint`` judges: ``record``'s and ``diff-debug``'s too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, run_cli

RULES = """
ignore: [JX105]             # an unused argument is accepted here
budgets:
  bytes_per_device: 1KiB
severity:
  JX302: error
"""

BEFORE = """
def step(x, unused):
    return x * 2


JXINSPECT = {"step": {"args": "f32[8], f32[4]"}}
"""

AFTER = """
def step(x, unused):
    return x * 2 + unused.sum()


JXINSPECT = {"step": {"args": "f32[256,256], f32[4]"}}
"""

RUN = """
import jax
import jax.numpy as jnp

import steps

jax.jit(steps.step)(jnp.ones((256, 256)), jnp.ones(4))
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "jxinspect.yaml").write_text(RULES, encoding="utf-8")
    (tmp_path / "steps.py").write_text(BEFORE, encoding="utf-8")
    (tmp_path / "run.py").write_text(RUN, encoding="utf-8")
    (tmp_path / "before.py").write_text(BEFORE, encoding="utf-8")
    (tmp_path / "after.py").write_text(AFTER, encoding="utf-8")
    return tmp_path


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_recording_is_judged_with_the_project_rules_when_read(project: Path) -> None:
    runs = project / "runs"
    result = run_cli("record", "-o", runs, "--", *WARM_PYTHON, "run.py", cwd=project)
    assert result.returncode == 0, result.describe()
    (entry,) = _json(runs / "index.json")["functions"]
    assert _json(runs / entry["folder"] / "report.json")["findings"] == []  # facts only
    shown = run_cli("show", runs / entry["folder"], "--format", "json", cwd=project)
    report = json.loads(shown.stdout)
    # the defaults would report JX105 (`unused` is pruned) and no budget
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("JX302", "error")]
    (listed,) = json.loads(run_cli("show", runs, "--format", "json", cwd=project).stdout)[
        "functions"
    ]
    assert listed["findings"] == 1


def test_diff_debug_judges_with_the_project_rules(project: Path) -> None:
    result = run_cli("diff-debug", "before.py", "after.py", "--format", "json", cwd=project)
    assert result.returncode == 1, result.describe()
    changes = json.loads(result.stdout)["targets"][0]["changes"]
    findings = [(c["path"], c["kind"], c["failing"]) for c in changes if c["class"] == "finding"]
    # the defaults: JX105 fewer (after uses `unused`), and no JX302 at all
    assert findings == [("JX302", "more", True)]


def test_a_broken_project_configuration_stops_record_before_the_run(project: Path) -> None:
    (project / "jxinspect.yaml").write_text("budgets: [1]\n", encoding="utf-8")
    runs = project / "runs"
    result = run_cli("record", "-o", runs, "--", *WARM_PYTHON, "run.py", cwd=project)
    assert result.returncode == 2, result.describe()
    assert not runs.exists()


LAYERS = """
import jax.numpy as jnp


def gathered(x, w):
    return jnp.tanh(x @ w)


def allowed(x, w):
    return jnp.tanh(x @ w)


FSDP = {"devices": 8, "mesh": "fsdp=8", "args": "f32[64,256], f32[256,256]",
        "in_specs": "P('fsdp', None), P('fsdp', None)", "out_specs": "P('fsdp', None)"}
JXINSPECT = {"gathered": FSDP, "allowed": {**FSDP, "budgets": {"forbid_collectives": []}}}
"""


def lint_forbidding(folder: Path, module: str, forbidden: str) -> list[dict[str, Any]]:
    """``lint`` of ``layers.py`` (``module``), compiled, under ``budgets:
    {forbid_collectives: forbidden}``: each target's result, the gate failed (exit 1)."""
    (folder / "layers.py").write_text(module, encoding="utf-8")
    config = f"compile: true\nbudgets: {{forbid_collectives: {forbidden}}}\n"
    (folder / "jxinspect.yaml").write_text(
        config + "targets:\n  - target: layers.py\n", encoding="utf-8"
    )
    result = run_cli("lint", "--format", "json", cwd=folder)
    assert result.returncode == 1, result.describe()
    return json.loads(result.stdout)["targets"]  # type: ignore[no-any-return]


def test_lint_forbids_a_collective_kind_per_project_and_per_target(tmp_path: Path) -> None:
    """JX303 through lint: the budgets cross to the workers, the compiled report is
    judged, and a declaration's own budgets replace the project's list (``allowed``
    all-gathers its weight too)."""
    found = [
        (target["target"], f["code"], f["message"], f["path"])
        for target in lint_forbidding(tmp_path, LAYERS, "[all-gather, all-to-all]")
        for f in target["findings"]
    ]
    # the gather's line as lower --compile names it (0.12 keeps none for it)
    shown = run_cli("lower", "layers.py:gathered", "--compile", "-f", "json", cwd=tmp_path)
    [gather] = json.loads(shown.stdout)["compiled"]["collectives"]
    line = f" (layers.py:{gather['line']})" if gather["line"] is not None else ""
    assert found == [
        ("layers.py:gathered", "JX303",
         f"all-gather over fsdp moving w{line} is forbidden (budgets.forbid_collectives)", "w"),
    ]  # fmt: skip


SIZED = """
import jax.numpy as jnp


def weights(x, w):
    return jnp.tanh(x @ w)


def bias(x, b):
    return jnp.tanh(x + b)


FSDP = {"devices": 8, "mesh": "fsdp=8", "out_specs": "P('fsdp', None)"}
JXINSPECT = {
    "weights": {**FSDP, "args": "f32[64,256], f32[256,256]",
                "in_specs": "P('fsdp', None), P('fsdp', None)"},
    "bias": {**FSDP, "args": "f32[64,256], f32[256]", "in_specs": "P('fsdp', None), P('fsdp')"},
}
"""


def test_lint_forbids_a_collective_kind_over_a_size(tmp_path: Path) -> None:
    """``"all-gather > 16 KiB"``: the weights' gather (32 KiB per device) fails the gate,
    named with its size and the limit; the bias program's gathers (8 KiB and 128 B per
    device) pass."""
    found = lint_forbidding(tmp_path, SIZED, "['all-gather > 16 KiB']")
    targets = {t["target"]: t for t in found}
    shown = run_cli("lower", "layers.py:bias", "--compile", "-f", "json", cwd=tmp_path)
    gathers = json.loads(shown.stdout)["compiled"]["collectives"]
    assert gathers and all(c["kind"] == "all-gather" and c["bytes"] <= 16 << 10 for c in gathers)
    assert targets["layers.py:bias"]["findings"] == []
    [finding] = targets["layers.py:weights"]["findings"]
    assert (finding["code"], finding["path"]) == ("JX303", "w")
    assert finding["message"].endswith(
        ", 32.0 KiB per device, is forbidden (budgets.forbid_collectives: all-gather > 16.0 KiB)"
    )


def test_a_cost_budget_compiles_the_target_lint_would_not(tmp_path: Path) -> None:
    """A budget that reads the compiled program, with no ``compile:``: lint compiles the
    target for it (one place decides what a policy needs staged), and the FSDP layer's
    all-gather fails the gate as it does with ``--compile``."""
    (tmp_path / "layers.py").write_text(LAYERS, encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text(
        "budgets: {temporaries_per_device: 1, forbid_collectives: [all-gather]}\n"
        "targets:\n  - target: layers.py:gathered\n",
        encoding="utf-8",
    )
    plain = run_cli("lint", "--format", "json", "--no-cache", cwd=tmp_path)
    compiled = run_cli("lint", "--format", "json", "--no-cache", "--compile", cwd=tmp_path)
    assert plain.returncode == compiled.returncode == 1, (plain.describe(), compiled.describe())
    codes = [[f["code"] for f in json.loads(r.stdout)["targets"][0]["findings"]]
             for r in (plain, compiled)]  # fmt: skip
    assert codes[0] == codes[1] and "JX303" in codes[0]


def test_lower_without_compile_cannot_judge_a_cost_budget(tmp_path: Path) -> None:
    """``lower`` stages what it is asked: without ``--compile`` a cost budget is not
    passed but one finding at JX303's severity says it could not be judged; ignored, it
    is silent."""
    (tmp_path / "layers.py").write_text(LAYERS, encoding="utf-8")
    config = tmp_path / "jxinspect.yaml"
    config.write_text("budgets: {forbid_collectives: [all-gather]}\n", encoding="utf-8")
    result = run_cli("lower", "layers.py:gathered", "-f", "json", "--fail-on", "error",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 1, result.describe()
    findings = json.loads(result.stdout)["findings"]
    found = [(f["code"], f["severity"], f["message"]) for f in findings]
    assert found == [("JX303", "error", "cannot judge JX303: the compiled program was not read "
                      "(compile: true, or --compile)")]  # fmt: skip
    config.write_text(
        "ignore: [JX303]\nbudgets: {forbid_collectives: [all-gather]}\n", encoding="utf-8"
    )
    ignored = run_cli("lower", "layers.py:gathered", "--fail-on", "error", cwd=tmp_path)
    assert ignored.returncode == 0, ignored.describe()
