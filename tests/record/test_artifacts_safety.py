"""`jxinspect record -o FOLDER` replacing a recording that others wrote or changed: it
removes only what jxinspect writes, only inside the folder; whatever it cannot take for
its own (an index naming a folder outside, a FIFO, a folder or a link where the recorder
writes a file) is one line and exit 2 before anything is removed, and never blocks; a
folder the old index did not list never joins the new recording; a SIGINT sent to
`record` stops the run, which then says what was recorded (exit 130)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, error_line, index_of, record_grow, run_cli

PYTHON = sys.executable
"""A new Python, for a run whose process must be `record`'s own child (it signals its
parent) and for a run that imports no JAX."""

LIMIT_S = 120
"""Every run here ends within seconds (a new Python importing JAX: more on a loaded
machine); one that blocks is killed after this."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_grow(tmp_path_factory.mktemp("safety"))


@pytest.fixture
def runs(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the recording (``grow``, ``grow.2``), with the script beside it."""
    shutil.copy(recorded.parent / "grow.py", tmp_path / "grow.py")
    return Path(shutil.copytree(recorded, tmp_path / "runs"))


def set_folder(runs: Path, folder: str) -> None:
    """Make the index's first entry name ``folder``."""
    text = (runs / "index.json").read_text(encoding="utf-8")
    (runs / "index.json").write_text(
        text.replace('"folder":"grow"', f'"folder":{json.dumps(folder)}', 1), encoding="utf-8"
    )
    assert index_of(runs)["functions"][0]["folder"] == folder


def record_nothing(runs: Path, *flags: str) -> Any:
    """``record -o runs`` of a command that records nothing (after the old recording is
    replaced: exit 3), killed if it blocks."""
    return run_cli(
        "record", *flags, "-o", runs, "--", PYTHON, "-c", "pass", cwd=runs.parent, timeout=LIMIT_S
    )


def assert_untouched(runs: Path) -> None:
    """The old recording is whole: nothing was removed."""
    for name in ("grow", "grow.2"):
        assert sorted(p.name for p in (runs / name).iterdir()) == [
            "call.json", "entry.json", "program.mlir", "report.json"]  # fmt: skip


@pytest.mark.parametrize("folder", ["../victim", "ABSOLUTE", ".", ".hidden", "grow/../.."])
def test_an_index_naming_a_folder_outside_the_recording_removes_nothing(
    runs: Path, folder: str
) -> None:
    """Replacing the recording removed `folder / entry.folder` unchecked: `../victim`,
    an absolute path or `.` removed what the recording's index named, wherever it was."""
    victim = runs.parent / "victim"
    victim.mkdir()
    (victim / "report.json").write_text("mine", encoding="utf-8")
    set_folder(runs, str(victim) if folder == "ABSOLUTE" else folder)
    result = record_nothing(runs)
    assert result.returncode == 2, result.describe()
    assert "runs/index.json: functions[0].folder " in error_line(result)
    assert (victim / "report.json").read_text(encoding="utf-8") == "mine"
    assert_untouched(runs)
    shown = run_cli("show", runs, cwd=runs.parent)  # every reader reads the index so
    assert shown.returncode == 2 and "functions[0].folder" in error_line(shown)


def test_a_records_folder_holding_what_jxinspect_did_not_write_is_left_alone(
    runs: Path,
) -> None:
    (runs / "grow" / "notes.txt").write_text("mine", encoding="utf-8")
    result = record_nothing(runs)
    assert result.returncode == 3, result.describe()  # the new run recorded nothing
    assert (runs / "grow" / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert not (runs / "grow.2").exists()  # what jxinspect wrote is replaced


def test_a_process_folder_that_is_a_link_out_is_refused(runs: Path) -> None:
    """A recording of several processes holding `process-1`, a link to a recording
    elsewhere: replacing it cleared the recording the link led to."""
    elsewhere = runs.parent / "elsewhere"
    runs.rename(elsewhere)
    (runs / "process-0").mkdir(parents=True)
    shutil.copy(elsewhere / "index.json", runs / "process-0" / "index.json")
    (runs / "process-1").symlink_to(elsewhere)
    result = record_nothing(runs, "--processes", "2")
    assert result.returncode == 2, result.describe()
    assert "process-1 is not a folder jxinspect wrote" in error_line(result)
    assert_untouched(elsewhere)


def _make(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
        (path / "keep").write_text("mine", encoding="utf-8")
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "folder", "device link"])
@pytest.mark.parametrize("name", [".process-7.json", ".owner"])
def test_a_recorder_file_that_is_not_a_file_is_one_line_before_anything_is_removed(
    runs: Path, name: str, kind: str
) -> None:
    """A `.process-N.json` FIFO blocked `record -o` for ever; a folder was exit 4 after
    the old records were removed; a FIFO `.owner` was removed with them."""
    _make(runs / name, kind)
    result = record_nothing(runs)
    assert result.returncode == 2, result.describe()
    assert f"runs/{name} is a " in error_line(result)
    assert_untouched(runs)
    assert os.path.lexists(runs / name)


SIGNALS_ITSELF = """\
import os, signal, sys
signal.alarm(60)  # never left behind, even where jxinspect blocks
import jax
{plant}
jax.jit(lambda x: x * 2)(1.0)
"""


def test_a_fifo_among_the_launchers_claims_never_blocks(tmp_path: Path) -> None:
    """What a process of the run leaves in the launcher's claims folder is read as a
    small file: a FIFO there blocked `record` for ever once the run ended."""
    plant = 'os.mkfifo(os.path.join(os.environ["JXINSPECT_RECORD_CLAIMS"], "12345"))'
    (tmp_path / "run.py").write_text(SIGNALS_ITSELF.format(plant=plant), encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--", PYTHON, "run.py", cwd=tmp_path, timeout=LIMIT_S)
    assert result.returncode == 0, result.describe()
    assert [e["name"] for e in index_of(tmp_path / "runs")["functions"]] == ["<lambda>"]


def test_a_fifo_owner_mark_never_blocks_the_run(tmp_path: Path) -> None:
    """`.owner` is read as a small file: a FIFO there blocked the recorded run at its
    first lowering. The process then is not the owner: nothing is recorded (exit 3)."""
    plant = 'os.mkfifo(os.path.join(os.environ["JXINSPECT_RECORD_DIR"], ".owner"))'
    (tmp_path / "run.py").write_text(SIGNALS_ITSELF.format(plant=plant), encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--", PYTHON, "run.py", cwd=tmp_path, timeout=LIMIT_S)
    assert result.returncode == 3, result.describe()
    assert "only the first process of the run that stages one is recorded" in result.stderr
    assert os.path.lexists(tmp_path / "runs" / ".owner")  # not ours: left as it is


def test_folders_the_old_index_did_not_list_never_join_the_new_recording(runs: Path) -> None:
    """Any folder holding an `entry.json` and a `report.json` joined the new index: one
    left from an earlier run (kept because it held a file of someone's), or copied in."""
    extra = Path(shutil.copytree(runs / "grow", runs / "extra"))
    entry = json.loads((extra / "entry.json").read_text(encoding="utf-8"))
    (extra / "entry.json").write_text(json.dumps({**entry, "folder": "extra"}), encoding="utf-8")
    (runs / "grow.2" / "notes.txt").write_text("mine", encoding="utf-8")  # kept: not ours
    time.sleep(0.05)  # the run starts later than the copy, whatever the clock's step
    result = run_cli("record", "-o", runs, "--", *WARM_PYTHON, "grow.py", cwd=runs.parent)
    assert result.returncode == 0, result.describe()
    assert [e["folder"] for e in index_of(runs)["functions"]] == ["grow", "grow.3"]
    assert (extra / "report.json").is_file() and (runs / "grow.2" / "notes.txt").is_file()


INTERRUPTED = """\
import os, signal, time
import jax
jax.jit(lambda x: x * 2)(1.0)
os.kill(os.getppid(), signal.SIGINT)  # `record`'s own pid, as `kill -INT PID` does
time.sleep(LIMIT_S * 2)  # a run that goes on is killed by the test's limit
"""


def test_a_sigint_to_record_stops_the_run_and_says_what_was_recorded(tmp_path: Path) -> None:
    """`record` ignored a SIGINT sent to its pid: the run went on to its end, exit 0."""
    (tmp_path / "run.py").write_text(INTERRUPTED.replace("LIMIT_S", str(LIMIT_S)), "utf-8")
    result = run_cli("record", "-o", "runs", "--", PYTHON, "run.py", cwd=tmp_path, timeout=LIMIT_S)
    assert result.returncode == 130, result.describe()
    assert "jxinspect record: 1 function recorded in runs" in result.stderr
    index = index_of(tmp_path / "runs")
    assert index["exit_code"] == -signal.SIGINT and index["complete"] is False


def test_a_sigint_to_record_of_processes_stops_them_and_says_how_each_ended(
    tmp_path: Path,
) -> None:
    """`record --processes` stopped its processes on SIGINT but ended without completing
    their folders or saying what was recorded."""
    code = textwrap.dedent("""\
        import os, signal, time
        if os.environ["JAX_PROCESS_ID"] == "0":
            os.kill(os.getppid(), signal.SIGINT)
        time.sleep(30)
    """)
    result = run_cli(
        "record", "--processes", "2", "-o", "runs", "--", PYTHON, "-c", code,
        cwd=tmp_path, timeout=LIMIT_S,
    )  # fmt: skip
    assert result.returncode == 130, result.describe()
    for k in range(2):
        assert f"0 functions recorded in runs/process-{k}" in result.stderr, result.describe()
        index = index_of(tmp_path / "runs" / f"process-{k}")
        assert index["exit_code"] == -signal.SIGTERM, index
