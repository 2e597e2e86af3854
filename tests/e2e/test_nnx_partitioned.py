"""An NNX model sharded by ``nnx.with_partitioning`` (Flax's own idiom), staged through
the command with ``--devices 8 --mesh data=2,model=4`` and nothing else: built from its
annotations, or by a maker, under the target's mesh as a real run builds it, each
parameter and each AdamW moment laid out as raw JAX lays out the real model built under
that mesh (``nnx.get_partition_spec``). The model is written for ``Auto`` axes: over the
``Explicit`` ones ``--mesh`` makes on this JAX (as ``jax.make_mesh`` does), JAX refuses
its embedding's gather, and the error says how to stage over ``Auto`` axes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from helpers import REPO, error_line, needs_axis_types, run_cli, run_python

pytestmark = needs_axis_types

pytest.importorskip("flax.nnx")
pytest.importorskip("optax")
pytest.importorskip("jaxtyping")

TARGET = "tests/fixtures/nnx_partitioned.py:train_step"
MESH = ("--devices", "8", "--mesh", "data=2,model=4")
ZERO_CONFIG = ("--dims", "vocab=64,width=32,batch=8,seq=16")
MAKER = ("--args-from", "make")

RAW = f"""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import importlib.util, json, sys
import jax
from flax import nnx
spec = importlib.util.spec_from_file_location("nnx_partitioned",
                                              {str(REPO)!r} + "/tests/fixtures/nnx_partitioned.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
said = {{}}
with jax.set_mesh(mesh):
    model = m.Block(64, 32, rngs=nnx.Rngs(0))
    optimizer = m.make_optimizer(model)
    for name, node in (("model", model), ("optimizer", optimizer)):
        specs = nnx.get_partition_spec(nnx.state(node))
        for path, (value, p) in zip(
            [jax.tree_util.keystr(k) for k, _ in jax.tree_util.tree_leaves_with_path(specs)],
            zip(jax.tree_util.tree_leaves(nnx.state(node)), jax.tree_util.tree_leaves(specs)),
        ):
            entries = [[] if e is None else [e] if isinstance(e, str) else list(e) for e in p]
            entries += [[]] * (value.ndim - len(entries))
            assert value.sharding.spec == p or entries == [[]] * value.ndim, (path, p)
            said[name + path] = entries
print(json.dumps(said))
"""


def _key(path: str) -> tuple[str, ...]:
    """A leaf's path as its names and indices (``model.up.kernel.value`` and
    ``model['up']['kernel'].value`` alike), less the variable's ``value``."""
    return tuple(part for part in re.findall(r"[A-Za-z_]\w*|\d+", path) if part != "value")


@pytest.fixture(scope="module")
def raw_specs() -> dict[tuple[str, ...], Any]:
    result = run_python(RAW)
    assert result.returncode == 0, result.describe()
    said = json.loads(result.stdout.strip().splitlines()[-1])
    return {_key(path): entries for path, entries in said.items()}


@pytest.mark.parametrize("inputs", [ZERO_CONFIG, MAKER], ids=["annotations", "maker"])
def test_each_variable_is_laid_out_as_raw_jax_lays_out_the_real_model(
    inputs: tuple[str, ...], raw_specs: dict[tuple[str, ...], Any]
) -> None:
    result = run_cli("lower", TARGET, *MESH, *inputs, "--auto", "--format", "json")
    assert result.returncode in (0, 1), result.describe()
    report = json.loads(result.stdout)
    assert (report["mesh"], report["axis_types"]) == ("data=2,model=4", ["Auto", "Auto"])
    staged = {_key(leaf["path"]): leaf["sharding"] for leaf in report["inputs"]
              if leaf["path"].startswith(("model", "optimizer"))}  # fmt: skip
    assert set(staged) == set(raw_specs)
    for key, sharding in staged.items():
        spec = sharding["spec"] if sharding and sharding["kind"] == "tiled" else None
        assert (key, spec or [[]] * len(raw_specs[key])) == (key, raw_specs[key])
    # the layouts are there: the embedding and the down kernel, and their AdamW moments
    sharded = {".".join(key) for key, entries in raw_specs.items() if entries[:1] == [["model"]]}
    assert "model.embed.embedding" in sharded and len(sharded) == 6, sharded


def test_a_maker_runs_under_the_targets_mesh(tmp_path: Any) -> None:
    (tmp_path / "maker.py").write_text(
        "import jax\n"
        "def make():\n"
        "    mesh = jax.sharding.get_abstract_mesh()\n"
        "    print('maker under', dict(mesh.shape), flush=True)\n"
        "    return (jax.ShapeDtypeStruct((8, 4), 'float32'),)\n"
        "def f(x):\n"
        "    return x * 2\n",
        encoding="utf-8",
    )
    result = run_cli("lower", "maker.py:f", *MESH, *MAKER, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert "maker under {'data': 2, 'model': 4}" in result.stderr + result.stdout


@pytest.mark.parametrize("inputs", [ZERO_CONFIG, MAKER], ids=["annotations", "maker"])
def test_over_explicit_axes_the_refusal_says_how_to_stage_over_auto_ones(
    inputs: tuple[str, ...],
) -> None:
    import jax

    if jax.make_mesh((1,), ("a",), devices=jax.devices()[:1]).axis_types[0].name != "Explicit":
        pytest.skip("this JAX's jax.make_mesh makes Auto axes (Explicit from 0.9)")
    result = run_cli("lower", TARGET, *MESH, *inputs)
    assert result.returncode == 3, result.describe()
    line = error_line(result)
    assert line.startswith("error: tracing through nnx.jit failed: ShardingTypeError: ")
    assert "nnx_partitioned.py:" in line  # the user's line, the embedding's gather
    assert line.endswith(
        "; the mesh's axes are Explicit (as jax.make_mesh makes them from JAX 0.9), over "
        "which JAX checks each operation's sharding as it traces: a program written for "
        "Auto axes stages with --auto (or explicit: false in the configuration)"
    )
    asked = run_cli("lower", TARGET, *MESH, *inputs, "--explicit")
    assert asked.returncode == 3 and "(asked for by explicit)" in error_line(asked)


def test_without_a_mesh_the_build_error_names_the_users_module() -> None:
    result = run_cli("lower", TARGET, *ZERO_CONFIG)
    assert result.returncode == 3, result.describe()
    line = error_line(result)
    assert line.startswith(
        "error: building nnx_partitioned.Block from its constructor failed: ValueError: "
        "An auto mesh context or metadata is required"
    )
    assert "_jxinspect_" not in line and "nnx_partitioned.py:" in line
    assert line.endswith("; no mesh was given to build it under: add --mesh, e.g. --mesh "
                         "data=2,model=4")  # fmt: skip
