"""``jxinspect record --profile N -- python run.py`` end to end: the run's own calls of each
recorded function measured under JAX's profiler, checked against the profiler's events of
the trace the recording keeps (read independently, with ``jax.profiler.ProfileData``):
the run's calls are all the trace holds (nothing of ours ran the program), the first after
the compile is left out, the next N are the measured ones."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import jax
import pytest
from helpers import WARM_PYTHON, needs_profile_reader, run_cli

RUN = """
import jax
import jax.numpy as jnp


@jax.jit
def step(a, b, c, d):
    big = jnp.tanh(a @ b)
    small = c @ d
    return big.sum() + small.sum()


@jax.jit
def once(x):
    return jnp.sin(x) * 2


a, c = jnp.ones((256, 256)), jnp.ones((16, 16))
for _ in range(CALLS):
    step(a, a, c, c).block_until_ready()
once(c).block_until_ready()
print("the run's own output")
"""
CALLS, MEASURED = 6, 3
BIG_LINE = RUN.splitlines().index("    big = jnp.tanh(a @ b)") + 1


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("record-profile")
    (folder / "run.py").write_text(RUN.replace("CALLS", str(CALLS)), encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--profile", str(MEASURED), "--", *WARM_PYTHON,
                     "run.py", cwd=folder)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert result.stdout == "the run's own output\n"
    return folder


def _report(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "runs" / name / "report.json").read_text())
    return data


def _runs(folder: Path, module: str) -> list[dict[str, float]]:
    """Each run of ``module`` in the kept trace, in the order they began: seconds per
    instruction, as JAX's own reader reads the file."""
    (path,) = (folder / "runs" / "profile-trace").glob("plugins/profile/*/*.xplane.pb")
    runs: dict[Any, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    began: dict[Any, float] = {}
    for plane in jax.profiler.ProfileData.from_file(str(path)).planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if stats.get("hlo_module") != module or "hlo_op" not in stats:
                    continue
                run = stats.get("run_id")
                runs[run][str(stats["hlo_op"])] += event.duration_ns / 1e9
                began[run] = min(began.get(run, event.start_ns), event.start_ns)
    return [dict(runs[run]) for run in sorted(runs, key=began.__getitem__)]


def test_the_runs_own_calls_are_measured(recording: Path) -> None:
    profile = _report(recording, "step")["profile"]
    if profile["unread"] is not None:  # a release whose CPU runtime traces no instruction
        assert profile["by_line"] == [] and profile["instruction_seconds"] is None
        return
    assert profile["recorded"] is True
    assert (profile["steps"], profile["warmup"]) == (MEASURED, 1)
    assert profile["trace"] == "profile-trace"
    assert profile["by_line"][0]["line"] == BIG_LINE
    assert profile["by_line"][0]["file"].endswith("run.py")
    assert profile["timeline"] and profile["timeline"][0]["start"] == 0
    if not hasattr(jax.profiler, "ProfileData"):
        pytest.skip(f"JAX {jax.__version__} has no jax.profiler.ProfileData to compare with")
    runs = _runs(recording, "jit_step")
    assert len(runs) == CALLS  # the run's own calls, and nothing of ours
    theirs: dict[str, float] = defaultdict(float)
    for run in runs[1 : MEASURED + 1]:
        for name, seconds in run.items():
            theirs[name] += seconds / MEASURED
    mine = {i["instruction"]: i["seconds"] for i in profile["by_instruction"]}
    assert mine.keys() == theirs.keys()
    assert all(mine[k] == pytest.approx(theirs[k], rel=1e-6) for k in theirs)


def test_a_function_called_once_is_said_never_measured(recording: Path) -> None:
    profile = _report(recording, "once")["profile"]
    assert profile["steps"] == 0 and profile["by_line"] == []
    assert profile["unread"] in (
        "the run called it once only, the call that followed its compile",
        "the profiler's trace holds no event of jit_once's instructions",
    )


@needs_profile_reader
def test_show_prints_the_measured_table(recording: Path) -> None:
    result = run_cli("show", "runs", cwd=recording)
    assert result.returncode == 0, result.describe()
    assert "measured: step (step)" in result.stdout
    assert f"  measured:     {MEASURED} calls of the run's own (after its first 1)" in result.stdout
    if _report(recording, "step")["profile"]["unread"] is None:
        assert "  time by line (" in result.stdout
        assert f"run.py:{BIG_LINE}" in result.stdout
    one = run_cli("show", "runs/step", cwd=recording)
    assert one.returncode == 0, one.describe()
    assert "call:         median " in one.stdout
    shown = run_cli("show", "runs", "--format", "json", cwd=recording)
    (step,) = [f for f in json.loads(shown.stdout)["functions"] if f["name"] == "step"]
    assert step["profile"]["steps"] == MEASURED


def test_without_profile_nothing_is_measured_and_the_trace_goes(
    recording: Path, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(recording, tmp_path / "project"))
    assert (folder / "runs" / "profile-trace").is_dir()
    result = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "run.py", cwd=folder)
    assert result.returncode == 0, result.describe()
    assert _report(folder, "step").get("profile") is None
    assert not (folder / "runs" / "profile-trace").exists()  # replaced with the recording


@needs_profile_reader
def test_diff_debug_compares_two_recordings_measured_steps(recording: Path) -> None:
    result = run_cli("diff-debug", "runs", "runs", "--profile", "--format", "json",
                     cwd=recording)  # fmt: skip
    assert result.returncode == 0, result.describe()
    targets = {t["name"]: t for t in json.loads(result.stdout)["targets"]}
    step = next(t for name, t in targets.items() if name.startswith("step"))
    assert step["profile"] is not None
    assert not [c for c in step["changes"] if c["class"] == "time"]
    if step["profile"]["unread"] == []:
        assert all(line["percent"] == 0 for line in step["profile"]["lines"])
