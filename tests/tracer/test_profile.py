"""``jxinspect profile``: the steps of a compiled program measured under JAX's profiler, by
the user's line, by instruction and by collective, against the profiler's own events read
independently (``jax.profiler.ProfileData``, where the release has it) from the trace the
command keeps in XProf's layout."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import jax
import pytest
from helpers import needs_profile_reader, run_cli

from jxinspect.tracer.read.xplane import trace_events

TWO_MATMULS = """
import jax.numpy as jnp


def step(a, b, c, d):
    big = jnp.tanh(a @ b)
    small = c @ d
    return big.sum() + small.sum()


JXINSPECT = {"step": {"args": "f32[512,512], f32[512,512], f32[16,16], f32[16,16]"}}
"""

DATA_PARALLEL = """
import jax
import jax.numpy as jnp


def step(params, batch):
    def loss(p):
        return jnp.mean((jnp.tanh(batch["x"] @ p["w"]) - batch["y"]) ** 2)

    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
"""

STEPS = 4
BIG_LINE, SMALL_LINE = (
    TWO_MATMULS.splitlines().index(text) + 1
    for text in ("    big = jnp.tanh(a @ b)", "    small = c @ d")
)
HAS_READER = hasattr(jax.profiler, "ProfileData")


@pytest.fixture(scope="module")
def two_matmuls(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The profile's JSON report, and the folder it kept the trace in."""
    folder = tmp_path_factory.mktemp("profile")
    (folder / "prog.py").write_text(TWO_MATMULS, encoding="utf-8")
    result = run_cli("profile", "prog.py:step", "--steps", str(STEPS), "--warmup", "1",
                     "--format", "json", "-o", "trace", cwd=folder)  # fmt: skip
    assert result.returncode == 0, result.describe()
    return json.loads(result.stdout), folder


def _independent(folder: Path, module: str) -> dict[str, float]:
    """Seconds per instruction of ``module``, summed over the trace's events, as JAX's own
    reader reads the file."""
    (path,) = (folder / "trace").glob("plugins/profile/*/*.xplane.pb")
    data = jax.profiler.ProfileData.from_file(str(path))
    seconds: dict[str, float] = defaultdict(float)
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if stats.get("hlo_module") == module and "hlo_op" in stats:
                    seconds[str(stats["hlo_op"])] += event.duration_ns / 1e9
    return seconds


def test_the_trace_is_kept_in_xprofs_layout(two_matmuls: tuple[dict[str, Any], Path]) -> None:
    report, folder = two_matmuls
    assert list((folder / "trace").glob("plugins/profile/*/*.xplane.pb"))
    profile = report["profile"]
    assert profile["trace"] == "trace"
    assert profile["steps"] == STEPS and profile["warmup"] == 1
    step = profile["step_seconds"]
    assert 0 < step["min"] <= step["median"] <= step["max"]
    assert report["reached"] == "compiled"


def test_each_instruction_holds_the_time_the_trace_gives_it(
    two_matmuls: tuple[dict[str, Any], Path],
) -> None:
    report, folder = two_matmuls
    profile = report["profile"]
    if profile["unread"] is not None:  # a release whose CPU runtime traces no instruction
        assert profile["by_line"] == [] and profile["instruction_seconds"] is None
        assert "no event" in profile["unread"] or "no trace" in profile["unread"]
        return
    if not HAS_READER:
        pytest.skip(f"JAX {jax.__version__} has no jax.profiler.ProfileData to compare with")
    theirs = _independent(folder, "jit_step")
    mine = {i["instruction"]: i["seconds"] * STEPS for i in profile["by_instruction"]}
    assert mine.keys() == theirs.keys()
    for name, seconds in theirs.items():
        assert mine[name] == pytest.approx(seconds, rel=1e-6, abs=1e-9), name
    total = sum(theirs.values())
    largest = max(theirs, key=theirs.__getitem__)
    big = next(line for line in profile["by_line"] if line["line"] == BIG_LINE)
    assert largest in big["instructions"]
    assert big["share"] == pytest.approx(theirs[largest] / total, abs=0.10)
    assert profile["by_line"][0]["line"] == BIG_LINE
    assert profile["by_line"][0]["file"].endswith("prog.py")
    assert any(line["line"] == SMALL_LINE for line in profile["by_line"])  # apart


def test_our_trace_reader_reads_what_jaxs_reads(two_matmuls: tuple[dict[str, Any], Path]) -> None:
    report, folder = two_matmuls
    events = trace_events(folder / "trace", "jit_step")
    if isinstance(events, str):
        assert report["profile"]["unread"] is not None
        return
    if not HAS_READER:
        pytest.skip(f"JAX {jax.__version__} has no jax.profiler.ProfileData to compare with")
    ours: dict[str, float] = defaultdict(float)
    for event in events:
        ours[event.instruction] += event.seconds
    theirs = _independent(folder, "jit_step")
    assert ours.keys() == theirs.keys()
    assert all(ours[k] == pytest.approx(theirs[k], rel=1e-9, abs=1e-12) for k in theirs)


def test_the_text_says_the_step_and_the_lines(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(TWO_MATMULS, encoding="utf-8")
    result = run_cli("profile", "prog.py:step", "--steps", "2", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert "measured:     2 steps after 2 warm-up on 1 " in result.stdout
    assert "step:         median " in result.stdout
    assert "time by line (" in result.stdout or "by line:      not measured: " in result.stdout


def test_the_collectives_of_a_data_parallel_step_are_measured_by_path(tmp_path: Path) -> None:
    (tmp_path / "dp.py").write_text(DATA_PARALLEL, encoding="utf-8")
    result = run_cli(
        "profile", "dp.py:step", "--devices", "8", "--mesh", "data=8", "--steps", "3",
        "--args", "{'w': f32[64,16]}, {'x': f32[256@data,64], 'y': f32[256@data,16]}",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    profile = report["profile"]
    assert profile["devices"] == 8
    compiled = {c["instruction"]: c for c in report["compiled"]["collectives"]}
    assert compiled, "a data-parallel step all-reduces its gradients"
    measured = {c["instruction"]: c for c in profile["collectives"]}
    assert measured.keys() == compiled.keys()
    for name, collective in measured.items():
        assert collective["kind"] == compiled[name]["kind"]
        assert collective["moves"] == compiled[name]["operand_paths"]
    if profile["unread"] is None:
        timed = [c for c in measured.values() if c["seconds"] > 0]
        assert timed, measured
        assert any(c["kind"] == "all-reduce" and c["axes"] == ["data"] for c in timed)
        assert all(c["bytes_per_second"] is not None for c in timed)


def test_no_trace_is_said_never_a_table_of_zeros(tmp_path: Path) -> None:
    said = trace_events(tmp_path, "jit_step")
    assert said == f"the profiler wrote no trace under {tmp_path}"


@needs_profile_reader
def test_the_timeline_is_one_step_of_the_trace(two_matmuls: tuple[dict[str, Any], Path]) -> None:
    report, folder = two_matmuls
    profile = report["profile"]
    if profile["unread"] is not None:
        assert profile["timeline"] == []
        return
    spans = profile["timeline"]
    assert spans[0]["start"] == 0
    assert [s["start"] for s in spans] == sorted(s["start"] for s in spans)
    per_step = {i["instruction"]: i["count"] for i in profile["by_instruction"]}
    assert sorted(s["instruction"] for s in spans) == sorted(
        name for name, count in per_step.items() for _ in range(count)
    )  # one step's runs, each instruction as often as a step runs it
    big = next(s for s in spans if s["line"] == BIG_LINE)
    assert big["file"].endswith("prog.py")
    if not HAS_READER:
        return
    (path,) = (folder / "trace").glob("plugins/profile/*/*.xplane.pb")
    durations = {
        (str(dict(e.stats)["hlo_op"]), round(e.duration_ns))
        for plane in jax.profiler.ProfileData.from_file(str(path)).planes
        for line in plane.lines
        for e in line.events
        if dict(e.stats).get("hlo_module") == "jit_step" and "hlo_op" in dict(e.stats)
    }
    assert all((s["instruction"], round(s["seconds"] * 1e9)) in durations for s in spans)
