"""Zero-config inputs through the command: targets whose annotations say their inputs
lower with only ``--dims``, and their names and result paths equal raw JAX's lowering of
the same function on inputs built by hand (an Equinox model annotated with jaxtyping on
every argument and field; an optax-style train step over a NamedTuple state). ``lint``
and ``diff-debug`` use the same inference; lint's cache key covers the annotations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, assert_valid_report, error_line, run_cli
from helpers import raw_main as oracle

pytest.importorskip("jaxtyping")
pytest.importorskip("equinox")

EQX = "sample_programs/libraries/eqx_annotated.py"
FIXTURE = "tests/fixtures/annotated.py"
EQX_DIMS = "batch=8,seq=16,vocab=100,width=32,classes=10"
STEP_DIMS = "batch=8,din=4,dout=3"

LOAD = """
import importlib.util, sys
def load_path(path, name):
    spec = importlib.util.spec_from_file_location(name, {repo!r} + "/" + path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
I = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.int32)
"""

CASES: dict[str, tuple[str, str]] = {
    "eqx": (
        f"{EQX}:loss",
        """
import equinox as eqx
m = load_path("sample_programs/libraries/eqx_annotated.py", "eqx_annotated")
model = eqx.filter_eval_shape(m.Model, 100, 32, 10, jax.random.key(0))
key = jax.eval_shape(lambda: jax.random.key(0))
lowered = jax.jit(m.loss).lower(model, I(8, 16), I(8), key)
""",
    ),
    "optax": (
        f"{FIXTURE}:train_step",
        """
m = load_path("tests/fixtures/annotated.py", "annotated")
P = lambda: m.Params(S(4, 3), S(3))
state = m.TrainState(P(), m.AdamState(I(), P(), P()))
lowered = m.train_step.lower(state, S(8, 4), S(8, 3), "constant")
""",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_names_equal_raw_jax_on_inputs_built_by_hand(case: str, lower_json: Any) -> None:
    target, call = CASES[case]
    dims = EQX_DIMS if case == "eqx" else STEP_DIMS
    raw = oracle(LOAD.format(repo=str(REPO)) + call)
    result, report = lower_json(target, "--dims", dims)
    assert result.returncode == 0, result.describe()
    lowered = sorted(
        (leaf for leaf in report["inputs"] if leaf["main_index"] is not None),
        key=lambda leaf: leaf["main_index"],
    )
    extra = {e["main_index"] for e in report["extra_args"]}
    user_args = [a for i, a in enumerate(raw["args"]) if i not in extra]
    assert [leaf["name"] for leaf in lowered] == [a["name"] for a in user_args]
    assert all(leaf["name"] for leaf in lowered)  # every argument named
    assert [leaf["name"] for leaf in report["outputs"]] == raw["results"]  # result_info
    assert report["inputs_from"]["source"] == "annotations"
    assert_valid_report(report)


def test_the_report_says_where_inputs_came_from(lower_text: Any, lower_json: Any) -> None:
    text = lower_text(f"{FIXTURE}:train_step", "--dims", STEP_DIMS).stdout
    line = next(line for line in text.splitlines() if line.startswith("inputs:"))
    assert line.split(None, 1)[1] == (
        "from annotations; dims din=4, dout=3, batch=8; Float → f32, Int → i32; "
        "schedule='constant' (static: its first Literal value); lr left to its default"
    )
    _, report = lower_json(f"{FIXTURE}:train_step", "--dims", STEP_DIMS, "--dtype", "bf16")
    assert report["inputs_from"]["dims"] == {"din": "4", "dout": "3", "batch": "8"}
    assert report["inputs_from"]["dtypes"] == {"Float": "bf16", "Int": "i32"}
    assert {leaf["dtype"] for leaf in report["inputs"]} == {"bfloat16", "int32"}
    # inputs given: no inputs_from
    _, given = lower_json("sample_programs/mlp.py:predict")
    assert given["inputs_from"] is None


def test_a_dim_with_no_size_is_one_line_exit_2(run_cli: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:attention", "--dims", "batch=8")
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: {FIXTURE}:attention: the annotations' dimensions seq, heads, dim have no "
        'size; give them with --dims seq=8,heads=8,dim=8 (or "dims" in the module\'s '
        "JXINSPECT entry, or dims: in jxinspect.yaml)"
    )
    assert "Traceback" not in result.stderr


def test_partly_annotated_arguments_are_named_then_given_by_name(run_cli: Any) -> None:
    missing = run_cli("lower", f"{FIXTURE}:partly", "--dims", "batch=8,dim=4")
    assert missing.returncode == 2, missing.describe()
    assert "table (no annotation), mask (Array has no shape)" in error_line(missing)
    given = run_cli("lower", f"{FIXTURE}:partly", "--dims", "batch=8,dim=4",
                    "--kwargs", "mask=bool[3], table={w: f32[2]}", "--format", "json")  # fmt: skip
    assert given.returncode == 0, given.describe()
    report = json.loads(given.stdout)
    assert [leaf["path"] for leaf in report["inputs"]] == ["x", "table['w']", "mask"]
    assert report["inputs_from"]["given"] == ["mask", "table"]


def test_a_dim_on_a_mesh_axis_shards_the_input(lower_json: Any) -> None:
    dims = "batch=8@data,seq=4,heads=2,dim=16"
    result, report = lower_json(f"{FIXTURE}:attention", "--dims", dims, "--mesh", "data=2")
    assert result.returncode == 0, result.describe()
    by_path = {leaf["path"]: leaf for leaf in report["inputs"]}
    assert by_path["q"]["shape"] == [8, 4, 2, 16]
    assert by_path["q"]["sharding"] is not None and by_path["mask"]["sharding"] is not None
    assert "data" in json.dumps(by_path["q"]["sharding"])


# ---------------------------------------------------------- lint and diff-debug ----

STATE = """\
from typing import NamedTuple

from jaxtyping import Array, Float


class Params(NamedTuple):
    w: Float[Array, "din dout"]
    b: Float[Array, " dout"]
"""

MODEL = """\
import jax.numpy as jnp
from jaxtyping import Array, Float

from state import Params


def predict(params: Params, x: Float[Array, "batch din"]) -> Float[Array, "batch dout"]:
    return x @ params.w + params.b


def loss(params: Params, x: Float[Array, "batch din"], y: Float[Array, "batch dout"]):
    return jnp.mean((predict(params, x) - y) ** 2)
"""

CONFIG = """\
defaults: {dims: {batch: 8, din: 4, dout: 3}}
targets:
  - target: model.py:predict
  - target: model.py:loss
  - target: eqx_annotated.py:loss
    dims: "batch=2,seq=4,vocab=10,width=8,classes=3"
"""
LINTED = ["model.py:predict", "model.py:loss", "eqx_annotated.py:loss"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "state.py").write_text(STATE, encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    shutil.copy(REPO / EQX, tmp_path / "eqx_annotated.py")
    (tmp_path / "jxinspect.yaml").write_text(CONFIG, encoding="utf-8")
    return tmp_path


def _how(stderr: str) -> dict[str, str]:
    found = {}
    for line in stderr.splitlines():
        name, _, what = line.partition(": ")
        if name in LINTED:
            found[name] = what.split()[0]
    return found


def test_lint_needs_no_args_for_annotated_targets(project: Path) -> None:
    first = run_cli("lint", "-v", "--format", "json", cwd=project)
    assert first.returncode == 0, first.describe()
    assert _how(first.stderr) == dict.fromkeys(LINTED, "staged")
    result = json.loads(first.stdout)
    assert sorted(t["target"] for t in result["targets"]) == sorted(LINTED)
    assert all(t["reached"] == "lowered" and t["error"] is None for t in result["targets"])
    # the cache key covers the annotations (in a project module the target imports) and dims
    assert set(_how(run_cli("lint", "-v", cwd=project).stderr).values()) == {"cached"}
    (project / "state.py").write_text(STATE.replace('" dout"', '"dout"'), encoding="utf-8")
    assert _how(run_cli("lint", "-v", cwd=project).stderr) == {
        "model.py:predict": "staged", "model.py:loss": "staged", "eqx_annotated.py:loss": "cached",
    }  # fmt: skip
    (project / "jxinspect.yaml").write_text(CONFIG.replace("width=8", "width=16"), "utf-8")
    assert _how(run_cli("lint", "-v", cwd=project).stderr) == {
        "model.py:predict": "cached", "model.py:loss": "cached", "eqx_annotated.py:loss": "staged",
    }  # fmt: skip


def test_diff_debug_infers_both_sides(project: Path) -> None:
    after = project / "after"
    after.mkdir()
    (after / "state.py").write_text(STATE, encoding="utf-8")
    (after / "model.py").write_text(MODEL.replace("x: Float", "inputs: Float").replace(
        "x @ params.w", "inputs @ params.w"), encoding="utf-8")  # fmt: skip
    result = run_cli("diff-debug", "model.py:predict", "after/model.py:predict", "--format",
                     "json", cwd=project)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert "inputs" in result.stdout and "renamed" in result.stdout


def test_a_declaration_gives_dims_and_flags_win_name_by_name(tmp_path: Path) -> None:
    (tmp_path / "state.py").write_text(STATE, encoding="utf-8")
    declared = 'JXINSPECT = {"predict": {"dims": {"batch": 2, "din": 4, "dout": 3}}}\n'
    (tmp_path / "model.py").write_text(declared + MODEL, encoding="utf-8")
    result = run_cli("lower", "model.py:predict", "--dims", "batch=16", "--format", "json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert report["inputs_from"]["dims"] == {"din": "4", "dout": "3", "batch": "16"}
    bad = run_cli("lower", "model.py:predict", "--dims", "batch=x", cwd=tmp_path)
    assert bad.returncode == 2 and error_line(bad).startswith("error: dims: bad spec at column")
