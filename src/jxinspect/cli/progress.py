"""Progress on stderr while a command works: one transient line (the stage, a bar, the
time so far), drawn with rich once the work has run ``JXINSPECT_PROGRESS_AFTER_S``
seconds (2 by default), only when stderr is a terminal and the payload is not JSON.

The work says where it is through :mod:`jxinspect.core.progress`; this is its one
listener, for ``lower``, ``diff-debug``, ``profile`` and ``lint`` alike.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from jxinspect.core import progress

AFTER_S = 2.0
"""Seconds of work before the line is drawn: shorter work shows none."""


def progress_on_terminal(format: str = "text") -> contextlib.AbstractContextManager[None]:
    """While inside: the work's progress on stderr, when it is a terminal and ``format``
    is not JSON; otherwise nothing is drawn."""
    if format == "json" or not sys.stderr.isatty():
        return contextlib.nullcontext()
    return _drawn(_after_s())


def _after_s() -> float:
    said = os.environ.get("JXINSPECT_PROGRESS_AFTER_S", "")
    try:
        return max(0.0, float(said)) if said else AFTER_S
    except ValueError:
        return AFTER_S


@contextlib.contextmanager
def _drawn(after_s: float) -> Iterator[None]:
    line = _Line()
    timer = threading.Timer(after_s, line.show)
    timer.daemon = True
    timer.start()
    try:
        with progress.listening(line):
            yield
    finally:
        timer.cancel()
        line.close()


class _Line:
    """The progress line: what the work said so far, drawn once :meth:`show` is called
    (from the timer's thread, hence the lock) until :meth:`close`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stage = "starting"
        self._total = 0
        self._done = 0
        self._bar: Any = None
        self._task: Any = None
        self._closed = False

    def stage(self, name: str) -> None:
        with self._lock:
            self._stage = name
            self._draw()

    def more(self, count: int) -> None:
        with self._lock:
            self._stage, self._total = "staging", self._total + count
            self._draw()

    def done(self, count: int) -> None:
        with self._lock:
            self._done += count
            self._draw()

    def show(self) -> None:
        with self._lock:
            if self._closed or self._bar is not None:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._task = self._bar.add_task(self._description(), total=self._total or None)
            self._bar.start()
            self._draw()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._bar is not None:
                self._bar.stop()

    def _description(self) -> str:
        return f"{self._stage} {self._done}/{self._total}" if self._total else self._stage

    def _draw(self) -> None:
        """Draw now, so that each stage is seen even when it is shorter than a refresh."""
        if self._bar is None or self._closed:
            return
        self._bar.update(
            self._task,
            description=self._description(),
            total=self._total or None,
            completed=self._done,
        )
        self._bar.refresh()
