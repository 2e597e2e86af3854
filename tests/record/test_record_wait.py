"""``record`` waits for the command without a poll interval: the command's end wakes it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from jxinspect.record import recording


def test_the_commands_end_wakes_the_wait_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recording, "POLL_S", 60.0)  # only the child's end can wake it in time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    began = time.monotonic()
    status, interrupted = recording.wait(child)
    assert (status, interrupted) == (0, False)
    assert time.monotonic() - began < 20.0


def test_a_failing_commands_status_is_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recording, "POLL_S", 60.0)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3); exit(3)"])
    assert recording.wait(child) == (3, False)
