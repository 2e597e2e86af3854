"""Cost of `jxinspect record` on a real run: a script that stages 20 functions (MLP train
steps of 2-6 layers with grad, some sharded over 8 simulated CPU devices, each called
several times) run plainly against the same run under `jxinspect record` (aim <= 1.15,
whole-process wall time, medians of alternating runs). ``--trainer``: the README's
recorded trainer instead (``sample_programs/record/train.py --steps 2``: a few compiles,
the recorder's fixed cost laid bare; aim <= 1.10).
Usage: python bench/record.py [--runs N] [--count N] [--trainer]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import ROOT, compare, tool_base

SCRIPT = """
import os, sys
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import jax, jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


def make_step(depth):
    def loss(params, x):
        for layer in params["layers"]:
            x = jnp.tanh(x @ layer["w"] + layer["b"])
        return jnp.mean(x * x)

    def step(params, x):
        value, grads = jax.value_and_grad(loss)(params, x)
        new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return {"params": new, "loss": value}

    step.__name__ = step.__qualname__ = f"step_{depth}"
    return step


for i in range(int(sys.argv[1])):
    width, depth = 64 * (1 + i % 4), 2 + i % 5
    params = {"layers": [{"w": jnp.ones((width, width)) / width, "b": jnp.zeros(width)}
                         for _ in range(depth)]}
    x = jnp.ones((32, width))
    if i % 2:
        x = jax.device_put(x, NamedSharding(mesh, P("data", None)))
    step = jax.jit(make_step(i), donate_argnums=0)
    for _ in range(3):
        out = step(params, x)
        params = out["params"]
    out["loss"].block_until_ready()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=20, help="functions the script stages")
    parser.add_argument("--trainer", action="store_true", help="the README's 2-step trainer")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if options.trainer:
            trainer = ROOT / "sample_programs" / "record" / "train.py"
            plain = [sys.executable, str(trainer), "--steps", "2"]
            label, aim = "plain run of the 2-step trainer:", 1.10
        else:
            script = Path(tmp) / "train.py"
            script.write_text(SCRIPT, encoding="utf-8")
            plain = [sys.executable, str(script), str(options.count)]
            label, aim = f"plain run, {options.count} functions staged:", 1.15
        recorded = [*tool_base(), "record", "-o", str(Path(tmp) / "runs"), "--", *plain]
        compare(plain, recorded, labels=(label, "the same run under jxinspect record:"),
                aim=aim, runs=options.runs, cwd=Path(tmp))  # fmt: skip


if __name__ == "__main__":
    main()
