"""`jxinspect lint` at scale. Modes (``--mode``):

* ``cold`` (default): 50 targets, no cache, against a plain-JAX loop lowering the same 50
  functions in one process (aim <= 1.0), with ``--jobs 1`` and with lint's default
  ``--jobs`` (the cores), as a user runs it;
* ``edit``: one module edited since the last run (cache warm) against a cold run (<= 0.15),
  with fresh workers and with workers kept from the run before (``--keep-workers``);
* ``alone``: one module of ``--count`` (use 80) edited since the last run, cache warm, against
  linting that one module alone (``lint models/model_000.py``, its entry cached before the
  edit too): what checking the unchanged targets' cached entries costs (aim <= 1.10);
* ``jobs``: ``--jobs 2`` against ``--jobs 1`` (use ``--count 200``; aim <= 0.6);
* ``memory``: the worker's peak memory over all targets against a quarter of them (flat).

Generates the modules in a temporary folder, each declaring its inputs in `JXINSPECT`;
every other one sharded over a data=4,model=2 mesh of 8 simulated CPU devices, with
in/out shardings and donation. ``--size tiny`` (default): MLPs of 2-6 layers, a few
milliseconds of lowering each. ``--size realistic``: a transformer train step (causal
attention, MLP, ``value_and_grad``, an Adam update) of 12-24 layers, 0.3-0.8 s of
tracing and lowering each in plain JAX on 2 cores, what the targets of a real repository
cost. Then runs, alternately and several
times, (a) `jxinspect lint FOLDER --format json` and (b) one plain Python process that
imports JAX, simulates the same 8 devices, imports the modules and does
`jax.jit(f, ...).trace(*args).lower().as_text(debug_info=True)` for each. Prints the
medians and their ratio. Usage: python bench/lint.py [--mode M] [--size S] [--runs N]
[--count N] [--jobs N] [--frozen-gc]

The plain loop does not freeze the collector, so over 50 large programs it rescans JAX's
objects again and again; ``--frozen-gc`` makes it freeze them, as lint's workers do.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import compare, compare_many, timed, tool_base

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

REALISTIC = """\
import jax
import jax.numpy as jnp


def _norm(x, scale):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-6) * scale


def _block(x, layer, heads):
    batch, seq, width = x.shape
    h = _norm(x, layer["ln1"])
    q, k, v = (
        (h @ layer[name]).reshape(batch, seq, heads, width // heads) for name in ("wq", "wk", "wv")
    )
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(width // heads)
    mask = jnp.tril(jnp.ones((seq, seq), bool))
    weights = jax.nn.softmax(jnp.where(mask, scores, -1e9), axis=-1)
    attended = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(batch, seq, width)
    x = x + attended @ layer["wo"]
    h = _norm(x, layer["ln2"])
    return x + jax.nn.gelu(h @ layer["w1"]) @ layer["w2"]


def _loss(params, batch):
    x = params["embed"][batch["tokens"]]
    for layer in params["layers"]:
        x = _block(x, layer, 4)
    logits = _norm(x, params["ln_f"]) @ params["embed"].T
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, batch["targets"][..., None], axis=-1))


def model_{i}(state, batch):
    loss, grads = jax.value_and_grad(_loss)(state["params"], batch)
    step = state["step"] + 1
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, state["mu"], grads)
    nu = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, state["nu"], grads)
    scale = jnp.sqrt(1 - 0.999**step) / (1 - 0.9**step)
    params = jax.tree.map(
        lambda p, m, v: p - 1e-3 * scale * m / (jnp.sqrt(v) + 1e-8), state["params"], mu, nu
    )
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    state = {{"params": params, "mu": mu, "nu": nu, "step": step}}
    return state, {{"loss": loss, "grad_norm": norm}}


JXINSPECT = {{"model_{i}": {declaration!r}}}
"""

PLAIN = """
import importlib.util, json, sys
import jax
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def build(tree):
    if isinstance(tree, list):
        return [build(t) for t in tree]
    if "__tuple__" in tree:
        return tuple(build(t) for t in tree["__tuple__"])
    if "__array__" in tree:
        dtype, shape = tree["__array__"]
        return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))
    if "__spec__" in tree:
        return NamedSharding(mesh, P(*(tuple(e) if isinstance(e, list) else e
                                       for e in tree["__spec__"])))
    return {key: build(value) for key, value in tree.items()}


for spec in json.load(open(sys.argv[1])):
    loaded = importlib.util.spec_from_file_location(f"m{spec['i']}", spec["path"])
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    fun = getattr(module, f"model_{spec['i']}")
    args = build(spec["args"])
    options = {}
    if spec["in_specs"] is not None:
        options = {"in_shardings": build(spec["in_specs"]), "donate_argnums": (0,),
                   "out_shardings": build(spec["out_specs"])}
    text = jax.jit(fun, **options).trace(*args).lower().as_text(debug_info=True)
    assert "func.func public @main" in text
"""

DTYPES = {"f32": "float32", "i32": "int32"}


@dataclass(frozen=True)
class Array:
    """An example input: ``f32[8,128]`` for jxinspect, a ShapeDtypeStruct for the loop."""

    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Spec:
    """A PartitionSpec: ``P('data', None)``."""

    entries: tuple[str | None, ...] = ()


Tree = Any


def spec_text(tree: Tree) -> str:
    """The tree as jxinspect's spec language writes it."""
    if isinstance(tree, Array):
        return f"{tree.dtype}[{','.join(map(str, tree.shape))}]"
    if isinstance(tree, Spec):
        return f"P({', '.join(map(repr, tree.entries))})"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {spec_text(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(map(spec_text, tree)) + "]"
    assert isinstance(tree, tuple)
    return ", ".join(map(spec_text, tree))  # positional arguments, or a tuple of results


def plain_tree(tree: Tree) -> Any:
    """The same tree as JSON, for the plain loop to build the same JAX objects from."""
    if isinstance(tree, Array):
        return {"__array__": [DTYPES[tree.dtype], list(tree.shape)]}
    if isinstance(tree, Spec):
        return {"__spec__": list(tree.entries)}
    if isinstance(tree, dict):
        return {k: plain_tree(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [plain_tree(v) for v in tree]
    return {"__tuple__": [plain_tree(v) for v in tree]}


def tiny(i: int) -> tuple[str, Tree, Tree | None, Tree | None]:
    """An MLP of 2-6 layers: the module template, args, in specs, out specs."""
    width, depth, batch = 64 * (1 + i % 4), 2 + i % 5, 32
    layer = {"w": Array("f32", (width, width)), "b": Array("f32", (width,))}
    args = ({"layers": [layer] * depth}, Array("f32", (batch, width)))
    if i % 2 == 0:
        return MODULE, args, None, None
    params = {"layers": [{"w": Spec((None, "model")), "b": Spec(("model",))}] * depth}
    x = Spec(("data", None))
    return MODULE, args, (params, x), {"params": params, "out": x, "norm": Spec()}


def realistic(i: int) -> tuple[str, Tree, Tree | None, Tree | None]:
    """A transformer train step of 12-24 layers (width 128, sequence 64, vocabulary
    1024): parameters and two Adam moments in, the same out, sharded over ``model``."""
    width, hidden, vocab, batch, seq = 128, 512, 1024, 8, 64
    depth = 12 + 3 * (i % 5)
    square = Array("f32", (width, width))
    layer = {
        "ln1": Array("f32", (width,)), "wq": square, "wk": square, "wv": square, "wo": square,
        "ln2": Array("f32", (width,)), "w1": Array("f32", (width, hidden)),
        "w2": Array("f32", (hidden, width)),
    }  # fmt: skip
    params = {
        "embed": Array("f32", (vocab, width)),
        "layers": [layer] * depth,
        "ln_f": Array("f32", (width,)),
    }
    state = {"params": params, "mu": params, "nu": params, "step": Array("i32", ())}
    tokens = Array("i32", (batch, seq))
    args = (state, {"tokens": tokens, "targets": tokens})
    if i % 2 == 0:
        return REALISTIC, args, None, None
    columns, rows, copy = Spec((None, "model")), Spec(("model", None)), Spec()
    layer_specs = {
        "ln1": copy, "wq": columns, "wk": columns, "wv": columns, "wo": rows,
        "ln2": copy, "w1": columns, "w2": rows,
    }  # fmt: skip
    param_specs = {"embed": columns, "layers": [layer_specs] * depth, "ln_f": copy}
    state_specs = {"params": param_specs, "mu": param_specs, "nu": param_specs, "step": copy}
    batch_specs = {"tokens": Spec(("data", None)), "targets": Spec(("data", None))}
    return (
        REALISTIC,
        args,
        (state_specs, batch_specs),
        (state_specs, {"loss": copy, "grad_norm": copy}),
    )


SIZES = {"tiny": tiny, "realistic": realistic}


def generate(folder: Path, count: int = COUNT, size: str = "tiny") -> Path:
    """Write the modules and the plain loop's description of them; return the latter."""
    specs = []
    for i in range(count):
        template, args, in_specs, out_specs = SIZES[size](i)
        declaration: dict[str, object] = {"args": spec_text(args)}
        if in_specs is not None:
            declaration.update(
                devices=8,
                mesh="data=4,model=2",
                donate_argnums=0,
                in_specs=spec_text(in_specs),
                out_specs=spec_text(out_specs),
            )
        path = folder / "models" / f"model_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(i=i, declaration=declaration), encoding="utf-8")
        specs.append(
            {
                "i": i,
                "path": str(path),
                "args": plain_tree(args),
                "in_specs": None if in_specs is None else plain_tree(in_specs),
                "out_specs": None if out_specs is None else plain_tree(out_specs),
            }
        )
    description = folder / "plain.json"
    description.write_text(json.dumps(specs), encoding="utf-8")
    return description


def _lint(tool: list[str], count: int, jobs: int | None, *extra: str) -> list[str]:
    """The lint command; ``jobs`` ``None``: lint's default (the cores)."""
    given = [] if jobs is None else ["--jobs", str(jobs)]
    return [*tool, "lint", "models", "--format", "json", *given, *extra]


def _jobs_label(jobs: int | None) -> str:
    return f"--jobs {jobs}" if jobs is not None else f"default --jobs, {_default_jobs()}"


def _default_jobs() -> int:
    from jxinspect.lint.workers.supervisor import default_jobs

    return default_jobs()


def _check(command: list[str], folder: Path, count: int) -> None:
    report = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    summary = json.loads(report.stdout)["summary"]
    assert summary["targets"] == count and summary["failed"] == 0, report.stdout[-2000:]


def cold(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(a) every target staged (no cache) against the plain-JAX loop: with ``--jobs 1``
    (or ``--jobs N`` when given) and with lint's default, as a user runs it."""
    variants = [options.jobs or 1, None]
    commands = [_lint(tool, options.count, jobs, "--no-cache") for jobs in variants]
    for command in commands:
        _check(command, folder, options.count)
    plain = PLAIN
    if options.frozen_gc:  # as jxinspect's workers do once JAX is loaded
        plain = PLAIN.replace("\nmesh = ", "\nimport gc; gc.freeze()\nmesh = ", 1)
    compare_many(
        [sys.executable, "-c", plain, str(description)],
        [
            (f"jxinspect lint --no-cache, {_jobs_label(jobs)}:", command)
            for jobs, command in zip(variants, commands)
        ],
        plain_label=f"plain jax, {options.count} x trace+lower+as_text"
        + (" (gc frozen):" if options.frozen_gc else ":"),
        aim=1.0,
        runs=options.runs,
        cwd=folder,
        tool_ok=(0, 1),
    )


def edit(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(b) one module edited since the last run, against a cold run (both with ``--jobs
    N`` when given, else lint's default): with fresh workers, and with workers kept from
    the run before (``--keep-workers``, a developer's edit loop)."""
    lint = _lint(tool, options.count, options.jobs)
    kept = [*lint, "--keep-workers"]
    _check(lint, folder, options.count)  # fills the cache
    _check(kept, folder, options.count)  # and the kept workers
    module = folder / "models" / "model_000.py"
    original = module.read_text(encoding="utf-8")
    times: dict[str, list[float]] = {"cold": [], "fresh": [], "kept": []}
    for run in range(options.runs):
        times["cold"].append(timed([*lint, "--no-cache"], folder, (0, 1)))
        module.write_text(original + f"\n# edit {run}\n", encoding="utf-8")
        times["fresh"].append(timed(lint, folder, (0, 1)))
        module.write_text(original + f"\n# edit {run}, kept\n", encoding="utf-8")
        times["kept"].append(timed(kept, folder, (0, 1)))
    c, f, k = (statistics.median(times[name]) for name in ("cold", "fresh", "kept"))
    runs, jobs = options.runs, _jobs_label(options.jobs)
    print(f"cold (--no-cache), {options.count} targets, {jobs}: median {c:.3f} s over {runs} runs")
    print(f"one module edited, cache warm, fresh workers: median {f:.3f} s, ratio {f / c:.3f}")
    print(f"one module edited, cache warm, --keep-workers: median {k:.3f} s, ratio {k / c:.3f}")
    print("aim <= 0.15")


def alone(tool: list[str], folder: Path, description: Path, options: argparse.Namespace) -> None:
    """(d) one module edited with every other target's entry cached, against that one
    module linted alone, its entry stale alike: the cost of the unchanged targets."""
    lint = _lint(tool, options.count, options.jobs)
    _check(lint, folder, options.count)  # fills the cache
    module = folder / "models" / "model_000.py"
    single = [*lint[: lint.index("models")], str(module.relative_to(folder)),
              *lint[lint.index("models") + 1 :]]  # fmt: skip
    original = module.read_text(encoding="utf-8")
    times: dict[str, list[float]] = {"alone": [], "all": []}
    for run in range(options.runs):
        module.write_text(original + f"\n# edit {run}, alone\n", encoding="utf-8")
        times["alone"].append(timed(single, folder, (0, 1)))
        module.write_text(original + f"\n# edit {run}, all\n", encoding="utf-8")
        times["all"].append(timed(lint, folder, (0, 1)))
    a, w = (statistics.median(times[name]) for name in ("alone", "all"))
    print(f"the edited module linted alone: median {a:.3f} s over {options.runs} runs")
    print(f"all {options.count} targets, that one edited, cache warm: median {w:.3f} s")
    print(f"ratio {w / a:.3f}; aim <= 1.10")


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
        aim=0.6,
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


MODES = {"cold": cold, "edit": edit, "alone": alone, "jobs": jobs, "memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=sorted(MODES), default="cold")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=COUNT, help="generated targets")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny", help="of the targets")
    parser.add_argument(
        "--jobs", type=int, default=None, help="--jobs for jxinspect lint (default: lint's own)"
    )
    parser.add_argument(
        "--frozen-gc",
        action="store_true",
        help="cold: the plain loop also gc.freeze()s once JAX is loaded, as lint's workers do",
    )
    options = parser.parse_args()
    tool = tool_base()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        description = generate(folder, options.count, options.size)
        MODES[options.mode](tool, folder, description, options)


if __name__ == "__main__":
    main()
