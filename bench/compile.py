"""Whole-process overhead of `jxinspect lower --compile` against plain JAX compiling.

Alternates, several times, (a) `jxinspect lower sample_programs/compiled.py:tp_mlp
--compile --format json` and (b) a plain script that simulates the same 8 CPU devices,
builds the same mesh, shardings and inputs, does `jit(f).trace(...).lower().compile()` and
reads what the report reads of the compiled program (`memory_analysis()`,
`cost_analysis()`, `as_text()`); prints the medians and their ratio. `--memory` times
`lower --memory` (the peak's live set too) against the same plain script. `--why` times
`lower --why` (each collective's origins: the program staged and compiled again in a
child, meanwhile) against `lower --compile` of the same program (aim <= 2); with
`--realistic`, of a sharded transformer train step of 12-24 layers (bench/lint.py's, some
13,000 operations) instead of the sample's small MLP.
`--topology NAME` (libtpu installed: the tpu extra) times `lower --compile --topology NAME
--mesh data=2,model=2` against the same plain script compiling for that TPU topology's
first four devices (`jax.experimental.topologies`; aim <= 1.10).
Usage: python bench/compile.py [--runs N] [--memory | --why [--realistic] | --topology NAME]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

from common import ROOT, compare, tool_base

SAMPLE = ROOT / "sample_programs" / "compiled.py"

_PROGRAM = f"""
spec = importlib.util.spec_from_file_location("compiled", {str(SAMPLE)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
types = {{"axis_types": (js.AxisType.Auto,) * 2}} if hasattr(js, "AxisType") else {{}}
mesh = jax.make_mesh(MESH_ARGS, **types)
s = lambda *p: NamedSharding(mesh, P(*p))
f = jax.jit(mod.tp_mlp, in_shardings=(s("data", None), s(None, "model"), s("model", None)),
            out_shardings=s("data", None))
args = [jax.ShapeDtypeStruct(shape, jnp.float32) for shape in ((32, 128), (128, 512), (512, 128))]
compiled = f.trace(*args).lower().compile()
assert compiled.memory_analysis() is not None
assert compiled.cost_analysis() is not None
assert "all-reduce" in compiled.as_text()
"""
_IMPORTS = """
import importlib.util, os, jax, jax.numpy as jnp
import jax.sharding as js
from jax.sharding import NamedSharding, PartitionSpec as P
"""
PLAIN = (
    _IMPORTS
    + """
if "jax_num_cpu_devices" in jax.config.values:  # JAX 0.5 on; before, the XLA flag
    jax.config.update("jax_num_cpu_devices", 8)
else:
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
"""
    + _PROGRAM.replace("MESH_ARGS", '(2, 4), ("data", "model")')
)
"""Plain JAX: tp_mlp compiled over 8 simulated CPU devices, its analyses read."""

PLAIN_TOPOLOGY = (
    _IMPORTS
    + """
os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")  # no TPU host to look for, as jxinspect says
os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
from jax.experimental import topologies
devices = topologies.get_topology_desc(platform="tpu", topology_name=NAME).devices[:4]
"""
    + _PROGRAM.replace("MESH_ARGS", '(2, 2), ("data", "model"), devices=devices')
)
"""The same compiled for a TPU topology's first four devices (a 2x2 mesh)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--frozen-gc",
        action="store_true",
        help="also gc.freeze() in the plain script, as jxinspect does once JAX is loaded",
    )
    parser.add_argument("--memory", action="store_true", help="time lower --memory")
    parser.add_argument("--why", action="store_true", help="time lower --why against --compile")
    parser.add_argument(
        "--realistic",
        action="store_true",
        help="with --why: a sharded 12-24 layer transformer train step (bench/lint.py's)",
    )
    parser.add_argument("--topology", help="time lower --compile --topology NAME (needs libtpu)")
    options = parser.parse_args()
    lower = [*tool_base(), "lower", f"{SAMPLE}:tp_mlp", "--format", "json"]
    if options.why:
        with contextlib.ExitStack() as stack:
            if options.realistic:
                from lint import generate

                folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                generate(folder, 2, "realistic")  # model_1: the sharded one
                target = folder / "models" / "model_001.py"
                lower = [*tool_base(), "lower", f"{target}:model_1", "--format", "json"]
            compare(
                [*lower, "--compile"],
                [*lower, "--why"],
                labels=("jxinspect lower --compile:", "jxinspect lower --why:"),
                aim=2.0,
                runs=options.runs,
            )
        return
    if options.topology:
        compare(
            [sys.executable, "-c", PLAIN_TOPOLOGY.replace("NAME", repr(options.topology))],
            [*lower, "--compile", "--topology", options.topology, "--mesh", "data=2,model=2"],
            labels=(
                "plain jax compile for the topology:",
                "jxinspect lower --compile --topology:",
            ),
            aim=1.10,
            runs=options.runs,
        )
        return
    plain = PLAIN
    if options.frozen_gc:
        plain = PLAIN.replace(
            "compiled = f.trace", "import gc; gc.freeze()\n" + "compiled = f.trace"
        )
    flag = "--memory" if options.memory else "--compile"
    compare(
        [sys.executable, "-c", plain],
        [*tool_base(), "lower", f"{SAMPLE}:tp_mlp", flag, "--format", "json"],
        labels=(
            "plain jax trace+lower+compile+analyses:",
            f"jxinspect lower {flag} --format json:",
        ),
        aim=1.10,
        runs=options.runs,
    )


if __name__ == "__main__":
    main()
