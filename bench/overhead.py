"""Whole-process overhead of `jxinspect lower` against plain JAX doing the same work.

Runs, alternately and several times, (a) `jxinspect lower sample_programs/big_mlp.py:forward
--format json` and (b) a plain script that imports jax, builds the same inputs and does
`jax.jit(forward).trace(*args).lower().as_text(debug_info=True)`; prints the medians and
their ratio. Usage: python bench/overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_programs" / "big_mlp.py"

PLAIN = f"""
import importlib.util, jax
spec = importlib.util.spec_from_file_location("big_mlp", {str(SAMPLE)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
args, kwargs = mod.make_args()
text = jax.jit(mod.forward).trace(*args, **kwargs).lower().as_text(debug_info=True)
assert "func.func public @main" in text
"""


def tool_base() -> list[str]:
    """The console script beside this interpreter (not a version manager's shim, which
    starts a shell and resolves Python again), else on PATH, else ``python -m jxinspect``."""
    beside = Path(sys.executable).parent / "jxinspect"
    if beside.is_file():
        return [str(beside)]
    exe = shutil.which("jxinspect")
    return [exe] if exe else [sys.executable, "-m", "jxinspect"]


def tool_command() -> list[str]:
    return [*tool_base(), "lower", f"{SAMPLE}:forward", "--format", "json"]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    plain_cmd = [sys.executable, "-c", PLAIN]
    timed(plain_cmd), timed(tool_command())  # warm the file cache
    plain, tool = [], []
    for _ in range(runs):
        plain.append(timed(plain_cmd))
        tool.append(timed(tool_command()))
    p, t = statistics.median(plain), statistics.median(tool)
    print(f"plain jax trace+lower+as_text: median {p:.3f} s over {runs} runs")
    print(f"jxinspect lower --format json: median {t:.3f} s over {runs} runs")
    print(f"ratio: {t / p:.3f} (aim <= 1.10)")


if __name__ == "__main__":
    main()
