"""``jxinspect trend FILE [TARGET]``: where each target's cost changed from one
``lint --history FILE`` run to the next. Reads the database only; imports no JAX."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, Optional

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

TREND_LIMIT = 100_000
"""The most targets, rows (``--format json``, ``html``) and changes one trend holds."""
_NAMED = 20
"""The most targets an unknown target's error names."""

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
        from jxinspect.core.history import TooLong
        from jxinspect.core.history import trend as make_trend
        from jxinspect.lint.history import read_rows

        every_row = format != "text"  # text shows the changes only
        try:
            shown = make_trend(str(file), read_rows(file, target), keep_rows=every_row,
                               limit=TREND_LIMIT)  # fmt: skip
        except TooLong as err:
            every = "; --format json and html give every row" if every_row else ""
            raise UsageError(
                f"{file} holds more than trend shows at once ({err}{every}); name a TARGET, "
                "or read the file with any SQLite client"
            ) from None
        if target is not None and not shown.targets:
            _unknown_target(file, target)
        style = formats.Style(color=use_color(color, output))
        emit(formats.TREND.render(shown, format, style), output)
        return EXIT_OK

    run_command(body, show_traceback)


def _unknown_target(file: Path, target: str) -> NoReturn:
    """Refuse a target the history has no row of, naming those it has (the first few)."""
    from jxinspect.lint.history import targets
    from jxinspect.project.options import nearest
    from jxinspect.render.common.escape import text as one_line

    names = targets(file, _NAMED + 1)
    listed = ", ".join(one_line(name) for name in names[:_NAMED])
    more = ", …" if len(names) > _NAMED else ""
    held = f"it holds {listed}{more}" if names else "it holds no rows yet"
    raise UsageError(
        f"no target {one_line(target)} in {file}{one_line(nearest(target, names))}; {held}"
    )
