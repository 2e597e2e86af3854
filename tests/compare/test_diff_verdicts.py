"""``diff-debug --compile`` judges a change by what it does, end to end on a user's own
training step (plain JAX and optax's AdamW, a ``data=2 × model=4`` mesh of 8 simulated
CPU devices the module sets up itself, a ``make()`` maker).

Before: the tied embedding left replicated and the batch donated (a donation no output
can take: JX301). After: the embedding split by rows over ``model`` and no donation. The
fix must read as improvements (exit 0): each of the embedding's parameter, AdamW ``mu``
and ``nu`` once (not once declared and once compiled), the arguments and temporaries per
device falling as XLA's own ``memory_analysis()`` says; the dropped donation neutral. The
same diff the other way round (sharded → replicated) fails. The same fix in a Flax NNX
model (``nnx.with_partitioning``, ``nnx.Optimizer``) reads the same way. Last, the mesh:
a change of its axis types (Auto → Explicit) is a change, and the header names every mesh
a step's arguments are laid out over.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import CliResult, needs_axis_types, run_python
from test_diff import assert_valid_diff
from test_diff_cli import rows
from test_diff_cost import percent, temporaries_grew

from jxinspect.core.units import human_bytes

Run = Callable[..., CliResult]

STEP = """
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))
VOCAB, DIM = 4096, 256
EMBED = EMBED_SPEC
tx = optax.adamw(1e-3)


def init():
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"embed": jax.random.normal(k1, (VOCAB, DIM)) * 0.02,
            "w": jax.random.normal(k2, (DIM, DIM)) * 0.02}


def loss_fn(params, tokens):
    x = params["embed"][tokens]
    x = jnp.tanh(x @ params["w"])
    logits = x @ params["embed"].T
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens).mean()


DECORATOR
def train_step(params, opt_state, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def _laid_out(tree, specs):
    return jax.tree.map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s)),
        tree, specs)


def make():
    specs = {"embed": EMBED, "w": P(None, "model")}
    params = _laid_out(jax.eval_shape(init), specs)
    opt_state = jax.eval_shape(tx.init, params)
    opt_specs = jax.tree.map(lambda _: P(), opt_state)
    opt_specs[0].mu.update(specs)
    opt_specs[0].nu.update(specs)
    tokens = jax.ShapeDtypeStruct((16, 128), jnp.int32,
                                  sharding=NamedSharding(mesh, P("data", None)))
    return params, _laid_out(opt_state, opt_specs), tokens
"""
SIDES = {
    "before": ("P()", "@partial(jax.jit, donate_argnums=(2,))"),
    "after": ("P('model', None)", "@jax.jit"),
}
EMBED_LEAVES = ("params['embed']", "opt_state[0].mu['embed']", "opt_state[0].nu['embed']")

ORACLE = r"""
import importlib.util, json, sys
found = {}
for side in ("before", "after"):
    spec = importlib.util.spec_from_file_location(side, f"{side}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    compiled = module.train_step.lower(*module.make()).compile()
    m = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    found[side] = {"arguments": m.argument_size_in_bytes, "outputs": m.output_size_in_bytes,
                   "temporaries": m.temp_size_in_bytes, "flops": cost["flops"]}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("verdicts")
    for side, (spec, decorator) in SIDES.items():
        text = STEP.replace("EMBED_SPEC", spec).replace("DECORATOR", decorator)
        (where / f"{side}.py").write_text(text, encoding="utf-8")
    return where


@pytest.fixture(scope="module")
def oracle(folder: Path) -> dict[str, dict[str, Any]]:
    done = run_python(ORACLE, cwd=folder, warm=True)
    assert done.returncode == 0, done.describe()
    found: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return found


def _diff(run_cli: Run, folder: Path, old: str, new: str, *more: str, rc: int) -> CliResult:
    result = run_cli(
        "diff-debug", f"{old}.py:train_step", f"{new}.py:train_step", "--compile",
        "--args-from", "make", *more, cwd=folder,
    )  # fmt: skip
    assert result.returncode == rc, result.describe()
    return result


def test_the_fix_reads_as_improvements(
    run_cli: Run, folder: Path, oracle: dict[str, dict[str, Any]]
) -> None:
    old, new = oracle["before"], oracle["after"]
    assert new["arguments"] < old["arguments"] * 0.9  # the premise: XLA's own figures
    assert new["temporaries"] < old["temporaries"] * 0.9
    data = json.loads(_diff(run_cli, folder, "before", "after", "-f", "json", rc=0).stdout)
    assert_valid_diff(data)
    assert not data["failed"]
    [target] = data["targets"]
    changes = target["changes"]
    shardings = [c for c in changes if c["class"] == "sharding" and c["where"] == "input"]
    # once per leaf (declared and compiled agree), each a quarter of 4 MiB a device
    quarter = ("improvement", "replicated, 4.0 MiB per device",
               "P('model', None), 1.0 MiB per device")  # fmt: skip
    found = sorted((c["path"], c["verdict"], c["before"], c["after"]) for c in shardings)
    assert found == sorted((path, *quarter) for path in EMBED_LEAVES)
    [donation] = [c for c in changes if c["class"] == "donation"]
    assert (donation["path"], donation["kind"], donation["verdict"]) == (
        "tokens", "dropped", "neutral",
    )  # fmt: skip
    memory = {c["path"]: c for c in changes if c["class"] == "memory"}
    for kind in ("arguments", "temporaries"):
        assert (memory[kind]["kind"], memory[kind]["verdict"]) == ("shrank", "improvement")
        assert memory[kind]["before"] == human_bytes(old[kind])
        assert memory[kind]["after"] == (
            f"{human_bytes(new[kind])} ({percent(old[kind], new[kind])})"
        )
    flops = [c for c in changes if c["class"] == "flops"]
    if new["flops"] < old["flops"] * 0.9:  # counted where XLA's FLOPs fall past 10%
        assert [c["verdict"] for c in flops] == ["improvement"]
    else:
        assert flops == []
    assert not [c for c in changes if c["failing"]]
    improvements = [c for c in changes if c["verdict"] == "improvement"]
    assert target["summary"]["improvements"] == len(improvements) >= 5
    # No regression of severity error: a collective the fix adds is a warning, for the
    # bytes the collectives move per step fall past 10%.
    assert {c["severity"] for c in changes if c["verdict"] == "regression"} <= {"warning"}
    moved = {m["measure"]: m for m in target["cost"]["measures"]}["moved"]
    assert moved["after"] < moved["before"] * 0.9


def test_the_fix_as_text_says_no_failure(run_cli: Run, folder: Path) -> None:
    out = _diff(run_cli, folder, "before", "after", rc=0).stdout
    found = rows(out)
    assert not [line for line in found if line.startswith(("failed:", "policy:", "fails on"))]
    assert found[-1].startswith("ok: ")
    assert "0 failing at --fail-on error" in found[-1] or found[-1].startswith("ok: 0 regressions")


def test_lowered_alone_the_fix_passes_too(run_cli: Run, folder: Path) -> None:
    """Without ``--compile`` JAX leaves the donation to the compiler; no output is
    i32[16,128], so none could take it: dropping it is neutral here too."""
    result = run_cli("diff-debug", "before.py:train_step", "after.py:train_step",
                     "--args-from", "make", "-f", "json", cwd=folder)  # fmt: skip
    assert result.returncode == 0, result.describe()
    [target] = json.loads(result.stdout)["targets"]
    [donation] = [c for c in target["changes"] if c["class"] == "donation"]
    assert (donation["before"], donation["verdict"]) == ("donor", "neutral")
    improved = {c["path"] for c in target["changes"] if c["class"] == "sharding"}
    assert improved == set(EMBED_LEAVES)


def test_the_other_way_round_fails(
    run_cli: Run, folder: Path, oracle: dict[str, dict[str, Any]]
) -> None:
    """Sharded → replicated: four times the bytes a device holds, for each leaf; the
    temporaries grow past 10% too; exit 1, the gate's line saying what failed."""
    old, new = oracle["after"], oracle["before"]
    out = _diff(run_cli, folder, "after", "before", rc=1).stdout
    found = rows(out)
    for path in EMBED_LEAVES:
        assert (
            f"error | sharding | changed | argument | {path} | P('model', None), 1.0 MiB per "
            "device | replicated, 4.0 MiB per device"
        ) in found
    assert temporaries_grew(old, new) in found
    assert "failed: 3 shardings changed, temporaries grew" in found
    assert found[-1].startswith("FAIL: ")


# ---- the same fix in a Flax NNX model ------------------------------------------------------

NNX_STEP = """
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
from functools import partial

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
EMBED = EMBED_SPEC


class Model(nnx.Module):
    def __init__(self, rngs):
        init = nnx.with_partitioning(nnx.initializers.normal(0.02), EMBED)
        self.embed = nnx.Embed(4096, 256, rngs=rngs, embedding_init=init)
        kernel = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
        self.mlp = nnx.Linear(256, 256, rngs=rngs, kernel_init=kernel)

    def __call__(self, tokens):
        return self.embed.attend(jnp.tanh(self.mlp(self.embed(tokens))))


DECORATOR
def train_step(model, optimizer, tokens):
    def loss_fn(model):
        logits = model(tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def make():
    with jax.set_mesh(mesh):
        model = nnx.eval_shape(lambda: Model(nnx.Rngs(0)))
        optimizer = nnx.eval_shape(
            lambda: nnx.Optimizer(Model(nnx.Rngs(0)), optax.adamw(1e-3), wrt=nnx.Param))
    tokens = jax.ShapeDtypeStruct((16, 128), jnp.int32,
                                  sharding=NamedSharding(mesh, P("data", None)))
    return model, optimizer, tokens
"""
NNX_SIDES = {
    "before": ("(None, None)", "@partial(nnx.jit, donate_argnums=(2,))"),
    "after": ("('model', None)", "@nnx.jit"),
}


@needs_axis_types
def test_the_fix_in_an_nnx_model_reads_as_improvements(run_cli: Run, tmp_path: Path) -> None:
    """``nnx.with_partitioning`` on the embedding, AdamW through ``nnx.Optimizer``: the
    embedding and its ``mu`` and ``nu`` each a quarter of f32[4096,256] (4 MiB) a device
    after, one improvement each; the donation JX301 called unusable dropped, neutral."""
    for side, (spec, decorator) in NNX_SIDES.items():
        text = NNX_STEP.replace("EMBED_SPEC", spec).replace("DECORATOR", decorator)
        (tmp_path / f"{side}.py").write_text(text, encoding="utf-8")
    result = _diff(run_cli, tmp_path, "before", "after", "-f", "json", rc=0)
    [target] = json.loads(result.stdout)["targets"]
    changes = target["changes"]
    shardings = [c for c in changes if c["class"] == "sharding" and c["where"] == "input"]
    assert sorted((c["path"], c["verdict"], c["before"], c["after"]) for c in shardings) == [
        (path, "improvement", "replicated, 4.0 MiB per device",
         "P('model', None), 1.0 MiB per device")
        for path in ("model.embed.embedding.value",
                     "optimizer.opt_state[0].mu['embed']['embedding'].value",
                     "optimizer.opt_state[0].nu['embed']['embedding'].value")
    ]  # fmt: skip
    [donation] = [c for c in changes if c["class"] == "donation"]
    assert (donation["path"], donation["verdict"]) == ("tokens", "neutral")
    memory = {c["path"]: c["verdict"] for c in changes if c["class"] == "memory"}
    assert memory == {"arguments": "improvement", "temporaries": "improvement"}
    assert not [c for c in changes if c["failing"]]


# ---- the mesh's axis types, and every mesh a step uses ------------------------------------

AXES = """
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.TYPE,) * 2)
batch = jax.make_mesh((8,), ("batch",), axis_types=(AxisType.Auto,))


@jax.jit
def step(w, x):
    return jnp.tanh(x @ w).sum(axis=0)


def make():
    w = jax.ShapeDtypeStruct((256, 256), jnp.float32,
                             sharding=NamedSharding(mesh, P(None, "model")))
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=X_SHARDING)
    return w, x
"""
ONE_MESH = 'NamedSharding(mesh, P("data", None))'
TWO_MESHES = 'NamedSharding(batch, P("batch", None))'


def _axes_diff(run_cli: Run, where: Path, old: str, new: str, *more: str) -> CliResult:
    for name, (types, x) in {"auto": ("Auto", ONE_MESH), "explicit": ("Explicit", ONE_MESH),
                             "two": ("Auto", TWO_MESHES)}.items():  # fmt: skip
        text = AXES.replace("TYPE", types).replace("X_SHARDING", x)
        (where / f"{name}.py").write_text(text, encoding="utf-8")
    return run_cli("diff-debug", f"{old}.py:step", f"{new}.py:step", "--args-from", "make",
                   *more, cwd=where)  # fmt: skip


@needs_axis_types
def test_a_change_of_the_mesh_axes_types_is_a_change(run_cli: Run, tmp_path: Path) -> None:
    """Auto → Explicit, nothing else in the source: the header says each side's axis
    types and the diff lists the change (neutral: its effect is the layouts' and the
    compiled cost's to judge), never "no changes"."""
    result = _axes_diff(run_cli, tmp_path, "auto", "explicit", "-f", "json")
    data = json.loads(result.stdout)
    assert_valid_diff(data)
    [target] = data["targets"]
    assert (target["before"]["axis_types"], target["after"]["axis_types"]) == ("Auto", "Explicit")
    [axes] = [c for c in target["changes"] if c["path"] == "mesh axes"]
    assert (axes["class"], axes["where"], axes["verdict"], axes["before"], axes["after"]) == (
        "sharding", "target", "neutral", "Auto", "Explicit",
    )  # fmt: skip
    text = _axes_diff(run_cli, tmp_path, "auto", "explicit").stdout
    assert "no changes" not in text
    [mesh] = [row for row in rows(text) if row.startswith("mesh |")]
    assert mesh == (
        "mesh | data=2,model=4, axes Auto, partitioner shardy | "
        "data=2,model=4, axes Explicit, partitioner shardy"
    )


@needs_axis_types
def test_the_header_names_every_mesh_a_step_uses(run_cli: Run, tmp_path: Path) -> None:
    """``x`` laid out over a second mesh (``batch=8``): the header names both, and the
    diff from the one-mesh version says ``x``'s layout moved to it, naming both meshes
    (a quarter of the bytes a device holds: f32[64,256] over data=2, then batch=8)."""
    result = _axes_diff(run_cli, tmp_path, "auto", "two", "-f", "json")
    data = json.loads(result.stdout)
    [target] = data["targets"]
    assert (target["before"]["other_meshes"], target["after"]["other_meshes"]) == ([], ["batch=8"])
    [moved] = [c for c in target["changes"] if c["class"] == "sharding"]
    assert (moved["path"], moved["verdict"], moved["before"], moved["after"]) == (
        "x", "improvement", "P('data', None) on data=2,model=4, 32.0 KiB per device",
        "P('batch', None) on batch=8, 8.0 KiB per device",
    )  # fmt: skip
    text = _axes_diff(run_cli, tmp_path, "two", "two").stdout
    [mesh] = [row for row in rows(text) if row.startswith("mesh |")]
    assert mesh.endswith("| data=2,model=4, axes Auto; also over batch=8, partitioner shardy")
