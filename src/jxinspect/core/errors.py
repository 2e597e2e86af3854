"""Errors that end a command with one clear line and a documented exit code.

0 clean · 1 findings at or above ``--fail-on`` · 2 usage, spec or config error ·
3 the user's code failed (import, trace, lower, compile) · 4 internal error.
"""

from __future__ import annotations

import functools
import traceback
from pathlib import Path

from jxinspect.core.vocabulary import INTERNAL, USAGE, USER_CODE, ErrorKind

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


class InternalError(JxError):
    """A bug of jxinspect's (the seam on a JAX release it does not yet know, say), said
    in one line that names the releases (exit 4)."""

    exit_code = EXIT_INTERNAL


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
    """How a bug in jxinspect is reported: briefly, with the releases it happened on,
    asking for ``--traceback``."""
    return (
        f"internal error ({releases()}): {type(err).__name__}: {err} (rerun with "
        "--traceback and report it)"
    )


@functools.cache
def installed_version(distribution: str) -> str | None:
    """An installed distribution's version, from its metadata (nothing imported); ``None``
    where it is not installed. Read once per process."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def releases() -> str:
    """``jxinspect 0.1.0, JAX 0.12.0.1``: read from the installed distributions, so
    that an internal error can name them without importing JAX."""
    ours, jax = installed_version("jxinspect"), installed_version("jax")
    return ", ".join(
        (f"jxinspect {ours}" if ours else "jxinspect", f"JAX {jax}" if jax else "no jax installed")
    )


_PACKAGE = Path(__file__).resolve().parents[1]
_SHIPPED_USER_CODE = _PACKAGE / "survey" / "corpus"
"""The survey's corpus: a user's module shipped as data, whose errors are a user's."""


def raised_by_jxinspect(err: BaseException) -> bool:
    """Whether ``err`` was raised in jxinspect's own code (its innermost frame is ours:
    the seam reading something this JAX release no longer has, say), so that it is a
    bug of ours and never reported as the user's code failing. An error JAX raises,
    or the user's code, has its innermost frame there."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return False
    where = Path(frames[-1].filename).resolve()
    return where.is_relative_to(_PACKAGE) and not where.is_relative_to(_SHIPPED_USER_CODE)


def error_kind(err: BaseException) -> ErrorKind:
    """How a report names whose fault an error is: ``usage``, ``user-code`` or ``internal``."""
    if isinstance(err, UsageError):
        return USAGE
    if isinstance(err, UserCodeError):
        return USER_CODE
    return INTERNAL
