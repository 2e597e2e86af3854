"""How a run stops on a signal: Ctrl-C (SIGINT) or SIGTERM, and who raised
``KeyboardInterrupt``.

The commands call :func:`stop_on_signals` once; a SIGINT or SIGTERM then marks itself
(:func:`stopped_by`) before it raises ``KeyboardInterrupt``, so the run unwinds through
its ``finally`` blocks (children stopped, temporary folders removed) and ends with
``128 + N`` and one line (:func:`stop_line`). The mark outlives the exception: an
interrupt that user code caught, or that Python swallowed (raised inside a
garbage-collection callback, printed as "Exception ignored"), still stops the run at the
next :func:`check`, and no report is printed after it.

A ``KeyboardInterrupt`` seen while no signal arrived came from ``raise KeyboardInterrupt``
in the user's code: that is the user's code failing (exit 3, or one target's failure in
``lint``), not a request to stop. ``lint`` workers leave SIGINT to the supervisor, which
stops them (:func:`leave_to_parent`), so there every ``KeyboardInterrupt`` is the
user's code.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a run and its children."""

_stopped_by: int | None = None
_said = False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    note(signum)
    raise KeyboardInterrupt


def note(signum: int) -> None:
    """Mark the run as stopped by ``signum`` (the first signal counts), without raising:
    for code that takes the signal itself (``record`` passes it on to its command)."""
    global _stopped_by
    if _stopped_by is None:
        _stopped_by = signum


def _quiet_unraisable(unraisable: Any) -> None:
    """Python's "Exception ignored" report, but for the interrupt the run already noted
    (it stops the run at the next :func:`check`: one line, not a traceback)."""
    kind = unraisable.exc_type
    if _stopped_by is not None and isinstance(kind, type) and issubclass(kind, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def stop_on_signals() -> None:
    """Let SIGINT and SIGTERM mark the run and raise ``KeyboardInterrupt`` (in the main
    thread only: signal handlers can be set nowhere else)."""
    if threading.current_thread() is threading.main_thread():
        for number in STOPPING_SIGNALS:
            signal.signal(number, _on_signal)
        sys.unraisablehook = _quiet_unraisable


def stopped_by() -> int | None:
    """The signal that stopped the run, or ``None``."""
    return _stopped_by


def check() -> None:
    """Raise ``KeyboardInterrupt`` again where a signal stopped the run and the first
    one was caught or swallowed on its way up."""
    if _stopped_by is not None:
        raise KeyboardInterrupt


def exit_status() -> int:
    """``128 + N`` for the signal N that stopped the run, as a shell says it (130 for
    Ctrl-C, 143 for SIGTERM); 130 for a ``KeyboardInterrupt`` no signal raised."""
    return 128 + (_stopped_by or signal.SIGINT)


def stop_line() -> str | None:
    """The one line a stopped run ends with; ``None`` once it was said."""
    global _said
    if _said:
        return None
    _said = True
    number = _stopped_by or signal.SIGINT
    return (
        f"error: {'interrupted' if number == signal.SIGINT else 'stopped'} ({signal_named(number)})"
    )


def reraise_if_stopping(err: BaseException) -> None:
    """Re-raise a ``KeyboardInterrupt`` that a signal raised: the run stops."""
    if isinstance(err, KeyboardInterrupt) and _stopped_by is not None:
        raise err


def _ignore(signum: int, frame: FrameType | None) -> None:
    """A handler that does nothing (:func:`leave_to_parent`)."""


def leave_to_parent() -> None:
    """In a worker or a child of ours: Ctrl-C at the terminal is the parent's to handle
    (it stops this process), and SIGTERM ends it at once. A handler that does nothing,
    not ``SIG_IGN``: a program this process starts begins with the default (``exec``
    resets handlers, but keeps an ignored signal ignored)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _ignore)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def die_with_parent(parent: int) -> None:
    """End this process (SIGKILL) when its parent ends, however it ends (Linux's
    ``PR_SET_PDEATHSIG``); where the parent ``parent`` is already gone, exit now.
    Elsewhere, nothing."""
    import os

    if sys.platform != "linux":
        return
    import ctypes

    set_death_signal = 1  # PR_SET_PDEATHSIG, <linux/prctl.h>
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(set_death_signal, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the death signal was asked for
        os._exit(1)


def signal_named(number: int) -> str:
    """``signal 11, SIGSEGV``: a signal that ended a process, by number and name."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "unknown signal"
    return f"signal {number}, {name}"
