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
from helpers import REPO, assert_valid_report, error_line, lint_outcomes, run_cli, run_python
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
    assert "table (no annotation), mask (Array gives no shape)" in error_line(missing)
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
    """``--verbose`` lines of this module's targets: target → cached / staged / failed."""
    return lint_outcomes(stderr, LINTED)


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


# ------------------------------------------- annotations that pin no shape, unions ----


def test_array_like_is_never_built_as_a_member_of_its_union(run_cli: Any) -> None:
    """``jax.typing.ArrayLike`` (``Array | ndarray | bool | ...``) gives no shape: one
    line naming the argument and how to give it, never a ``bool[]`` program."""
    result = run_cli("lower", f"{FIXTURE}:softmax_loss")
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert line.startswith(f"error: no example inputs for {FIXTURE}:softmax_loss: the "
                           "annotations do not say logits (Array | ndarray | bool")  # fmt: skip
    assert "gives no shape), labels (" in line and '--kwargs "logits=f32[8]"' in line
    given = run_cli("lower", f"{FIXTURE}:softmax_loss", "--kwargs",
                    "logits=f32[8,10], labels=f32[8,10]", "--format", "json")  # fmt: skip
    assert given.returncode == 0, given.describe()
    report = json.loads(given.stdout)
    assert [(leaf["name"], leaf["dtype"]) for leaf in report["inputs"]] == [
        ("logits", "float32"), ("labels", "float32")]  # fmt: skip


def test_a_python_int_under_a_type_checker_is_listed_with_its_two_choices(run_cli: Any) -> None:
    target = f"{FIXTURE}:windowed"
    missing = run_cli("lower", target, "--dims", "batch=2,time=5")
    assert missing.returncode == 2, missing.describe()
    assert ("window_size (a Python int: static with --static-argnames window_size (and "
            "--kwargs window_size=3), or traced as jit traces one with --kwargs "
            "window_size=3)") in error_line(missing)  # fmt: skip
    traced = run_cli("lower", target, "--dims", "batch=2,time=5", "--kwargs", "window_size=3")
    assert traced.returncode == 3, traced.describe()
    line = error_line(traced)  # beartype's parameter name kept, and what to do
    assert "typechecking parameter 'window_size'" in line and "Expected type: <class 'int'>" in line
    assert line.endswith("make it static with --static-argnames window_size")
    static = run_cli("lower", target, "--dims", "batch=2,time=5", "--kwargs", "window_size=3",
                     "--static-argnames", "window_size", "--format", "json")  # fmt: skip
    assert static.returncode == 0, static.describe()
    raw = oracle(
        LOAD.format(repo=str(REPO))
        + """
m = load_path("tests/fixtures/annotated.py", "annotated")
lowered = jax.jit(m.windowed, static_argnames="window_size").lower(S(2, 5), window_size=3)
"""
    )
    report = json.loads(static.stdout)
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]
    assert [s["path"] for s in report["static_args"]] == ["window_size"]


def test_a_traced_python_float_keeps_its_weak_type_as_a_real_call_does(lower_json: Any) -> None:
    """``scale=2.0`` is traced as ``jit`` traces a Python float: weakly typed, so that
    ``x * scale`` stays bf16 (a strong f32 scalar would make it f32)."""
    raw = oracle(
        LOAD.format(repo=str(REPO))
        + """
m = load_path("tests/fixtures/annotated.py", "annotated")
lowered = jax.jit(m.scaled).lower(jax.ShapeDtypeStruct((4,), jnp.bfloat16), 2.0)
print("OUT", lowered.out_info.dtype)
"""
    )
    result, report = lower_json(f"{FIXTURE}:scaled", "--dims", "n=4", "--dtype", "bf16",
                                "--kwargs", "scale=2.0")  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert [o["dtype"] for o in report["outputs"]] == ["bfloat16"]
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]


def test_the_dims_given_pick_a_unions_member(run_cli: Any) -> None:
    target = f"{FIXTURE}:either"
    for dims, shape in (("batch=2,keys=3", [2, 3]), ("batch=2,queries=5", [2, 5])):
        result = run_cli("lower", target, "--dims", dims, "--format", "json")
        assert result.returncode == 0, result.describe()
        report = json.loads(result.stdout)
        assert report["inputs"][0]["shape"] == shape
        member = "keys" if "keys" in dims else "queries"
        assert (f"x: built as Float[Array, 'batch {member}'] of Float[Array, 'batch keys'] | "
                "Float[Array, 'batch queries'] (the member the dims size)"
                in report["inputs_from"]["choices"])  # fmt: skip
        assert not any("unused" in c for c in report["inputs_from"]["choices"])
    both = run_cli("lower", target, "--dims", "batch=2,keys=3,queries=5")
    assert both.returncode == 2, both.describe()
    assert ("x (Float[Array, 'batch keys'] | Float[Array, 'batch queries']: the dims given "
            "size 2 of its members; give its value") in error_line(both)  # fmt: skip
    assert '--kwargs "x=f32[2,3]"' in error_line(both)


def test_a_mistyped_dim_is_named_with_the_one_it_meant(run_cli: Any, lower_json: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:attention", "--dims", "btach=8,seq=4,heads=2,dim=16")
    assert result.returncode == 2, result.describe()
    assert error_line(result).endswith(
        "; btach is in no annotation of this target; did you mean batch?"
    )
    _, report = lower_json(f"{FIXTURE}:attention", "--dims", "batch=8,seq=4,heads=2,dim=16,hedas=3")
    assert ("dims unused: hedas is in no annotation of this target; did you mean heads?"
            in report["inputs_from"]["choices"])  # fmt: skip


def test_dims_with_given_inputs_are_said_to_be_unused(lower_json: Any) -> None:
    _, report = lower_json(f"{FIXTURE}:attention", "--dims", "batch=8",
                           "--args", "f32[2,3,4,5], f32[2,3,4,5], bool[2,3,3]")  # fmt: skip
    assert report["inputs_from"] is None
    assert (
        "dims unused (batch): the inputs are given (args, kwargs or args_from), and dims "
        "only size inputs read from the annotations"
    ) in report["notes"]


def test_kwargs_follow_the_signature_whether_or_not_annotations_fill_the_rest(
    lower_json: Any,
) -> None:
    """One rule: the program's arguments in the signature's order (``zeta``, ``alpha``),
    all given by name or some read from the annotations."""
    raw = oracle(
        LOAD.format(repo=str(REPO))
        + """
m = load_path("tests/fixtures/annotated.py", "annotated")
lowered = jax.jit(m.ordered).lower(S(3), S(4))
"""
    )
    expected = [a["name"] for a in raw["args"]]
    assert expected == ["zeta", "alpha"]
    _, given = lower_json(f"{FIXTURE}:ordered", "--kwargs", "alpha=f32[4], zeta=f32[3]")
    _, inferred = lower_json(f"{FIXTURE}:ordered", "--kwargs", "alpha=f32[4]", "--dims", "n=3")
    for report in (given, inferred):
        assert [leaf["name"] for leaf in report["inputs"]] == expected
        assert [leaf["shape"] for leaf in report["inputs"]] == [[3], [4]]


def test_dims_every_target_is_given_are_no_note_where_unused(project: Path) -> None:
    """``defaults: {dims: ...}`` size every target's dims: a target that does not use
    some of them is not told so; dims it is given itself are."""
    quiet = run_cli("lower", "eqx_annotated.py:loss", "--format", "json", cwd=project)
    assert quiet.returncode == 0, quiet.describe()
    choices = json.loads(quiet.stdout)["inputs_from"]["choices"]
    assert not any("unused" in c for c in choices), choices
    told = run_cli("lower", "eqx_annotated.py:loss", "--dims", "din=5", "--format", "json",
                   cwd=project)  # fmt: skip
    assert told.returncode == 0, told.describe()
    assert (
        "dims unused: din is in no annotation of this target"
        in (json.loads(told.stdout)["inputs_from"]["choices"])
    )


# ------------------------------------------------- models built by their constructors ----

MODELS = "tests/fixtures/eqx_models.py"


def test_an_equinox_model_of_stock_layers_is_built_by_its_constructor(lower_json: Any) -> None:
    """``eqx.nn.Linear``'s ``weight: Array`` says no shape and ``layers: list`` no length:
    the model is ``eqx.filter_eval_shape`` of its constructor, its ints sized by --dims."""
    raw = oracle(
        LOAD.format(repo=str(REPO))
        + """
import equinox as eqx
m = load_path("tests/fixtures/eqx_models.py", "eqx_models")
model = eqx.filter_eval_shape(m.MLP, 3, 8, 2, jax.random.key(0))
lowered = jax.jit(m.loss).lower(model, S(4, 3), S(4, 2))
"""
    )
    result, report = lower_json(f"{MODELS}:loss", "--dims", "batch=4,din=3,width=8,dout=2")
    assert result.returncode == 0, result.describe()
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]
    assert [leaf["path"] for leaf in report["inputs"]][:2] == [
        "model.layers[0].weight", "model.layers[0].bias"]  # fmt: skip
    assert (
        "model: built by eqx.filter_eval_shape(MLP, din=3, width=8, dout=2, "
        "key=jax.random.key(0)), nothing allocated"
    ) in report["inputs_from"]["choices"]


def test_a_model_whose_constructor_needs_more_is_advised_a_maker(run_cli: Any) -> None:
    result = run_cli("lower", f"{MODELS}:loss", "--dims", "batch=4,din=3,width=8")
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "model (an eqx.Module MLP's fields do not say its arrays" in line
    assert line.endswith(
        "its constructor needs dout); build it in a maker, e.g. `def make_args(): model = "
        "eqx.filter_eval_shape(MLP, din=3, width=8, dout=..., key=jax.random.key(0)); x = ...; "
        "y = ...; return (model, x, y)`, and give --args-from make_args (a Python int "
        "argument named like a dim takes its --dims size)"
    )
    assert '--kwargs "model=' not in line


def test_equinoxs_mnist_model_is_built_from_its_key_alone(lower_json: Any) -> None:
    made = run_python(
        LOAD.format(repo=str(REPO)).replace("I = lambda", "import jax, json\nI = lambda")
        + """
import equinox as eqx
m = load_path("tests/fixtures/eqx_models.py", "eqx_models")
model = eqx.filter_eval_shape(m.CNN, jax.random.key(0))
arrays = [(jax.tree_util.keystr(p), list(x.shape))
          for p, x in jax.tree_util.tree_leaves_with_path(model)
          if isinstance(x, jax.ShapeDtypeStruct)]
print(json.dumps(arrays))
""",
        warm=True,
    )
    assert made.returncode == 0, made.describe()
    raw = json.loads(made.stdout.strip().splitlines()[-1])
    result, report = lower_json(f"{MODELS}:cnn_loss", "--dims", "batch=4")
    assert result.returncode == 0, result.describe()
    leaves = [[leaf["path"].removeprefix("model"), leaf["shape"]]
              for leaf in report["inputs"] if leaf["path"].startswith("model")]  # fmt: skip
    assert leaves == raw and len(raw) == 8
    assert all(leaf["status"] == "ok" for leaf in report["inputs"])


def test_a_methods_self_is_built_as_its_class(lower_text: Any) -> None:
    text = lower_text(f"{MODELS}:MLP.__call__", "--dims", "din=3,width=8,dout=2").stdout
    assert f"function:     MLP.__call__ at {MODELS}:" in text  # relative to the working folder
    assert "self: built by eqx.filter_eval_shape(MLP, din=3, width=8, dout=2, " in text
    assert "self.layers[1].bias" in text


def test_an_nnx_model_is_built_by_nnx_eval_shape(lower_json: Any) -> None:
    pytest.importorskip("flax.nnx")
    made = """
from flax import nnx
m = load_path("tests/fixtures/nnx_models.py", "nnx_models")
model = nnx.eval_shape(lambda: m.MLP(3, 4, rngs=nnx.Rngs(0)))
lowered = jax.jit(m.loss).lower(model, jax.ShapeDtypeStruct((2, 3), "float32"))
"""
    probe = run_python("import jax\n" + LOAD.format(repo=str(REPO)) + made, warm=True)
    if probe.returncode != 0 and "as an abstract array" in probe.stderr:
        pytest.skip("this Flax's nnx.Module is no pytree: raw jax.jit refuses it as well")
    raw = oracle(LOAD.format(repo=str(REPO)) + made)
    result, report = lower_json(
        "tests/fixtures/nnx_models.py:loss", "--dims", "batch=2,din=3,dout=4"
    )
    assert result.returncode == 0, result.describe()
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]
    assert (
        "model: built by nnx.eval_shape(lambda: MLP(din=3, dout=4, rngs=nnx.Rngs(0))), "
        "nothing allocated"
    ) in report["inputs_from"]["choices"]


BOUND = """
from __future__ import annotations

import dataclasses
from functools import partial
from typing import NamedTuple

import jax
from jaxtyping import Array, Float


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float = 2.0


class State(NamedTuple):
    w: Float[Array, "din dout"]
    table: dict


def f(x: Float[Array, "batch din"], state: State, config: Config) -> Float[Array, "batch dout"]:
    return (x @ state.w) * config.scale


def g(x: Float[Array, "batch din"], config: Config, state: State) -> Float[Array, "batch dout"]:
    return (x @ state.w) * config.scale


config = Config()
mesh = jax.make_mesh((2,), ("data",), **({"axis_types": (jax.sharding.AxisType.Auto,)}
                                         if hasattr(jax.sharding, "AxisType") else {}))
P = jax.sharding.PartitionSpec
shard_map = getattr(jax, "shard_map", None)
if shard_map is None:
    from jax.experimental.shard_map import shard_map
step = jax.jit(shard_map(partial(f, config=config), mesh=mesh, in_specs=(P("data"), P()),
                         out_specs=P("data")))
middle = jax.jit(partial(g, config=config))
"""

BOUND_MAKER = """
import jax
from steps import State
def make_args():
    x = jax.ShapeDtypeStruct((8, 4), "float32")
    state = State(jax.ShapeDtypeStruct((4, 3), "float32"), {})
    return %s
"""


@pytest.mark.parametrize(
    ("target", "returned"),
    [("step", "(x, state)"), ("middle", "((x,), {'state': state})")],
)
def test_advice_builds_only_what_a_partial_leaves_to_pass(
    tmp_path: Path, target: str, returned: str
) -> None:
    """``jax.jit(shard_map(partial(f, config=config)))`` takes ``f``'s arguments but
    ``config``: the advice builds those (after a parameter bound by keyword, by name),
    and followed, the function stages."""
    (tmp_path / "steps.py").write_text(BOUND, encoding="utf-8")
    dims = ("--devices", "2", "--dims", "batch=8,din=4,dout=3")
    result = run_cli("lower", f"steps.py:{target}", *dims, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "config" not in line
    assert line.endswith(
        "the annotations do not say state (state.table: dict gives no shape); build it in a "
        f"maker, e.g. `def make_args(): x = ...; state = State(...); return {returned}`, and "
        "give --args-from make_args"
    )
    (tmp_path / "maker.py").write_text(BOUND_MAKER % returned, encoding="utf-8")
    followed = run_cli("lower", f"steps.py:{target}", "--devices", "2", "--args-from",
                       "maker.py:make_args", "--format", "json", cwd=tmp_path)  # fmt: skip
    assert followed.returncode in (0, 1), followed.describe()
    report = json.loads(followed.stdout)
    assert [leaf["path"] for leaf in report["inputs"]] == ["x", "state.w"]
