"""Plumbing shared by the command modules: output choices, where text goes, exit codes.

Nothing here imports JAX.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, Optional

import typer

from jxinspect.core import interrupts
from jxinspect.core.errors import EXIT_INTERNAL, JxError, UsageError, internal_error
from jxinspect.core.files import write_output
from jxinspect.core.program import ModuleDialect, TextRequest
from jxinspect.core.vocabulary import VIEWS, View, choice, view_named
from jxinspect.render import formats
from jxinspect.render.common.escape import text as one_line

SAVED_VIEWS: tuple[View, ...] = ("sharding",)
"""What ``show`` draws from a saved report, which keeps no program text."""

if TYPE_CHECKING:  # typer reads the enums; the code reads a format's or a view's name
    from jxinspect.core.model import Report
    from jxinspect.project.config import Config

    Format = str
    Show = View
    SavedShow = View
else:
    Format = formats.REPORT.choice()
    Show = choice("Show", VIEWS)
    SavedShow = choice("SavedShow", SAVED_VIEWS)


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


def views(show: Sequence[str] | None) -> tuple[View, ...]:
    """The views ``--show`` asked for, by name, each once."""
    return tuple(dict.fromkeys(view_named(view) for view in show or ()))


def text_request(
    show: tuple[View, ...],
    format: Format,
    dialect: ModuleDialect | None,
    debug_info: bool,
    source: bool,
    max_lines: int | None,
) -> TextRequest | None:
    """The program texts ``lower`` must keep for its views (``None``: none); the view
    flags must come with a view that uses them."""
    html = format == "html"
    jaxpr = html or (format == "text" and "jaxpr" in show)
    module = html or (format == "text" and "mlir" in show)
    if source and not jaxpr:
        raise UsageError("--source labels jaxpr equations: add --show jaxpr or --format html")
    for flag, given in (("--dialect", dialect is not None), ("--debug-info", debug_info)):
        if given and not module:
            raise UsageError(f"{flag} is about the module text: add --show mlir or --format html")
    if max_lines is not None and max_lines < 1:
        raise UsageError(f"--max-lines {max_lines}: give a number of lines, 1 or more")
    if max_lines is not None and not (jaxpr or module):
        raise UsageError(
            "--max-lines cuts the jaxpr and module texts: add --show jaxpr, --show mlir or "
            "--format html"
        )
    if not (jaxpr or module):
        return None
    return TextRequest(
        jaxpr=jaxpr,
        module=(dialect or "stablehlo") if module else None,
        debug_info=debug_info,
        source=source,
    )


def render_report(
    report: Report, format: Format, show: tuple[View, ...], color: bool, max_lines: int | None
) -> str:
    """A report as ``lower`` and ``show`` print it: the format asked for, and in text its
    views."""
    style = formats.Style(color, show, max_lines)
    return formats.REPORT.render(report, format, style)


def emit(text: str, output: Path | None, *, says_interrupted: bool = False) -> None:
    """Write a command's product to ``output`` (:func:`write_output`) or standard
    output; a write that fails (a full disk, a closed pipe) is one error line, exit 2.
    Nothing is written once a signal stopped the run (an interrupt that user code or
    Python swallowed included), unless the product ``says_interrupted`` itself (``lint``'s
    result of what finished)."""
    if not says_interrupted:
        interrupts.check()
    if output is not None:
        try:
            write_output(output, text)
        except OSError as err:
            raise UsageError(f"cannot write {output}: {_why(err)}") from None
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as err:
        _drop_standard_output()
        raise UsageError(f"cannot write to standard output: {_why(err)}") from None


_FIXES = {
    errno.ENOSPC: "free some space there, or write elsewhere with -o FILE",
    errno.EDQUOT: "free some space there, or write elsewhere with -o FILE",
    errno.EACCES: "write where you may, with -o FILE",
    errno.EROFS: "write elsewhere, with -o FILE",
    errno.EISDIR: "give a file's name, e.g. -o report.json",
    errno.EPIPE: "the reader stopped reading; write to a file with -o FILE",
}


def _why(err: OSError) -> str:
    """What failed, and what to do about it."""
    reason = err.strerror or str(err)
    fix = _FIXES.get(err.errno or 0)
    return f"{reason} ({fix})" if fix else reason


def _drop_standard_output() -> None:
    """Point standard output at the null device, so that what is still buffered for it
    cannot fail again when the interpreter flushes it at exit."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def use_color(color: Color, output: Path | None) -> bool:
    if color is Color.always:
        return True
    return color is Color.auto and output is None and sys.stdout.isatty()


def run_command(
    body: Callable[[], int], show_traceback: bool, *, stages_here: bool = False
) -> None:
    """Run a command body; errors become one line on stderr and their exit code (what
    they quote from the user escaped, so a newline or ESC in it cannot add a line or
    colour the terminal). ``stages_here``: the command starts JAX in this process or its
    workers (never a recorded run's), told first where no TPU host is to be found
    (:func:`jxinspect.tracer.seam.no_tpu_host`). SIGINT and SIGTERM stop the run
    (:mod:`jxinspect.core.interrupts`): whatever it came to, it ends with one line and
    ``128 + N``."""
    interrupts.stop_on_signals()
    try:
        if stages_here:
            from jxinspect.tracer import seam

            seam.no_tpu_host()
        code = body()
        interrupts.check()  # a stop that was swallowed on its way up
    except KeyboardInterrupt:
        stopped()
    except JxError as err:
        if interrupts.stopped_by() is not None:  # what the stop made fail
            stopped()
        if show_traceback:
            traceback.print_exc()
        typer.echo(f"error: {one_line(err)}", err=True)
        raise typer.Exit(err.exit_code) from None
    except (typer.Exit, typer.Abort):
        raise
    except Exception as err:  # a bug in jxinspect: say so, briefly
        if interrupts.stopped_by() is not None:
            stopped()
        if show_traceback:
            traceback.print_exc()
        typer.echo(f"error: {one_line(internal_error(err))}", err=True)
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


def stopped() -> NoReturn:
    """End a run that a signal stopped: one line on stderr, ``128 + N``."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    line = interrupts.stop_line()
    if line is not None:
        typer.echo(line, err=True)
    raise typer.Exit(interrupts.exit_status()) from None


OutputOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--output", "-o",
        help="Write here, not to standard output (a file is replaced in one step; a device "
        "or FIFO is written in place).",
    ),
]  # fmt: skip
FORMAT_HELP = "Output format (text: tables on a terminal, plain text elsewhere)."
"""The --format option's help, in every command."""

ColorOpt = Annotated[
    Color, typer.Option(help="Colour: auto (on a terminal, unless -o), always or never.")
]
"""The --color option, in every command that prints a report."""

TracebackOpt = Annotated[
    bool, typer.Option("--traceback", help="Show the full Python traceback on errors.")
]


def warn_refused(refused: str | None) -> None:
    """Say, in one line on stderr, why a configuration found was not used (another
    user's, or writable by others)."""
    if refused:
        typer.echo(f"warning: {one_line(refused)}", err=True)


def project_config_said() -> Config:
    """The project's configuration, found from the working folder, once; a refused one
    said (:func:`warn_refused`)."""
    from jxinspect.project.config import project_config

    config = project_config()
    warn_refused(config.refused)
    return config
