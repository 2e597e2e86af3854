"""`jxinspect show FOLDER` of a synthetic recording of many processes: its time and peak
memory, and how they grow with the number of processes (the folders are read one at a
time, and a function's programs are read only where the processes differ).

Each process folder holds an index of `--functions` functions, as `record` writes it; the
last process lowered one function with another batch, whose report and module are
written for the comparison (JX403).

    python bench/processes_show.py                      # 512 processes against 64
    python bench/processes_show.py --processes 2048
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from common import tool_base

from jxinspect.core.recording import Entry, Index
from jxinspect.record import folder as records

MODULE = """module @jit_step {{
  func.func public @main(%arg0: tensor<{rows}x8xf32> loc("x")) -> (tensor<{rows}x8xf32>) {{
    %0 = stablehlo.sine %arg0 : tensor<{rows}x8xf32> loc(#loc2)
    return %0 : tensor<{rows}x8xf32> loc(#loc2)
  }} loc(#loc)
}} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("train.py":12:4)
#loc2 = loc("jit(step)/sin"(#loc1))
"""


def _report(rows: int) -> dict[str, object]:
    """A recorded report of one argument (``x``) with ``rows`` rows."""
    leaf = {"index": 0, "path": "x", "jaxpr_name": "x", "name": "x", "status": "ok",
            "shape": [rows, 8], "dtype": "float32"}  # fmt: skip
    return {
        "schema": "jxinspect.report/1", "target": "train.py:step", "function": "step",
        "file": "train.py", "line": 10, "stage": "jit", "reached": "lowered", "error": None,
        "jax_version": "0.10.2", "platform": "cpu", "num_devices": 1, "mesh": None,
        "abstract_mesh": False, "partitioner": "shardy", "notes": [], "inputs_from": None,
        "inputs": [leaf], "static_args": [], "outputs": [], "extra_args": [], "jaxpr": None,
        "nested": [], "findings": [], "compiled": None,
    }  # fmt: skip


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_recording(root: Path, processes: int, functions: int) -> None:
    for process in range(processes):
        folder = root / f"process-{process}"
        folder.mkdir(parents=True)
        odd = process == processes - 1
        entries = [
            Entry(
                name=f"f{n}",
                folder=f"f{n}",
                source=f"f{n} at train.py:{10 + n}",
                signature="(float32[16,8])",
                stage="jit",
                lowerings=1,
                identity=f"{(n + (odd and n == 0)):064x}",
                names_digest="0" * 64,
                source_digest=f"{n:064x}",
            )  # fmt: skip
            for n in range(functions)
        ]
        index = Index(command=["python", "train.py"], functions=entries,
                      exit_code=0, process=process, processes=processes)  # fmt: skip
        records.write_index(folder, index)
        if process in (0, processes - 1):
            (folder / "f0").mkdir()
            rows = 17 if odd else 16
            records.write_json(folder / "f0" / records.REPORT, _report(rows))
            (folder / "f0" / records.PROGRAM).write_text(MODULE.format(rows=rows))


def measure(processes: int, functions: int) -> tuple[float, float]:
    """Seconds and peak megabytes (the process's own, from ``wait4``) of one
    ``show --format json``; the answer is checked."""
    with tempfile.TemporaryDirectory() as tmp:
        write_recording(Path(tmp) / "runs", processes, functions)
        out = Path(tmp) / "out.json"
        command = [
            *tool_base(),
            "show",
            str(Path(tmp) / "runs"),
            "--format",
            "json",
            "-o",
            str(out),
        ]
        start = time.perf_counter()
        child = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        took = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        data = json.loads(out.read_text(encoding="utf-8"))
        assert child.returncode == 0 and data["processes"] == processes, child.returncode
        assert [f["code"] for f in data["findings"]] == ["JX403"], data["findings"]
        return took, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=512)
    parser.add_argument("--against", type=int, default=64, help="the smaller recording")
    parser.add_argument("--functions", type=int, default=20)
    args = parser.parse_args()
    small = measure(args.against, args.functions)
    large = measure(args.processes, args.functions)
    for count, (took, peak) in ((args.against, small), (args.processes, large)):
        print(f"{count} processes x {args.functions} functions: {took:.2f} s, "
              f"peak {peak:.0f} MB")  # fmt: skip
    print(f"ratio: time {large[0] / small[0]:.2f}x, memory {large[1] / small[1]:.2f}x "
          f"for {args.processes / args.against:.0f}x the processes")  # fmt: skip


if __name__ == "__main__":
    main()
