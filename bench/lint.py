"""`jxinspect lint` on 50 targets against a plain-JAX loop lowering the same 50 functions.

Generates 50 modules in a temporary folder (MLPs of 2-6 layers; every other one sharded
over a data=4,model=2 mesh of 8 simulated CPU devices, with in/out shardings and
donation), each declaring its inputs in `JXINSPECT`. Then runs, alternately and several
times, (a) `jxinspect lint FOLDER --format json` and (b) one plain Python process that
imports JAX, simulates the same 8 devices, imports the 50 modules and does
`jax.jit(f, ...).trace(*args).lower().as_text(debug_info=True)` for each. Prints the
medians and their ratio. Usage: python bench/lint.py [--runs N] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from common import compare, tool_base

COUNT = 50

MODULE = """\
import jax
import jax.numpy as jnp


def model_{i}(params, x):
    for layer in params["layers"]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return {{"params": params, "out": x, "norm": jnp.sum(x * x)}}


JXINSPECT = {{"model_{i}": {declaration!r}}}
"""

PLAIN = """
import importlib.util, json, sys
import jax
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
for spec in json.load(open(sys.argv[1])):
    loaded = importlib.util.spec_from_file_location(f"m{spec['i']}", spec["path"])
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    fun = getattr(module, f"model_{spec['i']}")
    width, depth, batch = spec["width"], spec["depth"], spec["batch"]
    layer = {"w": jax.ShapeDtypeStruct((width, width), jnp.float32),
             "b": jax.ShapeDtypeStruct((width,), jnp.float32)}
    args = ({"layers": [layer] * depth}, jax.ShapeDtypeStruct((batch, width), jnp.float32))
    options = {}
    if spec["sharded"]:
        w, b = NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model"))
        params = {"layers": [{"w": w, "b": b}] * depth}
        x = NamedSharding(mesh, P("data", None))
        options = {"in_shardings": (params, x), "donate_argnums": (0,),
                   "out_shardings": {"params": params, "out": x, "norm": NamedSharding(mesh, P())}}
    text = jax.jit(fun, **options).trace(*args).lower().as_text(debug_info=True)
    assert "func.func public @main" in text
"""


def generate(folder: Path) -> Path:
    """Write the 50 modules and the plain loop's description of them; return the latter."""
    specs = []
    for i in range(COUNT):
        width, depth, batch, sharded = 64 * (1 + i % 4), 2 + i % 5, 32, i % 2 == 1
        layer = f"{{'w': f32[{width},{width}], 'b': f32[{width}]}}"
        declaration: dict[str, object] = {
            "args": f"{{'layers': [{', '.join([layer] * depth)}]}}, f32[{batch},{width}]"
        }
        if sharded:
            sharded_layers = ", ".join(["{'w': P(None, 'model'), 'b': P('model')}"] * depth)
            params = f"{{'layers': [{sharded_layers}]}}"
            declaration.update(
                devices=8,
                mesh="data=4,model=2",
                donate_argnums=0,
                in_specs=f"{params}, P('data', None)",
                out_specs=f"{{'params': {params}, 'out': P('data', None), 'norm': P()}}",
            )
        path = folder / "models" / f"model_{i:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MODULE.format(i=i, declaration=declaration), encoding="utf-8")
        specs.append(
            {
                "i": i,
                "path": str(path),
                "width": width,
                "depth": depth,
                "batch": batch,
                "sharded": sharded,
            }
        )
    description = folder / "plain.json"
    description.write_text(json.dumps(specs), encoding="utf-8")
    return description


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1, help="--jobs for jxinspect lint")
    options = parser.parse_args()
    tool = tool_base()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        description = generate(folder)
        lint = [*tool, "lint", "models", "--format", "json", "--jobs", str(options.jobs)]
        plain = [sys.executable, "-c", PLAIN, str(description)]
        report = subprocess.run(lint, cwd=folder, capture_output=True, text=True, check=False)
        summary = json.loads(report.stdout)["summary"]
        assert summary["targets"] == COUNT and summary["failed"] == 0, report.stdout[-2000:]
        compare(
            plain,
            lint,
            labels=(
                f"plain jax, {COUNT} functions trace+lower+as_text:",
                f"jxinspect lint, {COUNT} targets (--jobs {options.jobs}):",
            ),
            aim=1.25,
            runs=options.runs,
            cwd=folder,
            tool_ok=(0, 1),
        )


if __name__ == "__main__":
    main()
