"""Records of the processes of one run started at the same moment into one folder (a
shell loop of ``jxinspect record -o runs``, the multi-process recording): each step
another record takes in the folder as it starts lands at each line this record runs
while it prepares the folder, in turn, so every interleaving of one step is run, none
left to timing. The folder must be taken as the recording it is becoming, at every one.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import jxinspect
from jxinspect.core import codec
from jxinspect.core.errors import UsageError
from jxinspect.core.recording import Index
from jxinspect.record import folder as records
from jxinspect.record.recording import prepare_folder

PACKAGE = str(Path(jxinspect.__file__).parent)
COMMAND = ["python", "train.py"]
WRITING = ".index.json.k2x8.tmp"
"""The temporary file the other record's index is written to before it is renamed."""


def _index_text() -> str:
    return codec.by_line(Index(command=COMMAND), "functions")


def _index_being_written(runs: Path) -> None:
    (runs / WRITING).write_text(_index_text(), encoding="utf-8")


def _index_renamed(runs: Path) -> None:
    os.replace(runs / WRITING, runs / records.INDEX)


def _process_folder_made(runs: Path) -> None:
    (runs / "process-0").mkdir()


def _process_folder_claimed(runs: Path) -> None:
    (runs / "process-0" / records.OWNER).write_text("4242", encoding="utf-8")
    (runs / "process-0" / records.INDEX).write_text(_index_text(), encoding="utf-8")


STEPS: tuple[Callable[[Path], None], ...] = (
    _index_being_written,
    _index_renamed,
    _process_folder_made,
    _process_folder_claimed,
)
"""What another record does in the folder as its process starts, in order (after making
the folder): its index written to a temporary file, renamed into place; its process's
folder made (under ``jax.distributed``), claimed and its index written."""


@contextmanager
def at_line(number: int, step: Callable[[], None]) -> Iterator[list[int]]:
    """Run ``step`` when the code inside the block reaches its ``number``-th line of
    jxinspect's (counted from 0; the count so far is yielded)."""
    seen = [0]

    def line(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            if seen[0] == number:
                step()
            seen[0] += 1
        return line

    def call(frame: FrameType, event: str, arg: Any) -> Any:
        return line if frame.f_code.co_filename.startswith(PACKAGE) else None

    sys.settrace(call)
    try:
        yield seen
    finally:
        sys.settrace(None)


def _lines_run(runs: Path) -> int:
    """How many lines of jxinspect's preparing ``runs`` runs."""
    with at_line(-1, lambda: None) as seen:
        prepare_folder(runs, COMMAND)
    return seen[0]


@pytest.mark.parametrize("done", range(len(STEPS)), ids=[s.__name__[1:] for s in STEPS])
def test_each_step_of_another_record_at_each_line_of_this_ones_start(
    done: int, tmp_path: Path
) -> None:
    """The other record has taken the steps before ``done`` when this one starts; its
    next step lands at each line this one runs. (A folder whose index was renamed into
    place between two looks at it was once refused as holding no recording.)"""
    first = tmp_path / "first"
    first.mkdir()
    for step in STEPS[:done]:
        step(first)
    lines = _lines_run(first)
    assert lines > 10
    for number in range(lines + 1):
        runs = tmp_path / str(number)
        runs.mkdir()
        for step in STEPS[:done]:
            step(runs)
        landing = STEPS[done]
        try:
            with at_line(number, functools.partial(landing, runs)):
                prepare_folder(runs, COMMAND)
        except UsageError as err:
            pytest.fail(f"{landing.__name__[1:]} at line {number} of {lines}: {err}")
        assert records.read_index(runs).command == COMMAND


def test_a_folder_holding_anything_else_is_refused(tmp_path: Path) -> None:
    for other in ("notes.txt", "index.json.bak", "process-x"):
        runs = tmp_path / other
        runs.mkdir()
        _index_being_written(runs)
        (runs / other).write_text("mine", encoding="utf-8")
        with pytest.raises(UsageError, match="is not empty and holds no recording"):
            prepare_folder(runs, COMMAND)
        assert (runs / other).read_text(encoding="utf-8") == "mine"
