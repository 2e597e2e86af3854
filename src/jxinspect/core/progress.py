"""Progress of long work, said to whoever listens.

The work says where it is (:func:`stage`: importing, tracing, lowering, compiling, …; and
for a run of many targets :func:`more` and :func:`done`); the command line listens
(:func:`listening`) when stderr is a terminal and draws it there. Nothing listens
otherwise (a pipe, a log, a lint worker, the partitioner's child, the API), and then
saying costs one context-variable read. A context variable, not a parameter: the stages
are deep in the pipeline and the tracer, and none of their callers needs to know.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Protocol


class Listener(Protocol):
    """What is told of the work's progress."""

    def stage(self, name: str) -> None:
        """The work is now at ``name`` (``"compiling"``)."""

    def more(self, count: int) -> None:
        """``count`` more items (targets) to do."""

    def done(self, count: int) -> None:
        """``count`` items done."""


_LISTENER: ContextVar[Listener | None] = ContextVar("jxinspect_progress", default=None)


def stage(name: str) -> None:
    """Say that the work is now at ``name``."""
    listener = _LISTENER.get()
    if listener is not None:
        listener.stage(name)


def more(count: int) -> None:
    """Say that ``count`` more items are to do."""
    listener = _LISTENER.get()
    if listener is not None and count:
        listener.more(count)


def done(count: int) -> None:
    """Say that ``count`` items are done."""
    listener = _LISTENER.get()
    if listener is not None and count:
        listener.done(count)


@contextlib.contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """While inside: the work's progress is told to ``listener`` (``None``: to nobody)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
