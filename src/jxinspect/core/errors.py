"""Errors that end a command with one clear line and a documented exit code.

0 clean · 1 findings at or above ``--fail-on`` · 2 usage, spec or config error ·
3 the user's code failed (import, trace, lower, compile) · 4 internal error.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_USER_CODE = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT) stopped the run."""


class JxError(Exception):
    """Base error: ``str(err)`` is the one line shown to the user."""

    exit_code = EXIT_INTERNAL


class UsageError(JxError):
    """A bad flag, spec, target or configuration: the user can fix the command line."""

    exit_code = EXIT_USAGE


class UserCodeError(JxError):
    """The user's module failed to import, or their function failed to trace or lower."""

    exit_code = EXIT_USER_CODE


class TooFewDevices(UsageError):
    """JAX's backend started with fewer CPU devices than a target needs; a fresh process
    that simulates ``needed`` devices can stage it (``lint`` retries it in one)."""

    def __init__(self, message: str, needed: int) -> None:
        super().__init__(message)
        self.needed = needed


def no_such_file(path: object, relative_to: str = "the current folder") -> UsageError:
    """The one line for a path that names no file: what, and how to fix it."""
    return UsageError(
        f"no such file: {path} (relative to {relative_to}); check the path, or give the "
        "file's full path"
    )


def internal_error(err: BaseException) -> str:
    """How a bug in jxinspect is reported: briefly, asking for ``--traceback``."""
    return f"internal error: {type(err).__name__}: {err} (rerun with --traceback and report it)"


def error_kind(err: BaseException) -> str:
    """How a report names whose fault an error is: ``usage``, ``user-code`` or ``internal``."""
    if isinstance(err, UsageError):
        return "usage"
    if isinstance(err, UserCodeError):
        return "user-code"
    return "internal"
