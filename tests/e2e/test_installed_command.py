"""The installed ``jxinspect`` command, each run a new process (``subprocess=True``).

Every other test forks its runs from a warm server (``helpers.run_cli``): a new process
each, about a second sooner. These few run the console script itself, as a user does:
help and version, exit codes and error lines, stdout kept apart from stderr, ``python -m
jxinspect``, a ``lower`` of a sample and simulated devices, a ``lint`` with its workers;
and they check that a forked run says exactly what a new process says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import CliResult, assert_valid_report, error_line, run_cli


def installed(*args: str, cwd: Path | None = None) -> CliResult:
    return run_cli(*args, cwd=cwd, subprocess=True)


def test_help_and_version() -> None:
    result = installed("--help")
    assert result.returncode == 0, result.describe()
    for command in ("lower", "explain", "diff-debug", "lint", "record", "show"):
        assert command in result.stdout, result.describe()
    assert result.stderr == ""
    version = installed("--version")
    assert version.returncode == 0 and version.stdout.startswith("jxinspect "), version.describe()


def test_python_m_jxinspect() -> None:
    result = run_cli("-m", "jxinspect", "--version", command=(sys.executable,))
    assert result.returncode == 0, result.describe()
    assert result.stdout == installed("--version").stdout


def test_usage_error_is_one_line_and_exit_2() -> None:
    result = installed("lower", "sample_programs/mlp.py:predict", "--no-such-flag")
    assert result.returncode == 2, result.describe()
    assert "--no-such-flag" in error_line(result)
    assert result.stdout == ""


def test_user_code_error_is_one_line_and_exit_3(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    result = installed("lower", "broken.py:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == 3, result.describe()
    assert "RuntimeError: boom" in error_line(result)
    assert result.stdout == ""


def test_user_prints_go_to_stderr_and_the_payload_to_stdout(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text(
        'print("loading")\n\ndef f(x):\n    print("tracing")\n    return x * 2\n',
        encoding="utf-8",
    )
    result = installed("lower", "chatty.py:f", "--args", "f32[3]", "-f", "json", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert_valid_report(json.loads(result.stdout))
    assert result.stderr.splitlines() == ["loading", "tracing"], result.describe()


def test_lower_a_sample_on_simulated_devices() -> None:
    result = installed("lower", "sample_programs/sharded.py:update", "--format", "json")
    assert result.returncode in (0, 1), result.describe()
    report = json.loads(result.stdout)
    assert_valid_report(report)
    assert "simulated 8 CPU devices" in report["notes"], report["notes"]
    flagged = installed("lower", "tests/fixtures/targets.py:double", "--args", "f32[8]",
                        "--devices", "2", "--mesh", "data=2")  # fmt: skip
    assert flagged.returncode == 0, flagged.describe()
    assert "simulated 2 CPU devices" in flagged.stdout, flagged.describe()


def test_lint_stages_in_its_workers(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        'JXINSPECT = {"f": {"args": "f32[3]"}, "g": {"args": "f32[3]"}}\n\n'
        "def f(x):\n    return x + 1\n\ndef g(x):\n    return x * 2\n",
        encoding="utf-8",
    )
    result = installed("lint", ".", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.describe()
    targets = sorted(t["target"] for t in json.loads(result.stdout)["targets"])
    assert targets == ["m.py:f", "m.py:g"], result.describe()


FORKED_EQUALS_INSTALLED = [
    ("--help",),
    ("explain", "JX102"),
    ("lower", "sample_programs/mlp.py:predict"),
    ("lower", "sample_programs/compiled.py:dp_step", "--format", "json"),
    ("lower", "tests/fixtures/targets.py:double", "--args", "f32[3,,4]"),
    ("lower", "tests/fixtures/import_raises.py:f", "--args", "f32[3]"),
    ("diff-debug", "sample_programs/mlp.py:predict", "sample_programs/mlp.py:predict"),
]


@pytest.mark.parametrize("args", FORKED_EQUALS_INSTALLED, ids=lambda a: " ".join(a)[:40])
def test_a_forked_run_says_what_the_installed_command_says(args: tuple[str, ...]) -> None:
    """The runner every other test uses is the installed command in all that shows."""
    forked = run_cli(*args)
    real = installed(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    ), f"forked:\n{forked.describe()}\n\ninstalled:\n{real.describe()}"
