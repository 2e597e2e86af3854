"""What every whole-process benchmark here shares: the command to run, a timer, and the
alternating plain-JAX-versus-jxinspect comparison with its printed ratio."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tool_base() -> list[str]:
    """The console script beside this interpreter (not a version manager's shim, which
    starts a shell and resolves Python again), else on PATH, else ``python -m jxinspect``."""
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        if (folder / "jxinspect").is_file():
            return [str(folder / "jxinspect")]
    exe = shutil.which("jxinspect")
    return [exe] if exe else [sys.executable, "-m", "jxinspect"]


def timed(command: list[str], cwd: Path = ROOT, ok: tuple[int, ...] = (0,)) -> float:
    """Wall time of one run; a run that exits otherwise than ``ok`` stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.run(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(command[:4])}... exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed


def compare(
    plain: list[str],
    tool: list[str],
    *,
    labels: tuple[str, str],
    aim: float,
    runs: int,
    cwd: Path = ROOT,
    tool_ok: tuple[int, ...] = (0,),
) -> float:
    """Run both commands alternately ``runs`` times (after one warm-up each), print the
    medians and their ratio, and return the ratio."""
    timed(plain, cwd), timed(tool, cwd, tool_ok)  # warm the file cache
    plain_times, tool_times = [], []
    for _ in range(runs):
        plain_times.append(timed(plain, cwd))
        tool_times.append(timed(tool, cwd, tool_ok))
    p, t = statistics.median(plain_times), statistics.median(tool_times)
    width = max(len(label) for label in labels)
    print(f"{labels[0]:<{width}}  median {p:.3f} s over {runs} runs")
    print(f"{labels[1]:<{width}}  median {t:.3f} s over {runs} runs")
    print(f"ratio: {t / p:.3f} (aim <= {aim})")
    return t / p
