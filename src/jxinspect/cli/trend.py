"""``jxinspect trend FILE [TARGET]``: where each target's cost changed from one
``lint --history FILE`` run to the next. Reads the database only; imports no JAX."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from jxinspect.cli.common import (
    FORMAT_HELP,
    Color,
    ColorOpt,
    OutputOpt,
    TracebackOpt,
    emit,
    run_command,
    use_color,
)
from jxinspect.core.errors import EXIT_OK, UsageError
from jxinspect.render import formats

if TYPE_CHECKING:  # typer reads the enum; the code reads a format name
    TrendFormat = str
else:
    TrendFormat = formats.TREND.choice()


def trend(
    file: Annotated[
        Path, typer.Argument(help="A history database written by lint --history FILE.")
    ],
    target: Annotated[Optional[str], typer.Argument(help="Only this target.")] = None,
    format: Annotated[TrendFormat, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: OutputOpt = None,
    color: ColorOpt = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Show, per target (or the one given), each run where a measure changed from the run
    before: its time, commit and JAX version, the measure (memory per kind, FLOPs, bytes
    accessed, a collective's bytes per step by kind and mesh axes), before → after and
    the change in %. --format html draws a line chart per target and measure."""

    def body() -> int:
        from jxinspect.core.history import trend as make_trend
        from jxinspect.lint.history import read
        from jxinspect.project.options import nearest
        from jxinspect.render.common.escape import text as one_line

        rows = read(file)
        if target is not None:
            names = sorted({row.target for row in rows})
            if target not in names:
                held = f"it holds {', '.join(names)}" if names else "it holds no rows yet"
                raise UsageError(
                    f"no target {one_line(target)} in {file}{nearest(target, names)}; {held}"
                )
            rows = [row for row in rows if row.target == target]
        shown = make_trend(str(file), rows)
        style = formats.Style(color=use_color(color, output))
        emit(formats.TREND.render(shown, format, style), output)
        return EXIT_OK

    run_command(body, show_traceback)
