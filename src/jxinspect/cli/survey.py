"""``jxinspect survey``: what the installed JAX keeps of the debug info, transformation by
transformation (the corpus staged through the one pipeline, in this process)."""

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
from jxinspect.core.vocabulary import Partitioner
from jxinspect.project.targets import user_prints_to_stderr
from jxinspect.render import formats
from jxinspect.render.common.escape import text as one_line

if TYPE_CHECKING:  # typer reads the enum; the code reads a format name
    SurveyFormat = str
else:
    SurveyFormat = formats.SURVEY.choice()


def survey(
    program: Annotated[
        Optional[list[str]],
        typer.Option("--program", help="Survey only this program of the corpus (repeatable)."),
    ] = None,
    partitioner: Annotated[
        Optional[Partitioner],
        typer.Option(help="Partition with shardy or gspmd (default: the release's own)."),
    ] = None,
    compile: Annotated[
        bool,
        typer.Option("--compile", help="Also compile: the names the compiled parameters carry."),
    ] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="Stage nothing: draw the surveys shipped for every release CI tests side by "
            "side, a matrix per level (program × release).",
        ),
    ] = False,
    format: Annotated[SurveyFormat, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: OutputOpt = None,
    color: ColorOpt = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Stage a built-in corpus (one small program per transformation: jit, grad, vmap,
    scan, cond, custom_jvp, shard_map, pmap...) and show, level by level, which names and
    result paths the installed JAX kept, fell back on, or dropped. Compare two saved
    surveys with `jxinspect diff-debug a.json b.json`; see every shipped release side by
    side with `--history`."""

    def body() -> int:
        if history:
            return _history(tuple(program or ()), partitioner, compile, format, output, color)
        from jxinspect.survey.run import run_survey

        with user_prints_to_stderr():
            done = run_survey(tuple(program or ()), partitioner, compile)
        style = formats.Style(color=use_color(color, output))
        emit(formats.SURVEY.render(done, format, style), output)
        for failed in (p for p in done.programs if p.error is not None):
            typer.echo(f"warning: {failed.name} did not stage: {one_line(failed.error)}", err=True)
        return EXIT_OK

    run_command(body, show_traceback, stages_here=True)


def _history(
    only: tuple[str, ...],
    partitioner: Partitioner | None,
    compile: bool,
    format: str,
    output: Path | None,
    color: Color,
) -> int:
    """The shipped surveys side by side (``only`` these programs, when given)."""
    from jxinspect.core.survey import history
    from jxinspect.rules.advice import shipped

    given = {"--compile": compile, "--partitioner": partitioner is not None}
    staging = [flag for flag, on in given.items() if on]
    if staging:
        raise UsageError(
            f"{staging[0]} stages the corpus, and --history stages nothing (it reads the "
            "shipped surveys); drop one of them"
        )
    surveys = shipped()
    known = dict.fromkeys(p.name for s in surveys for p in s.programs)
    unknown = [name for name in only if name not in known]
    if unknown:
        raise UsageError(
            f"no program {unknown[0]!r} in the shipped surveys; known: {', '.join(known)}"
        )
    style = formats.Style(color=use_color(color, output))
    emit(formats.SURVEY_HISTORY.render(history(surveys, only), format, style), output)
    return EXIT_OK
