"""Progress on stderr: stage by stage when stderr is a terminal (a pseudo-terminal here,
the installed command on it), nothing off a terminal or in JSON."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from helpers import REPO, cli_env, jxinspect_command, needs_shardy_default, run_cli

TARGET = "sample_programs/compiled.py:tp_mlp"
STAGES = (
    "starting JAX",
    "importing the module",
    "building the example inputs",
    "tracing",
    "lowering",
    "compiling",
    "reading the compiled program",
)


def _on_terminal(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """Run the installed command with stderr on a pseudo-terminal (the line drawn at once,
    not after two seconds): its exit code, what it wrote to the terminal, its stdout."""
    env = {**cli_env(), "JXINSPECT_PROGRESS_AFTER_S": "0", "COLUMNS": "120"}
    main, side = pty.openpty()
    stdout = tmp_path / "stdout"
    with stdout.open("wb") as out:
        process = subprocess.Popen(
            [*jxinspect_command(), *args], cwd=REPO, env=env,
            stdin=subprocess.DEVNULL, stdout=out, stderr=side,
        )  # fmt: skip
    os.close(side)
    written = bytearray()
    try:
        while chunk := _read(main):
            written += chunk
    finally:
        os.close(main)
        code = process.wait(timeout=300)
    return code, written.decode("utf-8", "replace"), stdout.read_text()


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the command closed the terminal's last writer
        return b""


@needs_shardy_default
def test_lower_why_shows_each_stage_on_a_terminal(tmp_path: Path) -> None:
    code, terminal, stdout = _on_terminal(tmp_path, "lower", TARGET, "--why")
    assert code == 0, terminal
    for stage in (*STAGES, "waiting for the partitioner's run"):
        assert stage in terminal, (stage, terminal)
    assert "all-reduce" in stdout  # the report itself is untouched, on stdout
    assert not any(stage in stdout for stage in STAGES)


def test_json_and_a_pipe_show_no_progress(tmp_path: Path) -> None:
    code, terminal, stdout = _on_terminal(tmp_path, "lower", TARGET, "--compile", "-f", "json")
    assert code == 0, terminal
    assert not any(stage in terminal for stage in STAGES), terminal
    assert stdout.startswith("{")
    piped = run_cli("lower", TARGET, "--compile", cwd=REPO)
    assert piped.returncode == 0, piped.describe()
    assert not any(stage in piped.stderr for stage in STAGES), piped.describe()
