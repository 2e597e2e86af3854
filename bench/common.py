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
    starts a shell and resolves Python again), else on PATH, else ``python -m jxinspect``.

    jxinspect's bytecode is compiled first, as ``pip install`` does: an editable checkout
    run with ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every edited module on
    every run (tens of milliseconds that no installed copy pays)."""
    import compileall

    import jxinspect

    compileall.compile_dir(str(Path(jxinspect.__file__).parent), quiet=1)
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
    return compare_many(
        plain, [(labels[1], tool)], plain_label=labels[0], aim=aim, runs=runs, cwd=cwd,
        tool_ok=tool_ok,
    )[0]  # fmt: skip


def compare_many(
    plain: list[str],
    tools: list[tuple[str, list[str]]],
    *,
    plain_label: str,
    aim: float,
    runs: int,
    cwd: Path = ROOT,
    tool_ok: tuple[int, ...] = (0,),
) -> list[float]:
    """:func:`compare` for several ``(label, command)`` against one plain command: all run
    in turn ``runs`` times (after one warm-up each); prints every median and each
    command's ratio to the plain one, and returns the ratios."""
    timed(plain, cwd)  # warm the file cache
    for _, command in tools:
        timed(command, cwd, tool_ok)
    plain_times: list[float] = []
    tool_times: list[list[float]] = [[] for _ in tools]
    for _ in range(runs):
        plain_times.append(timed(plain, cwd))
        for times, (_, command) in zip(tool_times, tools):
            times.append(timed(command, cwd, tool_ok))
    p = statistics.median(plain_times)
    medians = [statistics.median(times) for times in tool_times]
    width = max(len(label) for label in [plain_label, *(label for label, _ in tools)])
    print(f"{plain_label:<{width}}  median {p:.3f} s over {runs} runs")
    for (label, _), t in zip(tools, medians):
        print(f"{label:<{width}}  median {t:.3f} s over {runs} runs")
    ratios = [t / p for t in medians]
    for (label, _), ratio in zip(tools, ratios):
        name = label.rstrip(":") if len(tools) > 1 else ""
        print(f"ratio{' (' + name + ')' if name else ''}: {ratio:.3f} (aim <= {aim})")
    return ratios
