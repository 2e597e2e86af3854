"""Whole-process cost of `jxinspect lower --format json` on a wide pytree (20,000 leaves),
against plain JAX tracing and lowering the same function in one process: the report's
building and JSON writing are what this measures beyond JAX's own work.

Runs, alternately and several times, (a) a plain script that imports jax and does
`jax.jit(f).trace(params).lower()` of a dict of 20,000 `f32[4]` arrays, and (b)
`jxinspect lower wide.py:f --format json -o FILE` of the same function and inputs (its
`--args-from` maker); prints the medians and their ratio.
Usage: python bench/json_report.py [--runs N] [--leaves N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import compare, tool_base

MODULE = """
import jax, jax.numpy as jnp

LEAVES = {leaves}


def f(params):
    return jax.tree.map(lambda x: x * 2, params)


def make_args():
    return ({{f"p{{i:05d}}": jax.ShapeDtypeStruct((4,), jnp.float32) for i in range(LEAVES)}},)
"""

PLAIN = """
import importlib.util, jax, sys
spec = importlib.util.spec_from_file_location("wide", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
lowered = jax.jit(mod.f).trace(*mod.make_args()).lower()
assert "func.func public @main" in lowered.as_text()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--leaves", type=int, default=20_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        module = Path(folder) / "wide.py"
        module.write_text(MODULE.format(leaves=options.leaves), encoding="utf-8")
        out = Path(folder) / "report.json"
        compare(
            [sys.executable, "-c", PLAIN, str(module)],
            [
                *tool_base(),
                "lower",
                f"{module}:f",
                "--args-from",
                "make_args",
                "--format",
                "json",
                "-o",
                str(out),
            ],  # fmt: skip
            labels=("plain jax trace+lower:", "jxinspect lower --format json:"),
            aim=1.10,
            runs=options.runs,
            cwd=Path(folder),
        )


if __name__ == "__main__":
    main()
