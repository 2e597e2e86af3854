"""End-to-end tests of `jxinspect diff-debug` through the installed command: every sample
pair, every input kind (.py, target, JSON report, StableHLO text, mixes), files with the
same module name, the output formats, and bad inputs.

Each run is a subprocess (about a second); keep their number modest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import REPO, CliResult, error_line, run_python
from test_diff import assert_valid_diff

DIFF = "sample_programs/diff"
Run = Callable[..., CliResult]


def rows(stdout: str) -> list[str]:
    """Table rows with columns joined by `` | `` (cells hold at most single spaces)."""
    return [" | ".join(re.split(r"\s{2,}", line.strip())) for line in stdout.splitlines()]


def degraded(leaf: str, name: str, by_position: bool = False) -> str:
    """The row of an argument whose name degraded from its path to ``name``."""
    row = f"error | name | degraded | argument | {leaf} | {leaf} | {name}"
    return row + (" | by position" if by_position else "")


def pair(name: str) -> tuple[str, str]:
    return f"{DIFF}/{name}/before.py", f"{DIFF}/{name}/after.py"


def diff(run_cli: Run, *args: str, rc: int, cwd: Path | None = None) -> CliResult:
    result = run_cli("diff-debug", *args, cwd=cwd)
    assert result.returncode == rc, result.describe()
    assert "Traceback" not in result.stderr, result.describe()
    return result


# ---- the sample pairs -------------------------------------------------------------------------


def test_jit_to_pmap_degrades_names_and_changes_shardings(run_cli: Run) -> None:
    out = diff(run_cli, *pair("jit_to_pmap"), rc=1).stdout
    found = rows(out)
    for i, leaf in enumerate(("params['b']", "params['w']", "batch['x']", "batch['y']")):
        assert degraded(leaf, f"flat_args[{i}]") in found
        assert f"error | sharding | changed | argument | {leaf} | — | P('batch', None)" in found
    assert "warning | finding | more | finding | JX102 | 0 | 4" in found
    assert "stage | jit → reached lowered | pmap → reached lowered" in found
    assert found[-1].startswith("FAIL: 10 regressions (9 failing at --fail-on error)")


def test_static_argument_moved_is_neutral(run_cli: Run) -> None:
    out = diff(run_cli, *pair("static_moved"), rc=0).stdout
    assert "static | moved | static | n | position 1 | keyword" in rows(out)
    assert "unchanged: 1 of 1 arguments, 1 of 1 results" in out
    assert out.rstrip().endswith("ok: 0 regressions, 0 improvements, 1 neutral")


def test_sharding_changed_fails_unless_allowed(run_cli: Run) -> None:
    found = rows(diff(run_cli, *pair("sharding_changed"), rc=1).stdout)
    assert (
        "error | sharding | changed | argument | w | P(None, 'model') | P('model', None)" in found
    )
    assert (
        "error | sharding | changed | result | result | P('data', 'model') | P('data', None)"
        in found
    )
    allowed = diff(run_cli, *pair("sharding_changed"), "--allow", "sharding", rc=0).stdout
    assert any(
        row.startswith("error (allowed) | sharding | changed | argument | w | ")
        for row in rows(allowed)
    )
    assert "ok: 2 regressions (0 failing at --fail-on error)" in allowed


def test_renamed_parameter_in_files_of_the_same_name(run_cli: Run) -> None:
    """before/model.py and after/model.py load side by side in one process."""
    before, after = f"{DIFF}/param_renamed/before/model.py", f"{DIFF}/param_renamed/after/model.py"
    out = diff(run_cli, before, after, rc=0).stdout
    found = rows(out)
    assert "name | renamed | argument | x | x | inputs | by position" in found
    assert "name | renamed | argument | y | y | labels | by position" in found
    assert f"target | {before}:loss | {after}:loss" in found


def test_donation_dropped_as_json(run_cli: Run) -> None:
    out = diff(run_cli, *pair("donation_dropped"), "--format", "json", rc=1).stdout
    data = json.loads(out)
    assert_valid_diff(data)
    changes = data["targets"][0]["changes"]
    assert [
        (c["class"], c["kind"], c["path"], c["before"], c["after"], c["failing"]) for c in changes
    ] == [
        ("donation", "dropped", "state['b']", "aliased → out 0", None, True),
        ("donation", "dropped", "state['w']", "aliased → out 1", None, True),
    ]
    assert data["summary"] == {"regressions": 2, "failing": 2, "improvements": 0, "neutral": 0}


def test_result_key_renamed_as_markdown(run_cli: Run) -> None:
    out = diff(run_cli, *pair("result_key_renamed"), "--format", "markdown", rc=0).stdout
    assert out.startswith("## ✅ jxinspect diff-debug\n")
    assert (
        "| path | renamed | result | `result['probs']` | `result['probs']` | "
        "`result['probabilities']` | by position |"
    ) in out
    assert "<details><summary>Neutral (1)</summary>" in out


# ---- input kinds ---------------------------------------------------------------------------------

GENERATE_MLIR = """
import importlib.util, pathlib
import jax
from jax.sharding import NamedSharding, PartitionSpec as P
from jxinspect.tracer import seam

seam.simulate_cpu_devices(8)
repo, out = pathlib.Path({repo!r}), pathlib.Path({out!r})

def load(rel):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], repo / rel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

def S(*shape):
    return jax.ShapeDtypeStruct(shape, jax.numpy.float32)

step_args = ({{"w": S(8, 16), "b": S(8, 16)}}, {{"x": S(8, 16), "y": S(8, 16)}})
jit = jax.jit(load("{d}/jit_to_pmap/before.py").step).trace(*step_args).lower()
pmap = jax.pmap(load("{d}/jit_to_pmap/after.py").step, axis_name="batch").lower(*step_args)
(out / "jit.mlir").write_text(seam.lowered_text(jit, "stablehlo", True))
(out / "pmap.mlir").write_text(seam.lowered_text(pmap, "stablehlo", True))

mesh = seam.make_mesh((4, 2), ("data", "model"), jax.devices(), explicit=False)
specs = (P("data", None), P(None, "model"))
layer = jax.jit(load("{d}/sharding_changed/before.py").layer,
                in_shardings=tuple(NamedSharding(mesh, spec) for spec in specs),
                out_shardings=NamedSharding(mesh, P("data", "model")))
layer_args = (S(64, 256), S(256, 512))
with seam.partitioner("shardy"):
    (out / "shardy.mlir").write_text(seam.lowered_text(layer.lower(*layer_args), "stablehlo", True))
with seam.partitioner("gspmd"):
    (out / "gspmd.mlir").write_text(seam.lowered_text(layer.lower(*layer_args), "stablehlo", True))
"""


@pytest.fixture(scope="module")
def mlir_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """StableHLO text of the jit and pmap versions, and of one layer under Shardy and GSPMD."""
    out = tmp_path_factory.mktemp("mlir")
    result = run_python(GENERATE_MLIR.format(repo=str(REPO), out=str(out), d=DIFF))
    assert result.returncode == 0, result.describe()
    return out


def test_mlir_pair_matches_lost_names_by_position(run_cli: Run, mlir_files: Path) -> None:
    out = diff(run_cli, str(mlir_files / "jit.mlir"), str(mlir_files / "pmap.mlir"), rc=1).stdout
    found = rows(out)
    assert degraded("params['b']", "flat_args[0]", by_position=True) in found
    assert degraded("batch['y']", "flat_args[3]", by_position=True) in found
    assert "leaf | removed" not in out and "leaf | added" not in out
    assert "stage | unknown → reached lowered | unknown → reached lowered" in found


def test_shardy_and_gspmd_text_read_the_same(run_cli: Run, mlir_files: Path) -> None:
    out = diff(
        run_cli, str(mlir_files / "shardy.mlir"), str(mlir_files / "gspmd.mlir"), rc=0
    ).stdout
    assert "sharding | changed | argument" not in " ".join(rows(out))
    assert "ok: 0 regressions" in out


def test_python_against_mlir(run_cli: Run, mlir_files: Path) -> None:
    before, _ = pair("jit_to_pmap")
    found = rows(diff(run_cli, before, str(mlir_files / "pmap.mlir"), rc=1).stdout)
    assert degraded("batch['x']", "flat_args[2]", by_position=True) in found
    assert f"target | {before}:step | {mlir_files / 'pmap.mlir'}" in found


def test_saved_reports_and_a_mix(run_cli: Run, tmp_path: Path) -> None:
    before, after = pair("jit_to_pmap")
    for side, name in ((before, "before.json"), (after, "after.json")):
        saved = run_cli("lower", f"{side}:step", "--format", "json", "-o", str(tmp_path / name))
        assert saved.returncode == 0, saved.describe()
    reports = diff(run_cli, str(tmp_path / "before.json"), str(tmp_path / "after.json"), rc=1)
    staged = diff(run_cli, str(tmp_path / "before.json"), after, rc=1)
    for result in (reports, staged):
        found = rows(result.stdout)
        assert degraded("params['w']", "flat_args[1]") in found
        assert found[-1].startswith("FAIL: 10 regressions (9 failing at --fail-on error)")


def test_file_targets_with_flags_and_the_same_module_name(run_cli: Run, tmp_path: Path) -> None:
    for folder, body in (
        ("old", "def f(x, w):\n    return x @ w\n"),
        ("new", "def f(x, weights):\n    return x @ weights\n"),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "mymod.py").write_text(body)
    result = diff(
        run_cli,
        "old/mymod.py:f",
        "new/mymod.py:f",
        "--args",
        "f32[2,3], f32[3,4]",
        rc=0,
        cwd=tmp_path,
    )
    assert "name | renamed | argument | w | w | weights | by position" in rows(result.stdout)


def test_module_targets_with_staging_flags(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "mod_a.py").write_text("def f(x):\n    return x * 2\n")
    (tmp_path / "mod_b.py").write_text("def g(x):\n    return x * 3\n")
    result = diff(
        run_cli,
        "mod_a:f",
        "mod_b:g",
        "--args",
        "f32[8,4]",
        "--stage",
        "pmap",
        "--devices",
        "8",
        rc=0,
        cwd=tmp_path,
    )
    found = rows(result.stdout)
    assert "== f → g ==" in found
    assert "stage | pmap → reached lowered | pmap → reached lowered" in found
    assert "platform | cpu, 8 devices | cpu, 8 devices" in found
    assert "named | 0/1 arguments, 1/1 results | 0/1 arguments, 1/1 results" in found


def test_function_picks_one_of_several(run_cli: Run) -> None:
    out = diff(
        run_cli, "sample_programs/mlp.py", "sample_programs/mlp.py", "--function", "predict", rc=0
    ).stdout
    assert "== predict ==" in out and "\nno changes\n" in out
    assert "unchanged: 7 of 7 arguments, 2 of 2 results" in out


# ---- bad inputs ----------------------------------------------------------------------


def test_missing_file(run_cli: Run) -> None:
    _, after = pair("static_moved")
    line = error_line(diff(run_cli, "no/such/before.py", after, rc=2))
    assert line == "error: no such file: no/such/before.py"


def test_unparsable_mlir(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "bad.mlir").write_text("module {\n  func.func @main( {\n}\n")
    (tmp_path / "ok.mlir").write_text("module {}\n")
    line = error_line(diff(run_cli, "bad.mlir", "ok.mlir", rc=2, cwd=tmp_path))
    assert line.startswith("error: cannot parse bad.mlir as StableHLO: line 2:")


def test_json_that_is_not_a_report(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"schema": "jxinspect.diff/1"}))
    _, after = pair("static_moved")
    line = error_line(diff(run_cli, str(tmp_path / "x.json"), after, rc=2))
    assert "is not a jxinspect report (its schema is 'jxinspect.diff/1')" in line
    assert "jxinspect lower TARGET --format json" in line


def test_a_target_only_one_side_has(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        'JXINSPECT = {"f": {"args": "f32[2]"}, "g": {"args": "f32[2]"}}\n'
        "def f(x): return x\ndef g(x): return x\n"
    )
    (tmp_path / "b.py").write_text('JXINSPECT = {"f": {"args": "f32[2]"}}\ndef f(x): return x\n')
    line = error_line(diff(run_cli, "a.py", "b.py", rc=2, cwd=tmp_path))
    assert line == (
        "error: `g` is declared only in a.py: declare it on both sides, "
        "or compare one function with --function NAME"
    )


def test_user_code_that_fails(run_cli: Run) -> None:
    _, after = pair("static_moved")
    line = error_line(diff(run_cli, "tests/fixtures/import_raises.py:f", f"{after}:smooth", rc=3))
    assert line.startswith("error: importing tests/fixtures/import_raises.py failed: ")
