"""``jxinspect lint`` judges each compiled target's cost against the baseline (JX304,
JX305), end to end on the sample pairs ``sample_programs/diff/collective_added`` (an
all-gather of ``v`` added) and ``sample_programs/diff/remat_removed`` (``jax.checkpoint``
removed), with raw JAX as the oracle: the baseline holds the temporaries and all-gathers
that plain JAX's ``memory_analysis()`` and compiled HLO of the before side say, and the
findings name what plain JAX says of the after side.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, CliResult, run_python

from jxinspect.core.units import human_bytes

Run = Callable[..., CliResult]
PAIRS = REPO / "sample_programs" / "diff"
CONFIG = "compile: true\ntargets:\n  - target: layer.py\n  - target: grads.py\n"

ORACLE = r"""
import importlib.util, json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

def load(path):
    spec = importlib.util.spec_from_file_location(path.replace("/", "_")[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

mesh = Mesh(np.array(jax.devices()[:8]), ("fsdp",))
arg = jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, P("fsdp")))
w = jax.ShapeDtypeStruct((256, 256), jnp.float32)
x = jax.ShapeDtypeStruct((512, 256), jnp.float32)
found = {}
for side in ("before", "after"):
    layer = load(f"{sys.argv[1]}/collective_added/{side}.py").layer
    text = jax.jit(layer, out_shardings=NamedSharding(mesh, P("fsdp"))).lower(
        arg, arg, arg).compile().as_text()
    grads = load(f"{sys.argv[1]}/remat_removed/{side}.py").grads
    memory = jax.jit(grads).lower([w] * 4, x).compile().memory_analysis()
    found[side] = {"all_gathers": text.count(" all-gather(") + text.count(" all-gather-start("),
                   "temporaries": memory.temp_size_in_bytes}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict[str, int]]:
    done = run_python(ORACLE.replace("sys.argv[1]", repr(str(PAIRS))), warm=True)
    assert done.returncode == 0, done.describe()
    found: dict[str, dict[str, int]] = json.loads(done.stdout)
    return found


def project(folder: Path, side: str) -> Path:
    """A project of two targets, ``layer.py`` and ``grads.py``, at ``side`` of the pairs."""
    folder.mkdir(exist_ok=True)
    (folder / "jxinspect.yaml").write_text(CONFIG, encoding="utf-8")
    shutil.copy(PAIRS / "collective_added" / f"{side}.py", folder / "layer.py")
    shutil.copy(PAIRS / "remat_removed" / f"{side}.py", folder / "grads.py")
    return folder


def lint(run_cli: Run, folder: Path, *args: str, rc: int) -> dict[str, Any]:
    result = run_cli("lint", "--no-cache", "--format", "json", *args, cwd=folder)
    assert result.returncode == rc, result.describe()
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def new_findings(report: dict[str, Any], code: str, target: str = "") -> list[dict[str, Any]]:
    """The new findings of ``code`` (on ``target`` alone, where given)."""
    return [
        f
        for judged in report["targets"]
        for f in judged["findings"]
        if f["code"] == code and not f["baselined"] and target in ("", judged["target"])
    ]


def test_the_baseline_holds_each_compiled_targets_cost_as_raw_jax_says(
    run_cli: Run, tmp_path: Path, oracle: dict[str, dict[str, int]]
) -> None:
    folder = project(tmp_path / "repo", "before")
    written = run_cli("lint", "--no-cache", "--write-baseline", cwd=folder)
    assert written.returncode == 0, written.describe()
    baseline = json.loads((folder / "jxinspect-baseline.json").read_text(encoding="utf-8"))
    n = sum(entry["count"] for entry in baseline["findings"])
    # nothing else: not the MLIR diagnostic 0.4.35's HLO converter prints natively
    assert written.stderr == (
        f"wrote {n} finding{'s' if n != 1 else ''} and the compiled cost of 2 targets to the "
        "baseline jxinspect-baseline.json\n"
    )
    costs = {cost["target"]: cost for cost in baseline["costs"]}
    assert sorted(costs) == ["grads.py:grads", "layer.py:layer"]
    assert costs["grads.py:grads"]["temporaries"] == oracle["before"]["temporaries"]
    gathers = [c for c in costs["layer.py:layer"]["collectives"] if c["kind"] == "all-gather"]
    assert len(gathers) == oracle["before"]["all_gathers"]
    assert {tuple(c["paths"]) for c in gathers} == {("w",)}
    assert all(c["axes"] == "fsdp" and c["bytes_per_step"] > 0 for c in gathers)
    assert "line" not in json.dumps(baseline["costs"])  # an edit above moves no entry


def test_an_added_collective_and_grown_temporaries_fail_against_the_baseline(
    run_cli: Run, tmp_path: Path, oracle: dict[str, dict[str, int]]
) -> None:
    folder = project(tmp_path / "repo", "before")
    lint(run_cli, folder, "--write-baseline", rc=0)
    project(folder, "after")
    report = lint(run_cli, folder, rc=1)

    added = new_findings(report, "JX304", "layer.py:layer")
    assert oracle["after"]["all_gathers"] == oracle["before"]["all_gathers"] + 1
    assert [(f["path"], f["severity"]) for f in added] == [("v", "error")]
    assert new_findings(report, "JX304", "grads.py:grads") == []
    assert added[0]["message"].startswith("all-gather over fsdp moving v")
    assert added[0]["message"].endswith("per step per device, is not in the baseline")

    [grown] = new_findings(report, "JX305", "grads.py:grads")
    before, after = oracle["before"]["temporaries"], oracle["after"]["temporaries"]
    assert grown["message"] == (
        f"temporaries per device grew {(after - before) / before * 100:+.1f}% against the "
        f"baseline ({human_bytes(before)} → {human_bytes(after)}, XLA memory analysis), more "
        "than budgets.memory_growth's 10%"
    )
    assert grown["severity"] == "error" and grown["path"] is None

    lint(run_cli, folder, "--write-baseline", rc=0)  # accepting the change
    accepted = lint(run_cli, folder, rc=0)
    assert new_findings(accepted, "JX304") == new_findings(accepted, "JX305") == []


def test_memory_growth_and_a_baseline_without_costs(run_cli: Run, tmp_path: Path) -> None:
    """``budgets.memory_growth`` above the growth accepts it; a baseline written before
    costs were kept (findings only) reads, and judges no cost."""
    folder = project(tmp_path / "repo", "before")
    lint(run_cli, folder, "--write-baseline", rc=0)
    baseline = folder / "jxinspect-baseline.json"
    project(folder, "after")
    (folder / "jxinspect.yaml").write_text(
        CONFIG + "budgets: {memory_growth: 10.0}\nignore: [JX304]\n", encoding="utf-8"
    )
    assert new_findings(lint(run_cli, folder, rc=0), "JX305") == []  # 10.0: 1,000%

    (folder / "jxinspect.yaml").write_text(CONFIG, encoding="utf-8")
    old = json.loads(baseline.read_text(encoding="utf-8"))
    del old["costs"]
    baseline.write_text(json.dumps(old), encoding="utf-8")
    report = lint(run_cli, folder, rc=0)
    assert new_findings(report, "JX304") == new_findings(report, "JX305") == []
