"""Plumbing shared by the command modules: output enums, where text goes, exit codes.

Nothing here imports JAX.
"""

from __future__ import annotations

import enum
import sys
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated

import typer

from jxinspect.errors import EXIT_INTERNAL, JxError, UsageError
from jxinspect.model import SEVERITY_RANK


class Format(str, enum.Enum):
    text = "text"
    json = "json"


class Stage(str, enum.Enum):
    jit = "jit"
    pjit = "pjit"
    pmap = "pmap"
    shard_map = "shard_map"


class Partitioner(str, enum.Enum):
    shardy = "shardy"
    gspmd = "gspmd"


class Platform(str, enum.Enum):
    cpu = "cpu"
    gpu = "gpu"
    tpu = "tpu"


class Show(str, enum.Enum):
    jaxpr = "jaxpr"
    mlir = "mlir"
    collectives = "collectives"


class FailOn(str, enum.Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"




def ints(flag: str, text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    from jxinspect.spec import SpecError, parse_int_tuple

    try:
        return parse_int_tuple(text)
    except SpecError as err:
        raise UsageError(f"--{flag}: {err}") from None


def names(flag: str, text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    from jxinspect.spec import SpecError, parse_name_tuple

    try:
        return parse_name_tuple(text)
    except SpecError as err:
        raise UsageError(f"--{flag}: {err}") from None


def emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write {output}: {err.strerror}") from None


def use_color(color: Color, output: Path | None) -> bool:
    if color is Color.always:
        return True
    return color is Color.auto and output is None and sys.stdout.isatty()


def fails(severities: Iterable[str], fail_on: FailOn) -> bool:
    if fail_on is FailOn.never:
        return False
    return any(SEVERITY_RANK[s] >= SEVERITY_RANK[fail_on.value] for s in severities)


def run_command(body: Callable[[], int], show_traceback: bool) -> None:
    """Run a command body; errors become one line on stderr and their exit code."""
    try:
        code = body()
    except JxError as err:
        if show_traceback:
            traceback.print_exc()
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(err.exit_code) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as err:  # a bug in jxinspect: say so, briefly
        if show_traceback:
            traceback.print_exc()
        typer.echo(
            f"internal error: {type(err).__name__}: {err} (rerun with --traceback and report it)",
            err=True,
        )
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


TracebackOpt = Annotated[
    bool, typer.Option("--traceback", help="Show the full Python traceback on errors.")
]
