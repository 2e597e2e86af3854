"""Who raised ``KeyboardInterrupt``: the person at the terminal (Ctrl-C), or user code.

The commands call :func:`watch_terminal` once; a SIGINT then marks itself before it
raises. A ``KeyboardInterrupt`` seen while no SIGINT arrived came from
``raise KeyboardInterrupt`` in the user's code: that is the user's code failing (exit 3,
or one target's failure in ``lint``), not a request to stop. ``lint`` workers ignore
SIGINT altogether (the supervisor stops them), so there every ``KeyboardInterrupt`` is
the user's code.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_from_terminal = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _from_terminal
    _from_terminal = True
    raise KeyboardInterrupt


def watch_terminal() -> None:
    """Mark SIGINTs (Ctrl-C) so that :func:`reraise_if_stopping` can tell them apart."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)


def ignore_terminal() -> None:
    """In a worker process: the supervisor handles Ctrl-C and stops the workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def reraise_if_stopping(err: BaseException) -> None:
    """Re-raise a ``KeyboardInterrupt`` that came from the terminal: the run stops."""
    if isinstance(err, KeyboardInterrupt) and _from_terminal:
        raise err


def signal_named(number: int) -> str:
    """``signal 11, SIGSEGV``: a signal that ended a process, by number and name."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "unknown signal"
    return f"signal {number}, {name}"
