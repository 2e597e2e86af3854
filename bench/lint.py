"""`jxinspect lint` at scale. Modes (``--mode``):

* ``cold`` (default): 50 targets, no cache, against a plain-JAX loop lowering the same 50
  functions in one process (aim <= 1.0);
* ``edit``: one module edited since the last run (cache warm) against a cold run (<= 0.15);
* ``jobs``: ``--jobs 2`` against ``--jobs 1`` (use ``--count 200``; aim <= 0.7);
* ``memory``: the worker's peak memory over all targets against a quarter of them (flat).

Generates the modules in a temporary folder (MLPs of 2-6 layers; every other one sharded
over a data=4,model=2 mesh of 8 simulated CPU devices, with in/out shardings and
donation), each declaring its inputs in `JXINSPECT`. Then runs, alternately and several
times, (a) `jxinspect lint FOLDER --format json` and (b) one plain Python process that
imports JAX, simulates the same 8 devices, imports the modules and does
`jax.jit(f, ...).trace(*args).lower().as_text(debug_info=True)` for each. Prints the
medians and their ratio. Usage: python bench/lint.py [--mode M] [--runs N] [--count N]
[--jobs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import compare, timed, tool_base

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


def generate(folder: Path, count: int = COUNT) -> Path:
    """Write the modules and the plain loop's description of them; return the latter."""
    specs = []
    for i in range(count):
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
        path = folder / "models" / f"model_{i:03d}.py"
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


def _lint(tool: list[str], count: int, jobs: int, *extra: str) -> list[str]:
    return [*tool, "lint", "models", "--format", "json", "--jobs", str(jobs), *extra]


def _check(command: list[str], folder: Path, count: int) -> None:
    report = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    summary = json.loads(report.stdout)["summary"]
    assert summary["targets"] == count and summary["failed"] == 0, report.stdout[-2000:]


def cold(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(a) every target staged (no cache) against the plain-JAX loop."""
    lint = _lint(tool, options.count, options.jobs, "--no-cache")
    _check(lint, folder, options.count)
    compare(
        [sys.executable, "-c", PLAIN, str(description)],
        lint,
        labels=(
            f"plain jax, {options.count} functions trace+lower+as_text:",
            f"jxinspect lint, {options.count} targets (--jobs {options.jobs}, no cache):",
        ),
        aim=1.0,
        runs=options.runs,
        cwd=folder,
        tool_ok=(0, 1),
    )


def edit(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(b) one module edited since the last run, against a cold run."""
    lint = _lint(tool, options.count, options.jobs)
    _check(lint, folder, options.count)  # fills the cache
    module = folder / "models" / "model_000.py"
    original = module.read_text(encoding="utf-8")
    cold_times, edit_times = [], []
    for run in range(options.runs):
        cold_times.append(timed([*lint, "--no-cache"], folder, (0, 1)))
        module.write_text(original + f"\n# edit {run}\n", encoding="utf-8")
        edit_times.append(timed(lint, folder, (0, 1)))
    c, e = statistics.median(cold_times), statistics.median(edit_times)
    print(f"cold (--no-cache), {options.count} targets:  median {c:.3f} s over {options.runs} runs")
    print(f"one module edited, cache warm:   median {e:.3f} s over {options.runs} runs")
    print(f"ratio: {e / c:.3f} (aim <= 0.15)")


def jobs(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(c) --jobs 2 against --jobs 1, cold."""
    one = _lint(tool, options.count, 1, "--no-cache")
    two = _lint(tool, options.count, 2, "--no-cache")
    _check(two, folder, options.count)
    compare(
        one,
        two,
        labels=(
            f"lint --jobs 1, {options.count} targets:",
            f"lint --jobs 2, {options.count} targets:",
        ),
        aim=0.7,
        runs=options.runs,
        cwd=folder,
        tool_ok=(0, 1),
    )


def memory(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(d) peak memory of the worker: the first quarter of the targets against all."""

    def peak(paths: list[str]) -> float:
        script = (
            "import resource, subprocess, sys; "
            "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        command = [*tool, "lint", *paths, "--format", "json", "--jobs", "1", "--no-cache"]
        out = subprocess.run([sys.executable, "-c", script, *command], cwd=folder,
                             capture_output=True, text=True, check=True)  # fmt: skip
        return int(out.stdout.strip()) / 1024

    files = sorted(str(p.relative_to(folder)) for p in (folder / "models").glob("*.py"))
    quarter = files[: max(1, len(files) // 4)]
    small, large = peak(quarter), peak(files)
    print(f"peak RSS, {len(quarter)} targets:  {small:.0f} MiB")
    print(f"peak RSS, {len(files)} targets: {large:.0f} MiB")
    print(f"ratio: {large / small:.3f} (aim: flat, <= 1.10)")


MODES = {"cold": cold, "edit": edit, "jobs": jobs, "memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=sorted(MODES), default="cold")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=COUNT, help="generated targets")
    parser.add_argument("--jobs", type=int, default=1, help="--jobs for jxinspect lint")
    options = parser.parse_args()
    tool = tool_base()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        description = generate(folder, options.count)
        MODES[options.mode](tool, folder, description, options)


if __name__ == "__main__":
    main()
