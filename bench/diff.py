"""Whole-process time of `jxinspect diff-debug` against one plain-JAX lowering.

Runs, alternately and several times, (a) `jxinspect diff-debug sample_programs/big_mlp.py
sample_programs/diff/big_mlp_after.py` (two versions of the 256-layer MLP, both traced
and lowered in one process) and (b) a plain script that imports jax and does
`jax.jit(forward).trace(*args).lower().as_text(debug_info=True)` once; prints the
medians and their ratio. Usage: python bench/diff.py [--runs N]
"""

from __future__ import annotations

import argparse
import sys

from common import ROOT, compare, tool_base
from overhead import PLAIN  # the same single plain-JAX lowering of the 256-layer MLP
from overhead import SAMPLE as BEFORE

AFTER = ROOT / "sample_programs" / "diff" / "big_mlp_after.py"
AIM = 2.2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    compare(
        [sys.executable, "-c", PLAIN],
        [*tool_base(), "diff-debug", str(BEFORE), str(AFTER)],
        labels=("plain jax: one trace+lower+as_text:", "jxinspect diff-debug (two versions):"),
        aim=AIM,
        runs=parser.parse_args().runs,
        tool_ok=(0, 1),
    )


if __name__ == "__main__":
    main()
