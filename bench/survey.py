"""Whole-process time of `jxinspect survey` against plain JAX doing the same work.

Runs, alternately and several times, (a) `jxinspect survey --format json -o FILE` and
(b) a plain script that simulates the same 4 CPU devices, imports the corpus and lowers
every program with `jax.jit` (`jax.pmap` for pmap) on the same abstract inputs, printing
each module with its locations; prints the medians and their ratio. The plain script
builds its inputs with jxinspect's spec reader (not timed apart: a few milliseconds).
Usage: python bench/survey.py [--runs N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import ROOT, compare, tool_base

CORPUS = ROOT / "src" / "jxinspect" / "survey" / "corpus" / "programs.py"

PLAIN = f"""
import ast, importlib.util, jax
from jxinspect.tracer import seam
seam.simulate_cpu_devices(4)
from jxinspect.project import spec as specs
from jxinspect.tracer import inputs
source = open({str(CORPUS)!r}).read()
declared = next(ast.literal_eval(node.value) for node in ast.parse(source).body
                if isinstance(node, ast.Assign) and node.targets[0].id == "JXINSPECT")
loaded = importlib.util.spec_from_file_location("corpus", {str(CORPUS)!r})
corpus = importlib.util.module_from_spec(loaded); loaded.loader.exec_module(corpus)
mesh = jax.sharding.Mesh(jax.devices()[:2], ("x",))
P = jax.sharding.PartitionSpec
for name, entry in declared.items():
    args = tuple(inputs.to_abstract(a, None) for a in specs.parse_args(entry["args"]))
    kwargs = {{k: inputs.to_abstract(v, None)
              for k, v in specs.parse_kwargs(entry.get("kwargs", "")).items()}}
    fun = getattr(corpus, name)
    if entry.get("stage") == "pmap":
        staged = jax.pmap(fun, axis_name=entry["axis_name"], devices=jax.devices()[:4])
    elif "in_specs" in entry:
        S = lambda *spec: jax.sharding.NamedSharding(mesh, P(*spec))
        staged = jax.jit(fun, in_shardings=(S("x"), S()), out_shardings=S("x"))
    else:
        staged = jax.jit(fun, static_argnums=entry.get("static_argnums", ()),
                         donate_argnums=entry.get("donate_argnums", ()))
    lowered = staged.lower(*args, **kwargs)
    lowered.compiler_ir("stablehlo").operation.get_asm(enable_debug_info=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = str(Path(folder) / "survey.json")
        compare(
            [sys.executable, "-c", PLAIN],
            [*tool_base(), "survey", "--format", "json", "-o", out],
            labels=("plain JAX: lower the 27 programs", "jxinspect survey"),
            aim=3.0,
            runs=options.runs,
        )


if __name__ == "__main__":
    main()
