"""Output that is never lost and never destroys: ``-o`` replaces only a regular file (or
a new path) by a rename, writes a device or FIFO in place and a symbolic link's target;
a write that fails (a full disk) is one error line with exit 2, for every command.

A full disk is a character device made like ``/dev/full`` inside the test's own folder
(``mknod``, as root); the real ``/dev`` is never handed to the tool.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from helpers import CliResult, error_line, run_cli

MODULE = """
import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2


JXINSPECT = {"f": {"args": "f32[3]"}}
"""


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text(MODULE, encoding="utf-8")
    return tmp_path


def full_device(folder: Path) -> Path:
    """A device that fails every write with ENOSPC, as ``/dev/full`` does."""
    path = folder / "full"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        with open(path, "w") as probe:
            probe.write("x")
            probe.flush()
    except PermissionError:
        pytest.skip("cannot make a device node here (not root, or a nodev folder)")
    except OSError:
        return path  # the write failed: it is a full device
    pytest.skip("the device made here accepts writes")


def run_into(device: Path, *args: str, cwd: Path) -> CliResult:
    """The installed command with its standard output on ``device``."""
    return run_cli(*args, cwd=cwd, stdout=device)


def test_a_device_given_to_o_is_written_in_place_never_replaced(folder: Path) -> None:
    device = full_device(folder)
    result = run_cli("lower", "m.py:f", "-o", device, cwd=folder)
    assert result.returncode == 2, result.describe()
    assert "No space left on device" in error_line(result) and "-o FILE" in error_line(result)
    assert stat.S_ISCHR(os.lstat(device).st_mode)  # still the device, not a file


def test_a_link_to_a_device_is_written_through(folder: Path) -> None:
    (folder / "out").symlink_to(full_device(folder))
    result = run_cli("lower", "m.py:f", "-o", "out", cwd=folder)
    assert result.returncode == 2 and "No space left on device" in error_line(result)
    assert os.path.islink(folder / "out") and stat.S_ISCHR(os.stat(folder / "out").st_mode)


def test_a_fifo_given_to_o_receives_the_report(folder: Path) -> None:
    fifo = folder / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text("utf-8")))
    reader.start()
    result = run_cli("lower", "m.py:f", "--format", "json", "-o", fifo, cwd=folder)
    reader.join(timeout=60)
    assert result.returncode == 0, result.describe()
    assert '"target": "m.py:f"' in received[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symbolic_link_keeps_pointing_at_what_is_written(folder: Path) -> None:
    (folder / "link.json").symlink_to("real.json")
    result = run_cli("lower", "m.py:f", "--format", "json", "-o", "link.json", cwd=folder)
    assert result.returncode == 0, result.describe()
    assert os.path.islink(folder / "link.json")
    assert '"target": "m.py:f"' in (folder / "real.json").read_text(encoding="utf-8")


def test_a_folder_given_to_o_is_one_line(folder: Path) -> None:
    result = run_cli("lower", "m.py:f", "-o", folder, cwd=folder)
    assert result.returncode == 2 and "it is a folder" in error_line(result)


@pytest.mark.parametrize(
    "args",
    [("lower", "m.py:f"), ("lower", "m.py:f", "--format", "json"),
     ("diff-debug", "m.py:f", "m.py:f"), ("lint", "--no-cache"), ("lint", "--format", "sarif")],
    ids=["lower", "lower json", "diff-debug", "lint", "lint sarif"],
)  # fmt: skip
def test_a_full_disk_on_standard_output_is_one_line(folder: Path, args: tuple[str, ...]) -> None:
    result = run_into(full_device(folder), *args, cwd=folder)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "No space left on device" in line and "-o FILE" in line, line
