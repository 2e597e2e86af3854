"""Cost of the guard (`jxinspect record --guard`, `jxinspect.guard.install()`) on a real
multi-process run: N processes of `sample_programs/record/many_hosts.py` on 127.0.0.1
(2 simulated CPU devices each, CPU collectives over gloo), started as a launcher would,
plainly and with the guard installed in each process before the program runs, in
alternating runs. Prints the median whole-run seconds each way and their ratio (the aim:
<= 1.05), for each process count asked.
Usage: python bench/guard.py [--runs N] [--processes 2 4]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "sample_programs" / "record" / "many_hosts.py"
GUARDED = (
    "import runpy, sys, jxinspect.guard; jxinspect.guard.install(); "
    "sys.argv = [sys.argv[1]]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(count: int, guarded: bool) -> float:
    """Seconds from starting ``count`` processes to the last one's end."""
    port = free_port()
    command = (
        [sys.executable, "-c", GUARDED, str(SAMPLE)] if guarded else [sys.executable, str(SAMPLE)]
    )
    started = time.perf_counter()
    children = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={
            **os.environ, "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}",
            "JAX_NUM_PROCESSES": str(count), "JAX_PROCESS_ID": str(k)})
        for k in range(count)
    ]  # fmt: skip
    codes = [child.wait(timeout=300) for child in children]
    if any(codes):
        raise SystemExit(f"a process failed ({codes}): run it by hand to see why")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs each way")
    parser.add_argument("--processes", type=int, nargs="+", default=[2, 4])
    options = parser.parse_args()
    for count in options.processes:
        plain, guarded = [], []
        for _ in range(options.runs):
            plain.append(run(count, False))
            guarded.append(run(count, True))
        mine, theirs = statistics.median(guarded), statistics.median(plain)
        print(f"{count} processes: plain {theirs:.2f} s, guarded {mine:.2f} s "
              f"(median of {options.runs}): ratio {mine / theirs:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
