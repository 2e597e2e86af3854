"""`jxinspect record` under `jax.distributed`, with real JAX processes on 127.0.0.1 (a free
port each run, 2 simulated CPU devices in each, every run bounded in time): each process
records into FOLDER/process-K, `show FOLDER` compares their programs (JX403), a killed
process leaves the others' records whole, and no process is left behind."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

from helpers import WARM_PYTHON, ended_within, error_line, run_cli, warm_jxinspect

PYTHON = sys.executable
"""A new Python, for the tests that stop or kill the processes and for a launcher's
children: a process forked from the tests' warm server (``WARM_PYTHON``, which the
others run) is not in ``record``'s process tree."""

TRAIN = """
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
import jax
import jax.numpy as jnp

jax.distributed.initialize(
    num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
    process_id=int(os.environ["JAX_PROCESS_ID"]),
    initialization_timeout=60,
)
me = jax.process_index()
Path("pids", str(os.getpid())).write_text(str(me))
odd = me == int(os.environ.get("ODD_PROCESS", "-1"))
case = os.environ.get("CASE", "")


@functools.partial(jax.jit, static_argnames="train")
def step(x, train=True):
    return jnp.sum(x * 2.0) if train else jnp.sum(x)


@jax.jit
def body(x):
    if odd and case == "op":
        return jnp.cos(x) * 3.0  # <-- odd op
    return jnp.sin(x) * 3.0  # <-- op


@jax.jit
def same(x):
    return jnp.tanh(x)


step(jnp.ones((9 if odd and case == "batch" else 8, 4)), train=not (odd and case == "flag"))
body(jnp.ones(4))
same(jnp.ones(4))
if case == "kill":
    if odd:  # one process dies, the other waits to be stopped
        helper = subprocess.Popen(["sleep", "300"])
        Path("pids", str(helper.pid)).write_text("helper")
        while not Path("recorded-0").exists():
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
    Path(f"recorded-{me}").write_text("")
    time.sleep(300)
"""


def project(tmp: Path) -> Path:
    (tmp / "train.py").write_text(textwrap.dedent(TRAIN), encoding="utf-8")
    (tmp / "pids").mkdir()
    return tmp


def assert_none_left(folder: Path) -> list[int]:
    """Every process the run started (its pid in ``pids/``) has ended, or ends within a
    second (what the launcher killed: delivered when it next runs); their pids."""
    pids = [int(p.name) for p in (folder / "pids").iterdir()]
    left = [pid for pid in pids if not ended_within(pid, 1.0)]
    for pid in left:  # never leave one behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left running: {left}"
    return pids


def show_json(folder: Path, cwd: Path) -> dict[str, Any]:
    shown = run_cli("show", folder, "--format", "json", cwd=cwd)
    assert shown.returncode == 0, shown.describe()
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def by_function(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["function"]: f for f in data["functions"]}


def test_four_processes_started_by_record_one_with_another_static_flag(tmp_path: Path) -> None:
    folder = project(tmp_path)
    result = run_cli(
        "record", "--processes", "4", "--timeout", "150", "-o", "runs",
        "--", *WARM_PYTHON, "train.py",
        cwd=folder, env={"CASE": "flag", "ODD_PROCESS": "3"}, timeout=200,
    )  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert len(assert_none_left(folder)) == 4
    runs = folder / "runs"
    assert sorted(p.name for p in runs.iterdir()) == [f"process-{k}" for k in range(4)]
    for k in range(4):
        index = json.loads((runs / f"process-{k}" / "index.json").read_text(encoding="utf-8"))
        assert (index["process"], index["processes"], index["exit_code"]) == (k, 4, 0)
        assert sorted(e["name"] for e in index["functions"]) == ["body", "same", "step"]
    data = show_json(runs, folder)
    assert data["processes"] == 4
    functions = by_function(data)
    (group,) = functions["same"]["programs"]  # one group: every process, one program
    assert group["processes"] == [0, 1, 2, 3] and len(group["programs"]) == 1
    assert functions["same"]["comparison"] is None
    assert [g["processes"] for g in functions["step"]["programs"]] == [[0, 1, 2], [3]]
    difference = functions["step"]["comparison"]["difference"]
    assert (difference["kind"], difference["path"]) == ("static", "train")
    assert (difference["before"], difference["after"]) == ("True", "False")
    (finding,) = data["findings"]
    assert finding["code"] == "JX403" and "process 0 and process 3" in finding["message"]
    text = run_cli("show", "runs", "--fail-on", "error", cwd=folder)
    assert text.returncode == 1, text.describe()
    assert "recording: runs (4 processes)" in text.stdout
    assert "2 of 3 functions lowered the same program on every process" in text.stdout
    assert "error JX403 `step`: process 0 and process 3 lowered different programs: " \
        "static argument train: True vs False" in text.stdout  # fmt: skip
    # lint --records judges each process's functions, and JX403 on process 0's `step`
    linted = run_cli("lint", "--records", "runs", "--format", "json", cwd=folder)
    assert linted.returncode == 1, linted.describe()
    targets = json.loads(linted.stdout)["targets"]
    assert sorted({t["target"].split("/")[0] for t in targets}) == [
        f"process-{k}" for k in range(4)]  # fmt: skip
    said = [(t["target"], f["code"], f["message"]) for t in targets for f in t["findings"]
            if f["code"] == "JX403"]  # fmt: skip
    assert said == [("process-0/train.py:step", "JX403", finding["message"])]


def shell_loop(folder: Path, count: int, case: str) -> Any:
    """Each process started by a shell loop, as a user's launcher would: one
    ``jxinspect record -o runs -- python train.py`` per process, the same folder."""
    record = shlex.join([*warm_jxinspect(), "record", "-o", "runs", "--", *WARM_PYTHON, "train.py"])
    port = _free_port()
    # each process's exit code kept: `wait` alone would say 0 whatever they said
    script = (f"for i in $(seq 0 {count - 1}); do JAX_PROCESS_ID=$i {record} & "
              'started="$started $!"; done; code=0; for p in $started; do wait $p || code=$?; '
              "done; exit $code")  # fmt: skip
    env = {"JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}", "JAX_NUM_PROCESSES": str(count),
           "CASE": case, "ODD_PROCESS": "1"}  # fmt: skip
    return run_cli("-c", script, command=("bash",), cwd=folder, env=env, timeout=200)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_two_processes_of_a_shell_loop_one_with_another_batch(tmp_path: Path) -> None:
    folder = project(tmp_path)
    result = shell_loop(folder, 2, "batch")
    assert result.returncode == 0, result.describe()
    assert_none_left(folder)
    runs = folder / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["process-0", "process-1"], result.describe()
    data = show_json(runs, folder)
    assert data["processes"] == 2
    difference = by_function(data)["step"]["comparison"]["difference"]
    assert (difference["kind"], difference["path"]) == ("input", "x")
    assert (difference["before"], difference["after"]) == ("f32[8,4]", "f32[9,4]")
    assert [f["code"] for f in data["findings"]] == ["JX403"]
    source = by_function(data)["step"]["source"]  # JSON: absolute; the table: as every view
    assert source.startswith(f"step at {folder / 'train.py'}:"), source
    text = run_cli("show", "runs", cwd=folder).stdout
    (row,) = [line for line in text.splitlines() if line.startswith("step ")]
    assert row.endswith("  " + source.replace(f"{folder}/", "")), row


def test_the_first_differing_operation_is_named_with_its_line_in_each(tmp_path: Path) -> None:
    folder = project(tmp_path)
    result = run_cli(
        "record", "--processes", "2", "--timeout", "150", "-o", "runs",
        "--", *WARM_PYTHON, "train.py",
        cwd=folder, env={"CASE": "op", "ODD_PROCESS": "1"}, timeout=200,
    )  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert_none_left(folder)
    data = show_json(folder / "runs", folder)
    difference = by_function(data)["body"]["comparison"]["difference"]
    train = folder / "train.py"
    lines = train.read_text(encoding="utf-8").splitlines()
    op = next(n for n, line in enumerate(lines, 1) if line.endswith("# <-- op"))
    odd = next(n for n, line in enumerate(lines, 1) if line.endswith("# <-- odd op"))
    assert difference["kind"] == "op"
    assert "stablehlo.sine" in difference["before"] and "stablehlo.cosine" in difference["after"]
    assert (difference["before_line"], difference["after_line"]) == (
        f"{train}:{op}",
        f"{train}:{odd}",
    )
    assert [f["code"] for f in data["findings"]] == ["JX403"]
    assert [f["function"] for f in data["functions"] if f["comparison"]] == ["body"]
    both = run_cli("diff-debug", "runs", "runs", cwd=folder)
    assert both.returncode == 2 and "compare one process's folder" in error_line(both)
    one = run_cli("diff-debug", "runs/process-0", "runs/process-1", cwd=folder)
    # two processes' folders compare as two runs: `body`, the same source with the same
    # inputs, lowered to another program (the process index baked in: JX404)
    assert one.returncode == 1, one.describe()
    assert "program: different (" in one.stdout and "error JX404 `body`" in one.stdout


def test_a_killed_process_leaves_the_others_whole_and_none_behind(tmp_path: Path) -> None:
    """Process 1 is killed (SIGKILL) once both recorded; the launcher stops process 0 and
    what process 1 started, and exits as a shell says of a SIGKILL."""
    folder = project(tmp_path)
    result = run_cli(
        "record", "--processes", "2", "--timeout", "150", "-o", "runs", "--", PYTHON, "train.py",
        cwd=folder, env={"CASE": "kill", "ODD_PROCESS": "1"}, timeout=200,
    )  # fmt: skip
    assert result.returncode == 128 + signal.SIGKILL, result.describe()
    pids = assert_none_left(folder)
    assert len(pids) == 3  # the two processes and the helper process 1 started
    runs = folder / "runs"
    # process 0 is stopped: JAX's preemption service (jax.distributed) takes SIGTERM as a
    # notice and goes on, so the SIGKILL that follows it ends the process
    stopped = (-signal.SIGTERM, -signal.SIGKILL)
    for k, codes in ((0, stopped), (1, (-signal.SIGKILL,))):
        index = json.loads((runs / f"process-{k}" / "index.json").read_text(encoding="utf-8"))
        assert index["exit_code"] in codes, index
        assert sorted(e["name"] for e in index["functions"]) == ["body", "same", "step"]
        for entry in index["functions"]:
            report = json.loads(
                (runs / f"process-{k}" / entry["folder"] / "report.json").read_text(
                    encoding="utf-8"
                )
            )
            assert report["schema"] == "jxinspect.report/1" and report["inputs"]
    data = show_json(runs, folder)
    assert data["processes"] == 2 and data["findings"] == []
    assert [r["exit_code"] in c for r, c in zip(data["runs"], (stopped, (-signal.SIGKILL,)))] == [
        True,
        True,
    ]


def test_the_timeout_stops_every_process(tmp_path: Path) -> None:
    folder = project(tmp_path)
    hang = (
        "import os, time, pathlib; "
        "pathlib.Path('pids', str(os.getpid())).write_text(''); time.sleep(300)"
    )
    result = run_cli(
        "record", "--processes", "2", "--timeout", "3", "-o", "runs", "--", PYTHON, "-c", hang,
        cwd=folder, timeout=120,
    )  # fmt: skip
    assert result.returncode == 124, result.describe()
    assert "error: --timeout 3: the processes were stopped" in result.stderr
    assert len(assert_none_left(folder)) == 2
    for k in range(2):
        index = json.loads(
            (folder / "runs" / f"process-{k}" / "index.json").read_text(encoding="utf-8")
        )
        assert (index["process"], index["exit_code"], index["functions"]) == (
            k,
            -signal.SIGTERM,
            [],
        )


LAUNCHER = """
import os, socket, subprocess, sys

with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
env = {**os.environ, "JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{port}", "JAX_NUM_PROCESSES": "2"}
children = [subprocess.Popen([sys.executable, "train.py"], env={**env, "JAX_PROCESS_ID": str(i)})
            for i in range(2)]
sys.exit(max(child.wait(timeout=150) for child in children))
"""


def test_one_record_around_a_launcher_of_its_own(tmp_path: Path) -> None:
    """A program that starts the processes itself (no JAX of its own): each process
    records into its folder, and `record` completes both."""
    folder = project(tmp_path)
    (folder / "launch.py").write_text(textwrap.dedent(LAUNCHER), encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--", PYTHON, "launch.py", cwd=folder, timeout=200)
    assert result.returncode == 0, result.describe()
    assert_none_left(folder)
    runs = folder / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["process-0", "process-1"]  # no index.json
    for k in range(2):
        index = json.loads((runs / f"process-{k}" / "index.json").read_text(encoding="utf-8"))
        assert (index["process"], index["exit_code"], len(index["functions"])) == (k, 0, 3)
        assert f"3 functions recorded in runs/process-{k}" in result.stderr
    data = show_json(runs, folder)
    assert data["processes"] == 2 and data["findings"] == []


def test_the_folder_of_a_process_of_a_larger_run_keeps_what_jxinspect_did_not_write(
    tmp_path: Path,
) -> None:
    """Process 0 of a run of 2 replaces the folders of processes 2 and up of a previous
    run: it removed `process-3` whole, a file of someone else's in it too; now only what
    jxinspect wrote there goes, and the folder stays, no recording any more."""
    folder = project(tmp_path)
    (folder / "launch.py").write_text(textwrap.dedent(LAUNCHER), encoding="utf-8")
    old = folder / "runs" / "process-3"
    (old / "step").mkdir(parents=True)
    (old / "step" / "report.json").write_text("{}", encoding="utf-8")
    index = {"schema": "jxinspect.record/1", "command": ["python"], "process": 3, "processes": 4,
             "functions": [{"name": "step", "folder": "step", "source": None, "signature": "()",
                            "stage": "jit", "lowerings": 1}]}  # fmt: skip
    (old / "index.json").write_text(json.dumps(index), encoding="utf-8")
    (old / "notes.txt").write_text("mine", encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--", PYTHON, "launch.py", cwd=folder, timeout=200)
    assert result.returncode == 0, result.describe()
    assert_none_left(folder)
    assert sorted(p.name for p in old.iterdir()) == ["notes.txt"]
    shown = show_json(folder / "runs", folder)  # the two processes of the new run
    assert shown["processes"] == 2, shown


def test_jx403_is_kept_where_the_baseline_holds_the_targets_compiled_cost(
    tmp_path: Path,
) -> None:
    """A compiled recording of two processes that disagree, linted against a baseline
    that holds each target's compiled cost: the target is judged once, its JX403 with
    its JX304/JX305 facts (the re-judge against the baseline's cost replaced every
    finding, JX403 included, and the next run called it gone)."""
    folder = project(tmp_path)
    result = run_cli(
        "record", "--compile", "--processes", "2", "--timeout", "150", "-o", "runs",
        "--", *WARM_PYTHON, "train.py",
        cwd=folder, env={"CASE": "flag", "ODD_PROCESS": "1"}, timeout=200,
    )  # fmt: skip
    assert result.returncode == 0, result.describe()
    written = run_cli("lint", "--records", "runs", "--write-baseline", cwd=folder)
    assert written.returncode == 0, written.describe()
    baseline = json.loads((folder / "jxinspect-baseline.json").read_text(encoding="utf-8"))
    assert any(c["target"] == "process-0/train.py:step" for c in baseline["costs"]), baseline
    assert any(f["code"] == "JX403" for f in baseline["findings"]), baseline
    linted = run_cli("lint", "--records", "runs", "--format", "json", cwd=folder)
    assert linted.returncode == 0, linted.describe()
    data = json.loads(linted.stdout)
    said = [(t["target"], f["code"], f["baselined"]) for t in data["targets"]
            for f in t["findings"] if f["code"] == "JX403"]  # fmt: skip
    assert said == [("process-0/train.py:step", "JX403", True)], data
    assert not data["gone"], data["gone"]
