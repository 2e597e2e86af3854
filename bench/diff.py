"""Whole-process time of `jxinspect diff-debug` against one plain-JAX lowering.

Runs, alternately and several times, (a) `jxinspect diff-debug sample_programs/big_mlp.py
sample_programs/diff/big_mlp_after.py` (two versions of the 256-layer MLP, both traced
and lowered in one process) and (b) a plain script that imports jax and does
`jax.jit(forward).trace(*args).lower().as_text(debug_info=True)` once; prints the
medians and their ratio. Usage: python bench/diff.py [--runs N]
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
BEFORE = ROOT / "sample_programs" / "big_mlp.py"
AFTER = ROOT / "sample_programs" / "diff" / "big_mlp_after.py"
AIM = 2.2

PLAIN = f"""
import importlib.util, jax
spec = importlib.util.spec_from_file_location("big_mlp", {str(BEFORE)!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
args, kwargs = mod.make_args()
text = jax.jit(mod.forward).trace(*args, **kwargs).lower().as_text(debug_info=True)
assert "func.func public @main" in text
"""


def tool_command() -> list[str]:
    exe = shutil.which("jxinspect")
    base = [exe] if exe else [sys.executable, "-m", "jxinspect"]
    return [*base, "diff-debug", str(BEFORE), str(AFTER)]


def timed(command: list[str], ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, cwd=ROOT, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(command[:3])}... exited {proc.returncode}")
    return elapsed


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
    print(f"plain jax: one trace+lower+as_text:     median {p:.3f} s over {runs} runs")
    print(f"jxinspect diff-debug (two versions):    median {t:.3f} s over {runs} runs")
    print(f"ratio: {t / p:.3f} (aim <= {AIM})")


if __name__ == "__main__":
    main()
