"""Whole-process overhead of `jxinspect lower` against plain JAX doing the same work.

Runs, alternately and several times, (a) `jxinspect lower sample_programs/big_mlp.py:forward
--format json` and (b) a plain script that imports jax, builds the same inputs and does
`jax.jit(forward).trace(*args).lower().as_text(debug_info=True)` (or, on JAX 0.4.x, the
module printed with its locations); prints the medians and
their ratio. Usage: python bench/overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import sys

from common import ROOT, compare, tool_base

SAMPLE = ROOT / "sample_programs" / "big_mlp.py"

PLAIN = f"""
import importlib.util, jax
spec = importlib.util.spec_from_file_location("big_mlp", {str(SAMPLE)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
args, kwargs = mod.make_args()
lowered = jax.jit(mod.forward).trace(*args, **kwargs).lower()
try:
    text = lowered.as_text(debug_info=True)
except TypeError:  # JAX 0.4.x: no debug_info argument; print the module with locations
    text = lowered.compiler_ir("stablehlo").operation.get_asm(enable_debug_info=True)
assert "func.func public @main" in text
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--frozen-gc",
        action="store_true",
        help="also gc.freeze() in the plain script, as jxinspect does once JAX is loaded",
    )
    options = parser.parse_args()
    plain = PLAIN
    if options.frozen_gc:
        plain = PLAIN.replace("text = jax.jit", "import gc; gc.freeze()\n" + "text = jax.jit")
    compare(
        [sys.executable, "-c", plain],
        [*tool_base(), "lower", f"{SAMPLE}:forward", "--format", "json"],
        labels=("plain jax trace+lower+as_text:", "jxinspect lower --format json:"),
        aim=1.10,
        runs=options.runs,
    )


if __name__ == "__main__":
    main()
