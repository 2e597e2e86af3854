"""Raw JAX is the oracle: on whichever JAX release runs the tests, every name, result path,
declared sharding and donation alias in a report equals what that release's own lowering
of the same call carries.

The oracle lowers each sample with plain JAX in a subprocess (its own devices and
partitioner), prints ``@main`` with its locations as JAX/MLIR print it, and reads each
argument's ``loc("...")``, sharding attribute and ``tf.aliasing_output`` and each result's
``jax.result_info`` from that text with a small regex, never through jxinspect's reader.
The report of ``jxinspect lower`` for the same target must agree leaf by leaf.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import raw_main as oracle
from helpers import run_cli

# sample target → the raw-JAX call that stages it as the sample's JXINSPECT declares
CASES: dict[str, str] = {
    "sample_programs/mlp.py:predict": """
m = load("mlp")
L = lambda i, o: {"w": S(i, o), "b": S(o)}
lowered = jax.jit(m.predict).lower({"layers": [L(784, 512), L(512, 256), L(256, 10)]}, S(32, 784))
""",
    "sample_programs/unused_arg.py:f": """
m = load("unused_arg")
lowered = jax.jit(m.f).lower(S(4, 8), S(100), S(8, 2))
""",
    "sample_programs/sharded.py:update": """
m = load("sharded")
mesh = seam.make_mesh((4, 2), ("data", "model"), jax.devices()[:8], explicit=False)
N = lambda *spec: NamedSharding(mesh, P(*spec))
T = lambda shape, *spec: jax.ShapeDtypeStruct(shape, jnp.float32, sharding=N(*spec))
tree = lambda: {"w": T((512, 256), "data", "model"), "b": T((256,), "model")}
state = {"params": tree(), "momentum": tree(),
         "step": jax.ShapeDtypeStruct((), jnp.int32, sharding=N())}
shard = lambda t: jax.tree_util.tree_map(lambda x: x.sharding if hasattr(x, "sharding") else x, t)
jitted = jax.jit(m.update, donate_argnums=0, in_shardings=(shard(state), shard(tree())),
                 out_shardings=(shard(state), N()))
lowered = jitted.lower(state, tree())
""",
    "sample_programs/data_parallel.py:step": """
m = load("data_parallel")
params = {"w": S(8, 16, 4), "b": S(8, 4)}
batch = {"x": S(8, 32, 16), "y": S(8, 32, 4)}
lowered = jax.pmap(m.step, axis_name="batch").lower(params, batch)
""",
}


def _sharding_attr(sharding: dict[str, Any] | None) -> str | None:
    if sharding is None or sharding["source"] not in ("sdy", "gspmd", "shard_map", "jax_default"):
        return None
    raw = str(sharding["raw"])
    return f'mhlo.sharding = "{raw}"' if raw.startswith("{") else f"sdy.sharding = {raw}"


@pytest.mark.parametrize("target", sorted(CASES))
def test_report_equals_what_this_jax_lowering_carries(target: str, lower_json: Any) -> None:
    raw = oracle(CASES[target])
    _, report = lower_json(target)
    lowered_inputs = sorted(
        (leaf for leaf in report["inputs"] if leaf["main_index"] is not None),
        key=lambda leaf: leaf["main_index"],
    )
    user_args = [a for i, a in enumerate(raw["args"]) if i not in
                 {e["main_index"] for e in report["extra_args"]}]  # fmt: skip
    assert len(lowered_inputs) == len(user_args), (lowered_inputs, raw)
    for leaf, arg in zip(lowered_inputs, user_args):
        assert leaf["name"] == arg["name"], (leaf, arg)
        # @main's own attribute; where it has none, the spec of the shard_map it enters
        # (pmap on 0.8 declares its layout only there), marked as the shard_map's
        from_shard_map = leaf["sharding"] is not None and leaf["sharding"]["source"] == "shard_map"
        expected = arg["manual"] if from_shard_map and arg["sharding"] is None else arg["sharding"]
        assert _sharding_attr(leaf["sharding"]) == expected, (leaf, arg)
        assert leaf["aliased_output"] == arg["alias"], (leaf, arg)
    assert [leaf["name"] for leaf in report["outputs"]] == raw["results"]
    for leaf in report["outputs"]:  # the path is the name, in the newer spelling
        if leaf["status"] == "ok":
            name = leaf["name"]
            assert leaf["path"] == (name if name.startswith("result") else "result" + name)


def test_the_oracle_reads_names_shardings_and_aliases() -> None:
    """The oracle itself finds what it looks for (so a test above cannot pass empty)."""
    raw = oracle(CASES["sample_programs/sharded.py:update"])
    assert len(raw["args"]) == 7 and len(raw["results"]) == 6
    assert raw["args"][0]["name"] == "state['momentum']['b']"
    assert sum(1 for arg in raw["args"] if arg["sharding"]) >= 6  # a replicated scalar: by release
    assert [arg["alias"] for arg in raw["args"][:5]] == [0, 1, 2, 3, 4]
    assert raw["results"][0] in ("result[0]['momentum']['b']", "[0]['momentum']['b']")


WRAPPED = """
import functools


def scale(x, y):
    return x * y


@functools.wraps(scale)
def scaled(*args, z=None, **kwargs):  # an extra keyword that the signature lacks
    return scale(*args, **kwargs) + z


JXINSPECT = {"scaled": {"args": "f32[3], f32[3]", "kwargs": "z=f32[3]"}}
"""


def test_a_call_that_does_not_bind_the_signature_has_fallback_names(tmp_path: Path) -> None:
    """JAX names the leaves of a call that does not bind the signature by its fallback
    (``args[0]``, ``kwargs['z']``): each is ``synthetic`` with JX102, never ``ok``."""
    (tmp_path / "wrapped.py").write_text(WRAPPED, encoding="utf-8")
    raw = oracle(f"sys.path.insert(0, {str(tmp_path)!r}); import wrapped\n"
                 "lowered = jax.jit(wrapped.scaled).lower(S(3), S(3), z=S(3))")  # fmt: skip
    result = run_cli("lower", "wrapped.py:scaled", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.describe()
    report = json.loads(result.stdout)
    assert [leaf["name"] for leaf in report["inputs"]] == [arg["name"] for arg in raw["args"]]
    codes = {finding["code"] for finding in report["findings"]}
    for leaf in report["inputs"]:  # 0.4.35 keeps no name at all; later releases fall back
        if leaf["name"] is None:
            assert leaf["status"] == "missing" and "JX101" in codes, leaf
        else:
            assert leaf["name"].startswith(("args[", "kwargs[")), leaf
            assert leaf["status"] == "synthetic" and "JX102" in codes, leaf


REMAT_SHARD_MAP = """
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

from jxinspect.tracer import seam


def step(x):
    mesh = seam.make_mesh((2,), ("data",), jax.devices()[:2], False)
    mapped = seam.shard_map(lambda v: jnp.sin(v) * 2,
                            {"mesh": mesh, "in_specs": (P("data"),), "out_specs": P("data")})
    return jax.checkpoint(lambda v: mapped(v + 1))(x)  # its operand is not an argument of @main


JXINSPECT = {"step": {"args": "f32[4]", "devices": 2}}
"""


def test_a_shard_map_fed_by_an_operation_under_checkpoint(tmp_path: Path) -> None:
    """The shard_map's operand is an operation's result, which the bindings of each
    jaxlib hand out differently (from 0.9 on, with no ``BlockArgument.isinstance``)."""
    (tmp_path / "remat.py").write_text(REMAT_SHARD_MAP, encoding="utf-8")
    raw = oracle(f"sys.path.insert(0, {str(tmp_path)!r}); import remat\n"
                 "lowered = jax.jit(remat.step).lower(S(4))")  # fmt: skip
    result = run_cli("lower", "remat.py:step", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert [leaf["name"] for leaf in report["inputs"]] == [arg["name"] for arg in raw["args"]]
    assert [leaf["name"] for leaf in report["outputs"]] == raw["results"]
    assert [_sharding_attr(leaf["sharding"]) for leaf in report["inputs"]] == [
        arg["sharding"] for arg in raw["args"]
    ]


@pytest.mark.parametrize("platform", ["gpu", "cuda", "rocm"])
def test_a_gpu_platform_lowers_from_a_machine_without_one(tmp_path: Path, platform: str) -> None:
    """JAX lowers for ``cuda`` or ``rocm`` from any machine (``gpu`` only where one is):
    ``--platform gpu`` is this machine's GPU, or CUDA's with a note; names as JAX's own."""
    (tmp_path / "m.py").write_text(
        "def f(x, y):\n    return {'z': x * y}\n\nJXINSPECT = {'f': {'args': 'f32[3], f32[3]'}}\n",
        encoding="utf-8",
    )
    result = run_cli("lower", "m.py:f", "--platform", platform, "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    lowered_for = "cuda" if platform == "gpu" else platform
    if platform == "gpu" and report["platform"] == "gpu":  # a machine with a GPU
        lowered_for = "gpu"
    assert report["platform"] == lowered_for
    assert any("lowered for CUDA" in n for n in report["notes"]) == (
        platform == "gpu" and lowered_for == "cuda"
    )
    raw = oracle(
        f"lowered = jax.jit(lambda x, y: {{'z': x * y}}).trace(S(3), S(3))"
        f".lower(lowering_platforms=({lowered_for!r},))"
    )
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]


NORMALIZE = """
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P


def normalize_rows(x, eps):
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))  # Auto axes on every release
    x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", None)))
    return x / jnp.sqrt(jnp.sum(x * x, axis=1, keepdims=True) + eps)
"""


@pytest.mark.parametrize("x", ["f32[8,4]", "f32[8@data,4]"])
def test_jax_own_sharding_of_a_scalar_is_no_declaration(tmp_path: Path, x: str) -> None:
    """From 0.8 JAX gives a scalar argument that declares no sharding its own replicated
    one, on Shardy's ``@empty_mesh`` (none before): shown as JAX's own, and no reason for
    JX202, which still fires where an input does declare its sharding."""
    (tmp_path / "norm.py").write_text(NORMALIZE, encoding="utf-8")
    sharded = "@data" in x
    x_arg = (
        "jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding("
        "jax.sharding.Mesh(np.array(jax.devices()), ('data',)), P('data')))"
        if sharded
        else "S(8, 4)"
    )
    raw = oracle(f"sys.path.insert(0, {str(tmp_path)!r}); import norm; import numpy as np\n"
                 f"lowered = jax.jit(norm.normalize_rows).lower({x_arg}, "
                 "jax.ShapeDtypeStruct((), jnp.float32))")  # fmt: skip
    flags = ("--devices", "8", "--mesh", "data=8", "--auto", "--args", f"{x}, f32[]")  # as Mesh
    result = run_cli("lower", "norm.py:normalize_rows", *flags, "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert [_sharding_attr(leaf["sharding"]) for leaf in report["inputs"]] == [
        arg["sharding"] for arg in raw["args"]
    ]
    jax_own = "@empty_mesh" in (raw["args"][1]["sharding"] or "")  # from 0.8 on
    declared = "sdy" if report["partitioner"] == "shardy" else "gspmd"
    assert [leaf["sharding"] and leaf["sharding"]["source"] for leaf in report["inputs"]] == [
        declared if sharded else None,
        "jax_default" if jax_own else None,
    ], (report["inputs"], raw)
    codes = [finding["code"] for finding in report["findings"]]
    assert ("JX202" in codes) == sharded, report["findings"]
    text = run_cli("lower", "norm.py:normalize_rows", *flags, cwd=tmp_path).stdout
    (eps_line,) = [line for line in text.splitlines() if line.split()[:2] == ["1", "eps"]]
    assert ("replicated (JAX's own)" in eps_line) == jax_own, text


EIG = """
import jax.numpy as jnp


def eig_two(matrix, other):
    return jnp.linalg.eig(matrix @ other)  # eig lowers for CPU only
"""


@pytest.mark.parametrize("where", ["--devices", "--abstract"])
def test_an_argument_that_declares_nothing_shows_no_sharding_where_lowering_failed(
    tmp_path: Path, where: str
) -> None:
    """Lowered for TPU, the program fails: ``matrix`` shows what it declared, ``other``
    nothing, as the program JAX writes where it does lower (CPU) carries nothing for it
    (its abstract value's ``P(None, None)`` on no mesh, or on ``Auto`` axes, is no layout)."""
    from jxinspect.tracer import seam

    if where == "--abstract" and not seam.abstract_meshes_lower():
        pytest.skip(f"JAX {seam.jax_version()} cannot lower for an abstract mesh (needs 0.4.38)")
    (tmp_path / "eig.py").write_text(EIG, encoding="utf-8")
    raw = oracle(f"sys.path.insert(0, {str(tmp_path)!r}); import eig\n"
                 "mesh = seam.make_mesh((8,), ('data',), jax.devices()[:8], explicit=False)\n"
                 "matrix = jax.ShapeDtypeStruct((8, 8), jnp.float32, "
                 "sharding=NamedSharding(mesh, P('data')))\n"
                 "lowered = jax.jit(eig.eig_two).lower(matrix, S(8, 8))")  # fmt: skip
    flags = (
        where,
        *(["8"] if where == "--devices" else []),
        "--mesh",
        "data=8",
        "--auto",  # as the plain script's mesh
        "--platform",
        "tpu",
    )
    result = run_cli("lower", "eig.py:eig_two", *flags, "--args", "f32[8@data,8], f32[8,8]",
                     "--format", "json", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 3, result.describe()  # the user's code did not lower
    report = json.loads(result.stdout)
    assert report["reached"] == "traced" and report["error"], report
    matrix, other = report["inputs"]
    assert raw["args"][0]["sharding"] is not None and raw["args"][1]["sharding"] is None, raw
    assert matrix["sharding"]["readable"] == "P('data', None)", matrix
    assert matrix["sharding"]["source"] == "declared", matrix
    assert other["sharding"] is None, other
