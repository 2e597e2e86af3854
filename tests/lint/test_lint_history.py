"""``lint --history FILE`` and ``jxinspect trend FILE`` end to end, through the installed
command on a small repository of compiled targets (8 simulated CPU devices): a row per
target per run with the commit, XLA's memory as raw JAX's ``memory_analysis()`` gives it
and the collectives; a change between two runs shown by ``trend``; two shards and
concurrent writers losing no row; a path that is no regular file, a file that is not
SQLite and a database of other tables each refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helpers import JAX_RELEASE, CliResult, cli_env, error_line, run_python

Run = Callable[..., CliResult]

SUMMED = "jnp.sum(jnp.tanh(x), axis=0)"
SCALED = "jnp.tanh(x) * 2"
MODULE = f"""
import jax.numpy as jnp

def f(x):
    return {SUMMED}

def g(x):
    return x * 2

def h(x):
    return jnp.max(x, axis=1)

def k(x):
    return jnp.sum(x)

SHARDED = {{"args": "f32[64@data,16]", "mesh": "data=8"}}
JXINSPECT = {{"f": SHARDED, "g": SHARDED, "h": SHARDED, "k": SHARDED}}
"""
CONFIG = "defaults: {devices: 8}\ncompile: true\n"
TARGETS = ["m.py:f", "m.py:g", "m.py:h", "m.py:k"]
MEASURED = ("arguments", "outputs", "temporaries", "aliased", "flops", "bytes_accessed")
"""A row's measures that raw JAX's memory and cost analyses give."""

# f before and after the edit, compiled by raw JAX as the targets are: XLA's memory per
# kind, its cost analysis, and the all-reduces of the optimized program
ORACLE = r"""
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
x = jax.ShapeDtypeStruct((64, 16), jnp.float32, sharding=NamedSharding(mesh, P("data")))
found = {}
for name, f in {"summed": lambda x: SUMMED, "scaled": lambda x: SCALED}.items():
    compiled = jax.jit(f).lower(x).compile()
    m = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost  # a list up to 0.4.37
    found[name] = {"arguments": m.argument_size_in_bytes, "outputs": m.output_size_in_bytes,
                   "temporaries": m.temp_size_in_bytes, "aliased": m.alias_size_in_bytes,
                   "flops": cost.get("flops"), "bytes_accessed": cost.get("bytes accessed"),
                   "all_reduces": compiled.as_text().count(" all-reduce(")}
print(json.dumps(found))
""".replace("SUMMED", SUMMED).replace("SCALED", SCALED)


def make_repo(folder: Path) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    (repo / "m.py").write_text(MODULE, encoding="utf-8")
    (repo / "jxinspect.yaml").write_text(CONFIG, encoding="utf-8")
    return repo


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "commit.gpgsign=false", *args], cwd=repo, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


def rows_of(database: Path) -> list[tuple[Any, ...]]:
    """The history table read with sqlite3 alone, in the order rows were appended."""
    with sqlite3.connect(database) as db:
        return db.execute('SELECT "target", "commit", "time" FROM history ORDER BY id').fetchall()


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict[str, Any]]:
    result = run_python(ORACLE, warm=True)
    assert result.returncode == 0, result.describe()
    found: dict[str, dict[str, Any]] = json.loads(result.stdout)
    return found


def peak_of(repo: Path, run_cli: Run) -> int:
    """``m.py:f``'s peak per device as ``lower --compile --memory`` reads it."""
    shown = run_cli("lower", "m.py:f", "--memory", "--format", "json", cwd=repo)
    assert shown.returncode == 0, shown.describe()
    return int(json.loads(shown.stdout)["compiled"]["peak"]["bytes"])


@pytest.mark.skipif(shutil.which("git") is None, reason="no git on PATH")
def test_two_runs_with_an_edit_between_show_the_change(
    tmp_path: Path, run_cli: Run, oracle: dict[str, dict[str, Any]]
) -> None:
    repo = make_repo(tmp_path)
    database = tmp_path / "history.db"
    git(repo, "init", "-q")
    git(repo, "add", "m.py", "jxinspect.yaml")
    git(repo, "commit", "-qm", "first")
    first = git(repo, "rev-parse", "HEAD")
    ran = run_cli("lint", "--history", database, "--exit-zero", cwd=repo)
    assert ran.returncode == 0, ran.describe()
    peaks = [peak_of(repo, run_cli)]
    (repo / "m.py").write_text(MODULE.replace(SUMMED, SCALED), encoding="utf-8")
    git(repo, "commit", "-qam", "second")
    second = git(repo, "rev-parse", "HEAD")
    ran = run_cli("lint", "--history", str(database), "--exit-zero", cwd=repo)
    assert ran.returncode == 0, ran.describe()
    peaks.append(peak_of(repo, run_cli))
    assert [(t, c) for t, c, _ in rows_of(database)] == [(t, first) for t in TARGETS] + [
        (t, second) for t in TARGETS
    ]

    shown = run_cli("trend", database, "m.py:f", "--format", "json", cwd=repo)
    assert shown.returncode == 0, shown.describe()
    (target,) = json.loads(shown.stdout)["targets"]
    before, after = target["rows"]
    for row, expected in ((before, oracle["summed"]), (after, oracle["scaled"])):
        assert row["jax_version"] == JAX_RELEASE and row["devices"] == 8
        assert row["platform"] == "cpu" and row["time"].endswith("Z")
        kinds = MEASURED
        assert {kind: row[kind] for kind in kinds} == {kind: expected[kind] for kind in kinds}
        reduced = [c for c in row["collectives"] if c["kind"] == "all-reduce"]
        assert len(reduced) == min(expected["all_reduces"], 1)
    # the peak a history keeps is the one lower --memory reads of the same program
    assert [before["peak"], after["peak"]] == peaks and None not in peaks
    # the sum's one all-reduce: each device's partial sums, f32[16]
    assert before["collectives"] == [
        {"kind": "all-reduce", "axes": "data", "bytes": 64, "bytes_per_step": 64}
    ]
    assert after["collectives"] == []
    changed = {c["measure"]: (c["before"], c["after"], c["commit"]) for c in target["changes"]}
    expected_changes = {
        kind: (oracle["summed"][kind], oracle["scaled"][kind], second)
        for kind in MEASURED
        if oracle["summed"][kind] != oracle["scaled"][kind]
    }
    if peaks[0] != peaks[1]:
        expected_changes["peak"] = (peaks[0], peaks[1], second)
    assert changed == {**expected_changes, "all-reduce over data": (64, None, second)}

    text = run_cli("trend", database, cwd=repo)
    assert text.returncode == 0, text.describe()
    lines = text.stdout.splitlines()
    assert lines[0] == f"{database}: 4 targets, 8 rows, {len(changed)} changes"
    assert lines[1] == f"m.py:f: 2 rows, {len(changed)} change{'s' if len(changed) > 1 else ''}"
    assert lines[2].split() == ["time", "commit", "JAX", "measure", "before", "→", "after",
                                "change"]  # fmt: skip
    gone = next(line for line in lines if "all-reduce over data" in line)
    assert gone.split()[1:] == [second[:12], JAX_RELEASE, "all-reduce", "over", "data", "64",
                                "B", "→", "—", "gone"]  # fmt: skip
    assert lines[-3:] == ["m.py:g: 2 rows, no change", "m.py:h: 2 rows, no change",
                          "m.py:k: 2 rows, no change"]  # fmt: skip


def test_two_shards_writing_at_once_lose_no_row(tmp_path: Path, run_cli: Run) -> None:
    repo = make_repo(tmp_path)
    database = tmp_path / "history.db"

    def shard(part: str) -> CliResult:
        return run_cli("lint", "--shard", part, "--history", database, "--exit-zero", cwd=repo)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(shard, ["1/2", "2/2"]))
    for result in results:
        assert result.returncode == 0, result.describe()
    assert sorted(t for t, _, _ in rows_of(database)) == TARGETS
    shown = run_cli("trend", database, "--format", "json", cwd=repo)
    assert shown.returncode == 0, shown.describe()
    held = json.loads(shown.stdout)["targets"]
    assert [(t["target"], len(t["rows"]), t["changes"]) for t in held] == [
        (name, 1, []) for name in TARGETS
    ]
    assert all(t["rows"][0]["commit"] is None for t in held)  # not a git repository


# Each writer appends RUNS runs of ROWS rows through the store, as lint does at its end.
WRITER = r"""
import sys
from pathlib import Path
from jxinspect.core.history import CollectiveBytes, HistoryRow
from jxinspect.lint.history import append
name, database = sys.argv[1], Path(sys.argv[2])
for run in range(RUNS):
    append(database, [HistoryRow(f"{name}:{run}:{i}", "2026-12-03T08:00:00Z", None, "0.10.2",
                                 "cpu", 8, run, i, None, None, None, None,
                                 collectives=(CollectiveBytes("all-reduce", "data", i, i),))
                      for i in range(ROWS)])
"""
WRITERS, RUNS, ROWS = 4, 20, 3


def test_concurrent_writers_append_whole_runs_and_lose_no_row(tmp_path: Path) -> None:
    database = tmp_path / "history.db"
    code = WRITER.replace("RUNS", str(RUNS)).replace("ROWS", str(ROWS))
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", code, f"w{n}", str(database)],
            env=cli_env(),
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for n in range(WRITERS)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, err
    targets = [t for t, _, _ in rows_of(database)]
    assert len(targets) == WRITERS * RUNS * ROWS == len(set(targets))
    # each run's rows are appended together: one transaction
    runs = [t.rpartition(":")[0] for t in targets]
    assert all(runs[i] == runs[i - i % ROWS] for i in range(len(runs)))
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT count(*) FROM collectives").fetchone() == (len(targets),)


def _special(kind: str, folder: Path) -> Path:
    if kind == "a device":
        return Path(os.devnull)
    path = folder / kind.split()[-1]
    if kind == "a FIFO":
        os.mkfifo(path)  # opening it to write would block until a reader came
    else:
        path.mkdir()
    return path


@pytest.mark.parametrize("kind", ["a device", "a FIFO", "a folder"])
@pytest.mark.parametrize("command", ["lint", "trend"])
def test_a_path_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, run_cli: Run, kind: str, command: str
) -> None:
    if kind == "a FIFO" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = _special(kind, tmp_path)
    args = ("lint", "--history", path) if command == "lint" else ("trend", path)
    result = run_cli(*args, cwd=make_repo(tmp_path), timeout=120)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: {path} is {kind}, not a regular file; give a history database file "
        "(SQLite; a new path makes one)"
    )
    assert result.stdout == ""


@pytest.mark.parametrize("command", ["lint", "trend"])
def test_a_file_that_is_not_a_history_database_is_named(
    tmp_path: Path, run_cli: Run, command: str
) -> None:
    repo = make_repo(tmp_path)
    text = repo / "notes.txt"
    text.write_text("not a database\n" * 20, encoding="utf-8")
    other = repo / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE history (target TEXT, value INTEGER)")
    for path, said in (
        (text, "is not a SQLite database"),
        (
            other,
            "is a SQLite database with other contents than a jxinspect history (its "
            "table history is not a history's)",
        ),
    ):
        kept = path.read_bytes()
        args = ("lint", "--history", path.name) if command == "lint" else ("trend", path.name)
        result = run_cli(*args, cwd=repo)
        assert result.returncode == 2, result.describe()
        assert error_line(result) == (
            f"error: {path.name} {said}; give a new path or a file lint --history wrote"
        )
        assert path.read_bytes() == kept


def test_a_history_in_a_missing_folder_is_refused_before_staging(
    tmp_path: Path, run_cli: Run
) -> None:
    result = run_cli("lint", "--history", "no/h.db", cwd=make_repo(tmp_path))
    assert result.returncode == 2, result.describe()
    assert (
        error_line(result)
        == "error: cannot make the history database no/h.db: there is no folder no"
    )
    assert not (tmp_path / "repo" / ".jxinspect_cache").exists()  # nothing was staged


def test_trend_names_a_missing_file_and_an_unknown_target(tmp_path: Path, run_cli: Run) -> None:
    repo = make_repo(tmp_path)
    missing = run_cli("trend", "nowhere.db", cwd=repo)
    assert missing.returncode == 2, missing.describe()
    assert error_line(missing).startswith("error: no such file: nowhere.db ")
    from jxinspect.core.history import HistoryRow
    from jxinspect.lint.history import append

    append(repo / "h.db", [HistoryRow("m.py:f", "2026-12-03T08:00:00Z", None, "0.10.2", "cpu",
                                      8, 1, 2, 3, 0, None, None)])  # fmt: skip
    unknown = run_cli("trend", "h.db", "m.py:F", cwd=repo)
    assert unknown.returncode == 2, unknown.describe()
    assert error_line(unknown) == (
        "error: no target m.py:F in h.db (did you mean `m.py:f`?); it holds m.py:f"
    )
