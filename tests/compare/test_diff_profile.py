"""``jxinspect diff-debug`` of two measured steps through the installed command: two saved
``profile --format json`` reports, or two versions with ``--profile``. One line's matrix
product is made 16× larger after (512³ multiply-adds → 16 × 512³), large enough that its
time is arithmetic, not a loaded machine's noise (at 256³ a loaded suite measured the
product before as long as 16× it after); the diff names that line as slower, its times
checked against the profiler's own events of each side's kept trace (read independently,
with ``jax.profiler.ProfileData``)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import jax
import pytest
from helpers import needs_profile_reader, run_cli
from test_diff import assert_valid_diff

PROGRAM = """
import jax.numpy as jnp


def step(a, b, c, d):
{comment}    big = jnp.tanh(a @ b)
    small = {small} @ d
    return big.sum() + small.sum()


JXINSPECT = {{"step": {{"args": "f32[512,512], f32[512,512], f32[512,512], f32[512,512]"}}}}
"""
GROWN = "jnp.tile(c, (16, 1))"
BEFORE = PROGRAM.format(comment="", small="c")
AFTER = PROGRAM.format(comment="", small=GROWN)
MOVED = PROGRAM.format(comment="    # a line above moves the lines below\n", small=GROWN)
SMALL_LINE = AFTER.splitlines().index(f"    small = {GROWN} @ d") + 1
STEPS = 5


def _write(folder: Path) -> None:
    for name, text in (("before.py", BEFORE), ("after.py", AFTER), ("moved.py", MOVED)):
        (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with both versions profiled and saved (``a.json``, ``b.json``), their
    traces kept (``trace-a``, ``trace-b``)."""
    folder = tmp_path_factory.mktemp("profiles")
    _write(folder)
    for side, name in (("a", "before.py"), ("b", "after.py")):
        result = run_cli("profile", f"{name}:step", "--steps", str(STEPS), "--warmup", "1",
                         "--format", "json", "-o", f"trace-{side}", cwd=folder)  # fmt: skip
        assert result.returncode == 0, result.describe()
        (folder / f"{side}.json").write_text(result.stdout, encoding="utf-8")
    return folder


def _independent(trace: Path) -> dict[str, float]:
    """Seconds per instruction of ``jit_step`` in the kept trace, as JAX's reader reads it."""
    (path,) = trace.glob("plugins/profile/*/*.xplane.pb")
    seconds: dict[str, float] = defaultdict(float)
    for plane in jax.profiler.ProfileData.from_file(str(path)).planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if stats.get("hlo_module") == "jit_step" and "hlo_op" in stats:
                    seconds[str(stats["hlo_op"])] += event.duration_ns / 1e9
    return seconds


def _measured(folder: Path, side: str) -> dict[str, Any]:
    profile: dict[str, Any] = json.loads((folder / f"{side}.json").read_text())["profile"]
    if profile["unread"] is not None:
        pytest.skip(f"this release's CPU runtime traces no instruction: {profile['unread']}")
    return profile


def _growth(line: dict[str, Any]) -> float:
    """How much larger a part of its step a line's instructions took after than before:
    read within each run, so a run slowed all over by a loaded machine moves no line (its
    seconds do). Not its percent: the sum of the grown product, on the next line, grows
    by as much relatively."""
    return float((line["after_share"] or 0) - (line["before_share"] or 0))


def test_two_saved_profiles_name_the_line_that_slowed(saved: Path) -> None:
    _measured(saved, "a")
    result = run_cli("diff-debug", "a.json", "b.json", "--format", "json", cwd=saved)
    assert result.returncode == 0, result.describe()  # a slower line is a warning
    data = json.loads(result.stdout)
    assert_valid_diff(data)
    (target,) = data["targets"]
    regressions = [c for c in target["changes"] if c["verdict"] == "regression"]
    assert {(c["class"], c["kind"], c["severity"]) for c in regressions} == {
        ("time", "grew", "warning")  # the other line may be slower too: a shared machine
    }, regressions
    assert any(c["path"].endswith(f"after.py:{SMALL_LINE}") for c in regressions)
    most = max(target["profile"]["lines"], key=_growth)
    assert most["what"].endswith(f"after.py:{SMALL_LINE}")  # the most slowed
    lines = {line["what"].rsplit(":", 1)[1]: line for line in target["profile"]["lines"]}
    slowed = lines[str(SMALL_LINE)]
    assert slowed["matched_by"] == "line"
    assert slowed["after_seconds"] > 2 * slowed["before_seconds"]  # 16× the work
    assert slowed["after_share"] > slowed["before_share"]
    assert slowed["percent"] == pytest.approx(
        (slowed["after_seconds"] / slowed["before_seconds"] - 1) * 100
    )
    if not hasattr(jax.profiler, "ProfileData"):
        return
    for side, seconds in (("a", slowed["before_seconds"]), ("b", slowed["after_seconds"])):
        theirs = _independent(saved / f"trace-{side}")
        line = next(x for x in _measured(saved, side)["by_line"] if x["line"] == SMALL_LINE)
        assert seconds == pytest.approx(
            sum(theirs[name] for name in line["instructions"]) / STEPS, rel=1e-6
        )
        assert line["share"] == pytest.approx(
            sum(theirs[name] for name in line["instructions"]) / sum(theirs.values()), rel=1e-6
        )


def test_the_gate_fails_on_a_slower_line_at_warning(saved: Path) -> None:
    _measured(saved, "a")
    result = run_cli("diff-debug", "a.json", "b.json", "--fail-on", "warning", cwd=saved)
    assert result.returncode == 1, result.describe()
    assert f"failed: {saved / 'after.py'}:{SMALL_LINE} time grew" in result.stdout or (
        f"after.py:{SMALL_LINE} time grew" in result.stdout
    )
    assert "time by line (" in result.stdout
    assert "budgets.memory_growth" in result.stdout
    allowed = run_cli("diff-debug", "a.json", "b.json", "--fail-on", "warning", "--allow",
                      "time", cwd=saved)  # fmt: skip
    assert allowed.returncode == 0, allowed.describe()


def test_the_same_profile_on_both_sides_is_no_change(saved: Path) -> None:
    _measured(saved, "a")
    result = run_cli("diff-debug", "a.json", "a.json", "--format", "json", cwd=saved)
    assert result.returncode == 0, result.describe()
    (target,) = json.loads(result.stdout)["targets"]
    assert not [c for c in target["changes"] if c["class"] == "time"]
    assert all(line["percent"] == 0 for line in target["profile"]["lines"])


@needs_profile_reader
def test_profile_measures_both_targets_and_pairs_moved_lines(tmp_path: Path) -> None:
    _write(tmp_path)
    result = run_cli("diff-debug", "before.py", "moved.py", "--profile", "--format", "json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    (target,) = json.loads(result.stdout)["targets"]
    measured = target["profile"]
    if measured["unread"]:
        pytest.skip(f"this release's CPU runtime traces no instruction: {measured['unread']}")
    grew = [c for c in target["changes"] if c["class"] == "time" and c["verdict"] == "regression"]
    assert f"moved.py:{SMALL_LINE + 1}" in [c["path"].rsplit("/", 1)[-1] for c in grew]
    slowed = max(measured["lines"], key=_growth)
    assert slowed["what"].endswith(f"moved.py:{SMALL_LINE + 1}")
    assert slowed["matched_by"] == "instructions"  # every line moved down by one
    assert slowed["after_seconds"] > 2 * slowed["before_seconds"]


def test_profile_refuses_a_saved_report_that_was_not_measured(tmp_path: Path) -> None:
    _write(tmp_path)
    lowered = run_cli("lower", "before.py:step", "--compile", "--format", "json", cwd=tmp_path)
    assert lowered.returncode == 0, lowered.describe()
    (tmp_path / "a.json").write_text(lowered.stdout, encoding="utf-8")
    result = run_cli("diff-debug", "a.json", "a.json", "--profile", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert result.stderr.strip().splitlines()[-1] == (
        "error: a.json: holds no measured step: save it with "
        "`jxinspect profile TARGET --format json`"
    )
