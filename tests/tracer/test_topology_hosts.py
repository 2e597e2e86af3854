"""``--topology``: every single-host topology libtpu takes (one chip included), always
compiled, and never a CPU compile under a TPU's name.

libtpu refuses a topology smaller than its default host (``v5e:1x1``: "not divisible by
the given (or default) chips_per_host_bounds 2x2x1"); raw JAX names such a topology with
``chips_per_host_bounds`` of its own chips, and so does jxinspect. Where libtpu is not
installed these skip, saying so (CI's TPU leg installs it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import RAW_LIBTPU, run_python

from jxinspect.tracer.seam import libtpu_version

pytestmark = pytest.mark.skipif(
    libtpu_version() is None, reason="libtpu is not installed (the tpu extra)"
)

PROGRAM = """
import jax.numpy as jnp


def layer(x, w):
    return jnp.tanh(x @ w).sum()
"""

ARGS = "f32[512,1024], f32[1024,1024]"

RAW = """
import json
import jax, jax.numpy as jnp
from jax.experimental import topologies
import program

chips = topologies.get_topology_desc(platform="tpu", topology_name=NAME,
                                     chips_per_host_bounds=BOUNDS)
with jax.default_device(chips.devices[0]):
    compiled = jax.jit(program.layer).lower(
        jax.ShapeDtypeStruct((512, 1024), jnp.float32),
        jax.ShapeDtypeStruct((1024, 1024), jnp.float32)).compile()
stats = compiled.memory_analysis()
print(json.dumps({"devices": len(chips.devices), "kind": chips.devices[0].device_kind,
                  "arguments": stats.argument_size_in_bytes,
                  "outputs": stats.output_size_in_bytes,
                  "temporaries": stats.temp_size_in_bytes,
                  "code": stats.generated_code_size_in_bytes,
                  "flops": compiled.cost_analysis()["flops"]}))
"""


@pytest.mark.parametrize(("name", "bounds"), [("v5e:1x1", (1, 1, 1)), ("v5e:1x2", (1, 2, 1))])
def test_a_topology_smaller_than_a_host_is_raw_jaxs_own(
    name: str, bounds: tuple[int, int, int], tmp_path: Path, run_cli: Any
) -> None:
    (tmp_path / "program.py").write_text(PROGRAM, encoding="utf-8")
    raw = run_python(RAW.replace("NAME", repr(name)).replace("BOUNDS", repr(bounds)),
                     cwd=tmp_path, env=RAW_LIBTPU)  # fmt: skip
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout.strip().splitlines()[-1])
    result = run_cli("lower", "program.py:layer", "--topology", name, "--args", ARGS,
                     "--format", "json", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert report["reached"] == "compiled"  # --topology compiles, --compile or not
    assert report["topology"]["devices"] == facts["devices"]
    assert report["topology"]["device_kind"] == facts["kind"]
    memory = report["compiled"]["memory"]
    assert (memory["arguments"], memory["outputs"], memory["temporaries"],
            memory["generated_code"]) == (facts["arguments"], facts["outputs"],
                                          facts["temporaries"], facts["code"])  # fmt: skip
    assert report["compiled"]["flops"] == facts["flops"]


def test_a_topology_compiles_without_the_compile_flag(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "program.py").write_text(PROGRAM, encoding="utf-8")
    result = run_cli("lower", "program.py:layer", "--topology", "v5e:2x2", "--args", ARGS,
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert "stage:        jit → reached compiled" in result.stdout
    assert "memory:       arguments 6.0 MiB" in result.stdout


MODULE_MESH = """
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


@jax.jit
def step(x, w):
    return jnp.tanh(x @ w)


def make():
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=NamedSharding(mesh, P("data")))
    w = jax.ShapeDtypeStruct((256, 256), jnp.float32,
                             sharding=NamedSharding(mesh, P(None, "model")))
    return (x, w), {}
"""


def test_a_cpu_compile_is_never_labelled_a_tpus(tmp_path: Path, run_cli: Any) -> None:
    """A module that lays its inputs over its own simulated CPU devices is refused in one
    line, not reported as the topology's (its memory would be the CPU compile's)."""
    (tmp_path / "cpu_mesh.py").write_text(MODULE_MESH, encoding="utf-8")
    environment = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    result = run_cli("lower", "cpu_mesh.py:step", "--args-from", "make", "--topology",
                     "v5e:2x2", cwd=tmp_path, env=environment)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "error: --topology v5e:2x2: the program was compiled for CPU devices, not the topology's"
    )
