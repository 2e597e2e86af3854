"""Zero-config inputs of train steps that take an optimizer's state, through the
command: the state is built by the module's own optimizer, and its leaves (paths, shapes,
dtypes) equal those of the state raw optax (``optim.init(params)``), Equinox
(``optim.init(eqx.filter(model, eqx.is_array))``) or Flax (``nnx.Optimizer(model, tx,
wrt=nnx.Param)``) makes; the program's names equal raw JAX's lowering on those inputs.
A state whose optimizer cannot be found is advised as a maker that works when followed,
never as an array spec; an annotation that cannot be resolved is named."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, error_line, raw_main, run_cli, run_python

pytest.importorskip("optax")
pytest.importorskip("equinox")
pytest.importorskip("jaxtyping")

FIXTURE = "tests/fixtures/optimizer_steps.py"
NNX_FIXTURE = "tests/fixtures/nnx_optimizer_step.py"
DIMS = "batch=8,din=4,dout=3"

LOAD = f"""
import importlib.util, sys
def load_path(path, name):
    spec = importlib.util.spec_from_file_location(name, {str(REPO)!r} + "/" + path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
"""

LEAVES = """
import json
def leaves(tree):
    return [[jax.tree_util.keystr(p), list(x.shape), str(x.dtype)]
            for p, x in jax.tree_util.tree_leaves_with_path(tree)]
"""


def raw_leaves(code: str) -> Any:
    """What ``code`` prints last as JSON, run by raw JAX, optax, Equinox or Flax."""
    result = run_python("import jax, jax.numpy as jnp\n" + LOAD + LEAVES + code, warm=True)
    assert result.returncode == 0, result.describe()
    return json.loads(result.stdout.strip().splitlines()[-1])


def report_leaves(report: dict[str, Any], prefix: str) -> list[list[Any]]:
    return [[leaf["path"].removeprefix(prefix), leaf["shape"], leaf["dtype"]]
            for leaf in report["inputs"] if leaf["path"].startswith(prefix)]  # fmt: skip


OPTAX_STATE = """
m = load_path("tests/fixtures/optimizer_steps.py", "optimizer_steps")
params = m.Params(jnp.zeros((4, 3)), jnp.zeros((3,)))
print(json.dumps(leaves(optax.adamw(1e-3).init(params))))
"""


@pytest.mark.parametrize("target", ["step", "unannotated_step"])
def test_an_optax_state_is_the_one_the_modules_optimizer_makes(target: str) -> None:
    """``opt_state: optax.OptState`` (whose alias needs optax's own ``ArrayTree``) and an
    unannotated ``opt_state`` passed to ``optim.update``: both the state
    ``optax.adamw(1e-3).init(params)`` makes."""
    result = run_cli("lower", f"{FIXTURE}:{target}", "--dims", DIMS, "--format", "json")
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    expected = raw_leaves("import optax\n" + OPTAX_STATE)
    assert report_leaves(report, "opt_state") == expected and len(expected) == 5
    raw = raw_main(f"""
{LOAD}
m = load_path("tests/fixtures/optimizer_steps.py", "optimizer_steps")
params = m.Params(S(4, 3), S(3))
lowered = jax.jit(m.{target}).lower(params, jax.eval_shape(m.optim.init, params), S(8, 4), S(8, 3))
""")
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]
    assert (
        "opt_state: built by jax.eval_shape(optim.init, params), nothing allocated"
        in (report["inputs_from"]["choices"])
    )


def test_an_equinox_models_state_is_over_its_arrays() -> None:
    result = run_cli("lower", f"{FIXTURE}:eqx_step", "--dims", DIMS, "--format", "json")
    assert result.returncode == 0, result.describe()
    expected = raw_leaves("""
import equinox as eqx
m = load_path("tests/fixtures/optimizer_steps.py", "optimizer_steps")
model = m.MLP(4, 3, key=jax.random.key(0))
print(json.dumps(leaves(m.optim.init(eqx.filter(model, eqx.is_array)))))
""")
    assert report_leaves(json.loads(result.stdout), "opt_state") == expected
    assert len(expected) == 9  # the count, and mu and nu of two layers' weight and bias


def test_an_nnx_optimizer_is_built_as_the_modules_own() -> None:
    nnx = pytest.importorskip("flax.nnx")
    if "model" not in inspect.signature(nnx.Optimizer.update).parameters:
        pytest.skip("this Flax's nnx.Optimizer.update takes no model (Flax 0.11 on)")
    target = f"{NNX_FIXTURE}:train_step"
    result = run_cli("lower", target, "--dims", "batch=2,din=3,dout=4", "--format", "json")
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    made = """
from flax import nnx
m = load_path("tests/fixtures/nnx_optimizer_step.py", "nnx_optimizer_step")
make = lambda: nnx.Optimizer(m.Model(3, 4, rngs=nnx.Rngs(0)), m.tx, wrt=nnx.Param)
optimizer = nnx.eval_shape(make)
"""
    expected = raw_leaves(made + "print(json.dumps(leaves(nnx.state(optimizer))))")
    built = sorted([leaf["shape"], leaf["dtype"]] for leaf in report["inputs"]
                   if leaf["path"].startswith("optimizer"))  # fmt: skip
    assert built == sorted(shape_dtype for _, *shape_dtype in expected) and len(built) == 6
    raw = raw_main(
        LOAD
        + made
        + """
model = nnx.eval_shape(lambda: m.Model(3, 4, rngs=nnx.Rngs(0)))
lowered = m.train_step.lower(model, optimizer, S(2, 3), S(2, 4))
"""
    )
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]


MAKER = """
import jax
import optax
from optimizer_steps import Params
def make_args():
    tx = optax.adamw(1e-3)
    params = Params(jax.ShapeDtypeStruct((4, 3), "float32"), jax.ShapeDtypeStruct((3,), "float32"))
    opt_state = jax.eval_shape(tx.init, params)
    x = jax.ShapeDtypeStruct((8, 4), "float32")
    y = jax.ShapeDtypeStruct((8, 3), "float32")
    return (tx, params, opt_state, x, y)
"""


def test_a_state_whose_optimizer_is_an_argument_is_advised_a_maker_that_works(
    tmp_path: Path,
) -> None:
    (tmp_path / "optimizer_steps.py").write_text((REPO / FIXTURE).read_text("utf-8"), "utf-8")
    result = run_cli("lower", "optimizer_steps.py:step_with_its_optimizer", "--dims", DIMS,
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "opt_state (an optimizer state, passed to tx.update; its optimizer is not the " in line
    assert line.endswith(
        "build it in a maker, e.g. `def make_args(): tx = ...; params = ...; opt_state = "
        "jax.eval_shape(tx.init, params); x = ...; y = ...; return (tx, params, opt_state, x, "
        "y)`, and give --args-from make_args"
    )
    assert "opt_state=f32" not in line
    (tmp_path / "maker.py").write_text(MAKER, encoding="utf-8")  # the advice, followed
    followed = run_cli("lower", "optimizer_steps.py:step_with_its_optimizer", "--args-from",
                       "maker.py:make_args", "--format", "json", cwd=tmp_path)  # fmt: skip
    assert followed.returncode == 0, followed.describe()
    paths = [leaf["path"] for leaf in json.loads(followed.stdout)["inputs"]]
    assert "opt_state[0].mu.w" in paths and "params.w" in paths


def test_an_annotation_that_cannot_be_resolved_is_named() -> None:
    result = run_cli("lower", f"{FIXTURE}:unresolvable", "--dims", DIMS)
    assert result.returncode == 2, result.describe()
    assert (
        "the annotations do not say opt_state (its annotation could not be resolved: "
        "NameError: name 'NotDefinedAnywhere' is not defined)"
    ) in error_line(result)


LINEN = """
import jax
from flax.training import train_state
from jaxtyping import Array, Float


def train_step(state: train_state.TrainState, x: Float[Array, "batch din"]):
    grads = jax.grad(lambda p: state.apply_fn(p, x).sum())(state.params)
    return state.apply_gradients(grads=grads)
"""


def test_a_flax_train_state_resolves_and_is_advised_a_maker(tmp_path: Path) -> None:
    """Its ``opt_state: optax.OptState`` field resolves (the line named no parameter); a
    state that its fields cannot build is advised as a maker, never an array spec."""
    pytest.importorskip("flax.training.train_state")
    (tmp_path / "linen_step.py").write_text(LINEN, encoding="utf-8")
    result = run_cli("lower", "linen_step.py:train_step", "--dims", "batch=2,din=3", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        "error: no example inputs for linen_step.py:train_step: the annotations do not say "
        "state (state.step: int | Array gives no shape); build it in a maker, e.g. `def "
        "make_args(): state = TrainState(...); x = ...; return (state, x)`, and give "
        "--args-from make_args"
    )
