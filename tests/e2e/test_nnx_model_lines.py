"""A user's own Flax NNX model with an optax loss, staged through ``nnx.jit`` on 8 devices
(``--devices 8 --mesh data=2,model=4``): every value kept for the backward pass, every
collective and every finding placed at one says a line of the user's file, the Flax or
optax frame it ran in beside it, as JAX's own equation tracebacks hold them; a result
whose layout is left to the compiler has no per-device size until compiled, and then
the one JAX's compiled executable says."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import needs_axis_types, run_cli, run_python

pytestmark = needs_axis_types

MODEL = """\
import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P


class Model(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(512, 64, rngs=rngs)
        self.hidden = nnx.Linear(64, 256, rngs=rngs)
        self.out = nnx.Linear(256, 64, rngs=rngs)

    def __call__(self, ids):
        h = self.embed(ids)
        h = jax.nn.gelu(self.hidden(h))
        h = self.out(h)
        return self.embed.attend(h)


def loss_fn(model, ids, labels):
    logits = model(ids)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@nnx.jit
def train_step(model, ids, labels):
    return nnx.value_and_grad(loss_fn)(model, ids, labels)


SPECS = {"embedding": P("model", None), "kernel": P(None, "model")}


def make():
    auto = (jax.sharding.AxisType.Auto,) * 2
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=auto)
    graphdef, state = nnx.split(nnx.eval_shape(lambda: Model(nnx.Rngs(0))))

    def placed(path, leaf):
        spec = SPECS.get(str(path[-2].key), P())
        return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=NamedSharding(mesh, spec))

    state = jax.tree_util.tree_map_with_path(placed, state)
    ids = jax.ShapeDtypeStruct((32, 16), jnp.int32, sharding=NamedSharding(mesh, P("data")))
    return nnx.merge(graphdef, state), ids, ids
"""

CONFIG = """\
budgets:
  forbid_collectives: [all-reduce, all-gather]
"""

# JAX's own record: each equation's traceback (the frames JAX keeps outside its own
# code, innermost first) of the same loss, differentiated; each one's innermost frame in
# the user's file and its innermost frame; and the per-device shape of each output of
# the compiled train step, as its executable lays it out
ORACLE = """\
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax
from jax._src import source_info_util
from flax import nnx
import model

m, ids, labels = model.make()
graphdef, state = nnx.split(m)

def pure(state, ids, labels):
    return nnx.value_and_grad(model.loss_fn)(nnx.merge(graphdef, state), ids, labels)

mine = os.path.abspath("model.py")
frames = set()

def walk(jaxpr):
    for eqn in jaxpr.eqns:
        stack = [[f.file_name, f.start_line]
                 for f in source_info_util.user_frames(eqn.source_info.traceback)]
        user = next((f for f in stack if f[0] == mine), None)
        if user is not None:
            frames.add(json.dumps([user, None if stack[0] == user else stack[0]]))
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    walk(inner)

walk(jax.make_jaxpr(pure)(state, ids, labels).jaxpr)
compiled = model.train_step.lower(m, ids, labels).compile()
avals = jax.tree.leaves((state, jax.eval_shape(pure, state, ids, labels)))
laid = jax.tree.leaves(compiled.output_shardings,
                       is_leaf=lambda x: isinstance(x, jax.sharding.Sharding))
shards = [list(s.shard_shape(a.shape)) for s, a in zip(laid, avals, strict=True)]
print(json.dumps({"frames": [json.loads(f) for f in sorted(frames)], "shards": shards}))
"""

FLAGS = ("--args-from", "model:make", "--devices", "8", "--mesh", "data=2,model=4", "--auto")
"""Auto axes: the maker's mesh is the one the model was written for."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("nnx_model")
    (made / "model.py").write_text(MODEL)
    return made


@pytest.fixture(scope="module")
def oracle(folder: Path) -> dict[str, Any]:
    raw = run_python(ORACLE, cwd=folder)
    assert raw.returncode == 0, raw.describe()
    found: dict[str, Any] = json.loads(raw.stdout.strip().splitlines()[-1])
    return found


def _package(file: str) -> str:
    parts = Path(file).parts
    return parts[parts.index("site-packages") + 1]


def _placed(item: dict[str, Any]) -> list[Any]:
    library = [item["library_file"], item["library_line"]]
    return [[item["file"], item["line"]], None if library == [None, None] else library]


def test_residuals_collectives_and_findings_name_the_users_line(
    folder: Path, oracle: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "jxinspect.yaml").write_text(CONFIG)
    result = run_cli("lower", "model.py:train_step", *FLAGS, "--memory", "--format", "json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    compiled = report["compiled"]
    mine = str(tmp_path / "model.py")
    frames = [[[mine, user[1]], inner] for user, inner in oracle["frames"]]
    made = [r for r in compiled["residuals"] if r["source"] != "argument"]
    collectives = compiled["collectives"]
    placed = [f for f in report["findings"] if f["code"] == "JX303"]
    assert made and collectives and len(placed) == len(collectives)
    for item in [*made, *collectives, *placed]:
        assert item["file"] == mine, item
        assert _placed(item) in frames, (item, frames)
    libraries = {_package(item["library_file"]) for item in [*made, *collectives]
                 if item["library_file"]}  # fmt: skip
    assert libraries == {"flax", "optax"}
    for finding in report["findings"]:  # the rest at the function, in the user's file
        assert finding["file"] == mine, finding
    text = run_cli("lower", "model.py:train_step", *FLAGS, "--memory", "--show", "memory",
                   cwd=tmp_path).stdout  # fmt: skip
    kept = text[text.index("kept for the backward pass") :]
    assert re.search(r"model\.py:\d+ \(optax/losses/[\w/]+\.py:\d+\)", kept), kept
    assert re.search(r"model\.py:\d+ \(flax/nnx/nn/linear\.py:\d+\)", kept), kept


def test_a_result_left_to_the_compiler_has_no_per_device_size_until_compiled(
    folder: Path, oracle: dict[str, Any]
) -> None:
    lowered = run_cli("lower", "model.py:train_step", *FLAGS, "--format", "json", cwd=folder)
    assert lowered.returncode == 0, lowered.describe()
    report = json.loads(lowered.stdout)
    inputs = {leaf["path"]: leaf for leaf in report["inputs"]}
    twin = report["outputs"][0]  # the model's embedding, given back: no out sharding
    assert twin["path"] == "model.embed.embedding.value" and twin["sharding"] is None
    assert inputs[twin["path"]]["shard_shape"] == [128, 64]
    unknown = [o for o in report["outputs"] if o["shard_shape"] is None]
    assert twin in unknown and all(o["bytes_per_device"] is None for o in unknown)
    assert all(o["sharding"] is None and len(o["shape"]) for o in unknown)
    text = run_cli("lower", "model.py:train_step", *FLAGS, cwd=folder).stdout
    said = f"unknown (blank) for {len(unknown)} outputs: the compiler picks their layout"
    assert f"per device:   {said} (--compile reads it)" in text, text
    row = next(line for line in text.splitlines() if "result[0][0].states[0][0]" in line)
    assert row.rstrip().endswith("f32[512,64]"), row  # its per-device cell blank

    compiled = run_cli("lower", "model.py:train_step", *FLAGS, "--compile", "--format", "json",
                       cwd=folder)  # fmt: skip
    assert compiled.returncode == 0, compiled.describe()
    outputs = json.loads(compiled.stdout)["outputs"]
    assert [o["shard_shape"] for o in outputs] == oracle["shards"]
    assert [o["bytes_per_device"] for o in outputs] == [4 * math.prod(s) for s in oracle["shards"]]
    assert "per device:" not in run_cli("lower", "model.py:train_step", *FLAGS, "--compile",
                                        cwd=folder).stdout  # fmt: skip


def test_why_says_the_users_line_with_the_librarys(folder: Path) -> None:
    """The origins view: each hop and collective at the user's line, the Flax or optax
    frame beside it, through the one form every view writes a line in."""
    result = run_cli("lower", "model.py:train_step", *FLAGS, "--why", cwd=folder)
    assert result.returncode == 0, result.describe()
    why = result.stdout[result.stdout.index("why each collective") :]
    assert re.search(r"at \S*model\.py:\d+ \(flax/nnx/nn/linear\.py:\d+\)", why), why
    hop = r"(via|→) [\w, ]+ at model\.py:\d+"  # each hop at the user's line, short
    assert re.search(hop, why), why
    assert not re.search(r"(via|→) [\w, ]+ at \S*(flax|optax)/", why), why
