"""The annotated module view (`--show mlir`) on a ~100k-op module, against JAX's `as_text()`.

Stages once a function of N elementwise ops (`x = sin(x) * y + x`, three StableHLO ops per
step), then times, alternately and several times: (a) JAX's own `lowered.as_text()`, and
(b) everything `--show mlir` does after lowering: `tracer.annotate.annotate_module` (which
prints the module with `as_text()` and lays `@main` out) and `render.mlir_view.render`, plain
and coloured. Prints the medians and the ratios (aim: plain ≤ 2).
Usage: python bench/mlir_view.py [--ops N] [--runs N]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()

    import jax
    import jax.numpy as jnp

    from jxinspect.core.model import Report
    from jxinspect.core.program import Program
    from jxinspect.render.report import mlir_view
    from jxinspect.tracer import stage
    from jxinspect.tracer.read import annotate, mlir
    from jxinspect.tracer.read import report as extract

    def chain(x: Any, y: Any) -> Any:
        for _ in range(options.ops // 3):
            x = jnp.sin(x) * y + x
        return x

    arg = jax.ShapeDtypeStruct((8,), jnp.float32)
    start = time.perf_counter()
    staged = stage.stage_function(chain, (arg, arg), {}, "jit", {}, None)
    lowered = staged.lowered
    main_sig = mlir.read_main(lowered.compiler_ir("stablehlo"))
    context = extract.Context(
        target="chain", expected_args=["x", "y"], platform="cpu", partitioner="shardy"
    )
    report: Report = extract.build_report(staged, main_sig, context)
    print(f"staged {options.ops // 3 * 3} ops in {time.perf_counter() - start:.1f} s")

    def view(color: bool) -> str:
        module = annotate.annotate_module(lowered, "stablehlo", False, main_sig, report.inputs)
        with_text = dataclasses.replace(report, program=Program(module=module))
        return mlir_view.render(with_text, color=color)

    ops = lowered.as_text().count("stablehlo.")
    assert "// x · ok" in view(False), "the view lost its labels"
    plain, ours, coloured = [], [], []
    for _ in range(options.runs):
        plain.append(timed(lowered.as_text))
        ours.append(timed(lambda: view(False)))
        coloured.append(timed(lambda: view(True)))
    p, o, c = (statistics.median(t) for t in (plain, ours, coloured))
    print(f"module: {ops} StableHLO ops")
    print(f"jax lowered.as_text():         median {p:.3f} s over {options.runs} runs")
    print(f"jxinspect --show mlir (plain): median {o:.3f} s")
    print(f"jxinspect --show mlir (color): median {c:.3f} s")
    print(f"ratio plain: {o / p:.2f} (aim <= 2.0); ratio colour: {c / p:.2f}")


if __name__ == "__main__":
    main()
