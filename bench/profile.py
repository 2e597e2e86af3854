"""Whole-process cost of `jxinspect profile --steps 10` against what it replaces: one
`jxinspect lower --compile` plus the same 10 steps timed by hand.

Alternates, several times, (a) `jxinspect lower sample_programs/compiled.py:tp_mlp
--compile --format json` (the compile and its report, whole process), (b) a plain script
that compiles the same program over the same 8 simulated CPU devices, makes random inputs
of its shapes and shardings, and times 2 warm-up steps and 10 steps by hand
(`time.perf_counter` around each call until its outputs are ready; it prints the loop's
seconds, the only part counted), and (c) `jxinspect profile ... --steps 10 --warmup 2
--format json` (compile, steps under JAX's profiler, the trace read and joined to lines
and collectives); prints the median of (a) + (b)'s loop and of (c), and their ratio
(aim <= 1.2). Usage: python bench/profile.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from common import ROOT, timed, tool_base

SAMPLE = ROOT / "sample_programs" / "compiled.py"
STEPS, WARMUP = 10, 2
AIM = 1.2

PLAIN = f"""
import importlib.util, os, time, jax, jax.numpy as jnp, numpy as np
import jax.sharding as js
from jax.sharding import NamedSharding, PartitionSpec as P
if "jax_num_cpu_devices" in jax.config.values:
    jax.config.update("jax_num_cpu_devices", 8)
else:
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
spec = importlib.util.spec_from_file_location("compiled", {str(SAMPLE)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
types = {{"axis_types": (js.AxisType.Auto,) * 2}} if hasattr(js, "AxisType") else {{}}
mesh = jax.make_mesh((2, 4), ("data", "model"), **types)
s = lambda *p: NamedSharding(mesh, P(*p))
ins = (s("data", None), s(None, "model"), s("model", None))
f = jax.jit(mod.tp_mlp, in_shardings=ins, out_shardings=s("data", None))
shapes = ((32, 128), (128, 512), (512, 128))
compiled = f.trace(*[jax.ShapeDtypeStruct(x, jnp.float32) for x in shapes]).lower().compile()
started = time.perf_counter()
rng = np.random.default_rng(0)
args = [jax.device_put(rng.standard_normal(x).astype(np.float32), sh) for x, sh in zip(shapes, ins)]
seconds = []
for _ in range({WARMUP + STEPS}):
    began = time.perf_counter()
    jax.block_until_ready(compiled(*args))
    seconds.append(time.perf_counter() - began)
print(time.perf_counter() - started)
"""
"""Plain JAX: tp_mlp compiled, 2 + 10 steps timed by hand; prints the loop's seconds."""


def _loop_seconds() -> float:
    proc = subprocess.run(
        [sys.executable, "-c", PLAIN], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"the plain loop exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    target = f"{SAMPLE}:tp_mlp"
    lower = [*tool_base(), "lower", target, "--compile", "--format", "json"]
    profile = [*tool_base(), "profile", target, "--steps", str(STEPS), "--warmup", str(WARMUP),
               "--format", "json"]  # fmt: skip
    timed(lower), timed(profile), _loop_seconds()  # warm the file cache
    by_hand: list[float] = []
    measured: list[float] = []
    for _ in range(runs):
        by_hand.append(timed(lower) + _loop_seconds())
        measured.append(timed(profile))
    hand, tool = statistics.median(by_hand), statistics.median(measured)
    print(f"lower --compile + {STEPS} steps timed by hand:  median {hand:.3f} s over {runs} runs")
    print(f"jxinspect profile --steps {STEPS}:              median {tool:.3f} s over {runs} runs")
    print(f"ratio: {tool / hand:.3f} (aim <= {AIM})")


if __name__ == "__main__":
    main()
