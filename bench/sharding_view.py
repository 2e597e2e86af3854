"""Sharding pictures of an abstract mesh of 16.7 million devices, against plain `lower`.

Runs, alternately and several times, `jxinspect lower tests/fixtures/targets.py:matmul
--abstract --platform tpu --auto --mesh a=4096,b=4096 --args "f32[8192@a,8192@b],
f32[8192@b,4096]"` (Auto axes: on Explicit ones the contraction over ``b`` is JAX's
ShardingTypeError) (a) as it is, (b) with `--show sharding` and (c) with `--format html`,
and prints each one's median wall time and peak memory (the child's maximum resident set).
The pictures are drawn from blocks, not by going through the devices, so (b) and (c)
should cost about what (a) does (aim: ratio <= 1.5). Before that change they took 56-65 s
and 107-117 s at 6.4 GB each, against about 1 s and 550 MB for (a).
Usage: python bench/sharding_view.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from common import ROOT, tool_base

TARGET = ROOT / "tests" / "fixtures" / "targets.py"
LOWER = ["lower", f"{TARGET}:matmul", "--abstract", "--platform", "tpu", "--auto", "--mesh",
         "a=4096,b=4096", "--args", "f32[8192@a,8192@b], f32[8192@b,4096]"]  # fmt: skip
VARIANTS = {
    "lower:": [],
    "lower --show sharding:": ["--show", "sharding"],
    "lower --format html:": ["--format", "html"],
}


def measured(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident bytes of one run (``os.wait4`` reads that child's
    own resource use); a failing run stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command[:4])}... exited {proc.returncode}:\n{err[-2000:]}")
    return elapsed, usage.ru_maxrss * 1024  # kilobytes on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    commands = {label: [*tool_base(), *LOWER, *extra] for label, extra in VARIANTS.items()}
    for command in commands.values():
        measured(command)  # warm the file cache
    times: dict[str, list[float]] = {label: [] for label in commands}
    peaks: dict[str, int] = dict.fromkeys(commands, 0)
    for _ in range(options.runs):
        for label, command in commands.items():
            elapsed, peak = measured(command)
            times[label].append(elapsed)
            peaks[label] = max(peaks[label], peak)
    width = max(len(label) for label in commands)
    base = statistics.median(times["lower:"])
    for label in commands:
        median = statistics.median(times[label])
        print(f"{label:<{width}}  median {median:.3f} s over {options.runs} runs, "
              f"peak {peaks[label] / 2**20:.0f} MiB, ratio {median / base:.2f}")  # fmt: skip
    print("aim: ratio <= 1.5 for the sharding view and the HTML report")


if __name__ == "__main__":
    main()
