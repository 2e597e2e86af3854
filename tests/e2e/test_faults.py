"""A CI gate that never lies: every way a target's code can end its process, hang or
misbehave becomes that target's result; the other targets are still judged, and the run
never exits 0 when a target did not report (``--exit-zero`` included).

The fault corpus is ``tests/faults/staging/``: one module per fault, each declaring its
target with ``JXINSPECT``; ``a_good.py`` is the healthy neighbour that must be reported.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, cli_env, error_line, eventually, jxinspect_command, run_cli

CORPUS = REPO / "tests" / "faults" / "staging"

# target → what its result must say (a prefix or a fragment of the error)
EXPECTED = {
    "aborts.py:f": "the process staging it ended abruptly (signal 6, SIGABRT)",
    "exits_at_import.py:f": "the process staging it ended abruptly (exit code 0: ",
    "hangs.py:f": "timed out after 5 s",
    "out_of_memory.py:f": "tracing failed: MemoryError: cannot allocate 1 PiB",
    "raises_keyboard_interrupt.py:f": "tracing failed: raised KeyboardInterrupt (at ",
    "recurses.py:f": "tracing failed: RecursionError: maximum recursion depth exceeded",
    "segfault.py:f": "the process staging it ended abruptly (signal 11, SIGSEGV)",
    "sys_exit_at_import.py:f": "importing ",
}


def corpus(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "faults"
    folder.mkdir()
    for name in names or [p.name for p in CORPUS.glob("*.py")]:
        shutil.copy(CORPUS / name, folder / name)
    return folder


def lint_json(folder: Path, *flags: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli("lint", ".", "--format", "json", *flags, cwd=folder)
    assert result.stdout, result.describe()
    return result.returncode, json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_fault_is_one_targets_failure_and_the_rest_are_judged(
    tmp_path: Path, jobs: str
) -> None:
    folder = corpus(tmp_path)
    code, report, stderr = lint_json(folder, "--jobs", jobs, "--timeout", "5")
    assert code == 3, stderr
    results = {t["target"]: t for t in report["targets"]}
    assert set(results) == {"a_good.py:double", *EXPECTED}
    good = results["a_good.py:double"]
    assert good["error"] is None and good["reached"] == "lowered"
    for name, expected in EXPECTED.items():
        error = results[name]["error"]
        assert error is not None and expected in error, (name, error)
        assert results[name]["error_kind"] in ("user-code", "timeout"), results[name]
    assert "called sys.exit(0)" in results["sys_exit_at_import.py:f"]["error"]
    assert report["summary"]["failed"] == len(EXPECTED)


def test_exit_zero_covers_findings_never_targets_that_did_not_report(tmp_path: Path) -> None:
    folder = corpus(tmp_path, "a_good.py", "exits_at_import.py")
    for flags in ((), ("--exit-zero",)):
        result = run_cli("lint", ".", *flags, cwd=folder)
        assert result.returncode == 3, result.describe()
        assert "exits_at_import.py:f" in result.stdout and "a_good.py:double" in result.stdout


def test_a_config_timeout_applies_and_the_flag_wins(tmp_path: Path) -> None:
    folder = corpus(tmp_path, "a_good.py", "hangs.py")
    (folder / "jxinspect.yaml").write_text("timeout: 3\n", encoding="utf-8")
    code, report, _ = lint_json(folder)
    assert code == 3
    (hung,) = [t for t in report["targets"] if t["target"] == "hangs.py:f"]
    assert hung["error"].startswith("timed out after 3 s") and hung["error_kind"] == "timeout"
    code, report, _ = lint_json(folder, "--timeout", "4")
    (hung,) = [t for t in report["targets"] if t["target"] == "hangs.py:f"]
    assert hung["error"].startswith("timed out after 4 s")


def test_ctrl_c_stops_the_run_promptly_and_prints_what_finished(tmp_path: Path) -> None:
    folder = corpus(tmp_path, "a_good.py", "hangs.py")
    marker = tmp_path / "started"
    env = {**cli_env(), "JXINSPECT_FAULT_MARKER": str(marker)}
    process = subprocess.Popen(
        [*jxinspect_command(), "lint", ".", "--format", "json", "--timeout", "0", "--jobs", "1"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        started = eventually(marker.exists, 120, interval=0.1)
        assert started, "the hanging target never started"
        stopped = time.monotonic()
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert time.monotonic() - stopped < 15
    assert process.returncode == 130, stderr
    results = {t["target"]: t for t in json.loads(stdout)["targets"]}
    assert results["a_good.py:double"]["error"] is None
    assert results["hangs.py:f"]["error_kind"] == "interrupted"


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("sys_exit_at_import.py", "error: importing {m} failed: called sys.exit(0) (at "),
        ("raises_keyboard_interrupt.py", "error: tracing failed: raised KeyboardInterrupt (at "),
    ],
)
@pytest.mark.parametrize("command", ["lower", "diff-debug"])
def test_lower_and_diff_debug_turn_exits_and_interrupts_from_user_code_into_exit_3(
    tmp_path: Path, module: str, expected: str, command: str
) -> None:
    folder = corpus(tmp_path, module)
    target = f"{module}:f"
    targets = [target, target] if command == "diff-debug" else [target]
    result = run_cli(command, *targets, "--format", "json", cwd=folder)
    assert result.returncode == 3, result.describe()
    assert result.stdout == ""
    assert error_line(result).startswith(expected.format(m=module)), result.describe()


def test_a_baseline_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    from jxinspect.core.files import write_atomically

    baseline = tmp_path / "jxinspect-baseline.json"
    baseline.write_text('{"kept": true}\n', encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):  # fails halfway through writing
        write_atomically(baseline, "{" + "x" * 100_000 + "\ud800}")
    assert baseline.read_text(encoding="utf-8") == '{"kept": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == [baseline.name]
    write_atomically(baseline, "{}\n")
    assert baseline.read_text(encoding="utf-8") == "{}\n"
