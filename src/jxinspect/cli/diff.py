"""``jxinspect diff-debug BEFORE AFTER``: what changed in names, result paths, shardings and
donation between two versions of a program, and exit 1 when it got worse.

Importing this module does not import JAX; staging (both sides, one process) does.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    warn_refused,
)
from jxinspect.cli.progress import progress_on_terminal
from jxinspect.cli.staging import NO_FLAGS, Flags, with_staging_flags
from jxinspect.core.errors import EXIT_FINDINGS, EXIT_OK, UsageError, no_such_file
from jxinspect.core.vocabulary import FailOn
from jxinspect.project.options import nearest, options_from_flags
from jxinspect.project.targets import user_prints_to_stderr
from jxinspect.render import formats
from jxinspect.render.common.escape import text as one_line

SIDE_HELP = (
    "A .py file, module:function, file.py:function, a saved .json report, a .mlir file, "
    "or a record folder (jxinspect record; compared function by function with another)."
)


if TYPE_CHECKING:  # typer reads the enum; the code reads a format name
    from jxinspect.core.survey_diff import SurveyDiff

    DiffFormat = str
else:
    DiffFormat = formats.DIFF.choice()


def allowed_classes(values: list[str] | None) -> frozenset[str]:
    """``--allow sharding --allow donation,pruned`` → the change classes, checked."""
    from jxinspect.core.diff import CHANGE_CLASSES

    result = set()
    for value in values or ():
        for item in filter(None, (part.strip() for part in value.split(","))):
            if item not in CHANGE_CLASSES:
                raise UsageError(
                    f"--allow: unknown class `{item}`{nearest(item, CHANGE_CLASSES)}; "
                    f"known: {', '.join(CHANGE_CLASSES)}"
                )
            result.add(item)
    return frozenset(result)


FailOnOpt = Annotated[
    FailOn,
    typer.Option(
        help="Exit 1 on regressions this severe (lost or degraded names and paths, a "
        "sharding that holds more bytes per device and a used donation dropped are errors)."
    ),
]
AllowOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        help="Accept a class of change: name, path, sharding, donation, pruned, "
        "nested, finding, stage, collective, memory... (repeatable, or comma-separated)."
    ),
]
CompileOpt = Annotated[
    bool,
    typer.Option(
        "--compile",
        help="Also compare the compiled cost (memory per kind, collectives, FLOPs): "
        ".py files and targets are compiled, saved reports and recordings must hold "
        "compiled info. A collective added (unless the bytes moved per step fall), or "
        "temporaries grown past budgets.memory_growth (default 10%), is an error; a "
        "measure that falls past it is an improvement.",
    ),
]

MemoryOpt = Annotated[
    bool,
    typer.Option(
        "--memory",
        help="With --compile: also pair what is live at each side's peak by path or line "
        "(compiles .py files and targets; a saved report from `lower --memory`).",
    ),
]

ProfileOpt = Annotated[
    bool,
    typer.Option(
        "--profile",
        help="Also compare the measured step: .py files and targets are compiled and run "
        "as `jxinspect profile` runs them (10 steps after 2), saved reports must come from "
        "`profile --format json` (two such reports are compared without it). A line or "
        "collective slower by more than budgets.memory_growth is a regression (a warning).",
    ),
]


@with_staging_flags
def diff_debug(
    before: Annotated[str, typer.Argument(help=SIDE_HELP)],
    after: Annotated[str, typer.Argument(help=SIDE_HELP)],
    function: Annotated[
        Optional[list[str]],
        typer.Option("--function", help="Compare this function of the .py files (repeatable)."),
    ] = None,
    staging: Flags = NO_FLAGS,
    format: Annotated[DiffFormat, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: OutputOpt = None,
    fail_on: FailOnOpt = "error",
    allow: AllowOpt = None,
    compile: CompileOpt = False,
    memory: MemoryOpt = False,
    profile: ProfileOpt = False,
    color: ColorOpt = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Compare two versions of a program (Python, target, saved report or StableHLO): names
    lost or degraded, result paths, shardings, donation, pruning and findings, with
    --compile the cost, with --profile (or two saved profiles) the measured step; exit 1
    on a regression at or above --fail-on."""

    def body() -> int:
        from jxinspect.compare.sources import load_sides
        from jxinspect.core.diff import DiffReport

        surveyed = _survey_diff(before, after, gate=fail_on != "never")
        if surveyed is not None:
            return _emit_survey_diff(surveyed, format, use_color(color, output), output)
        allowed = tuple(allowed_classes(allow))
        given = options_from_flags(staging)
        with user_prints_to_stderr(), progress_on_terminal(format):
            loaded = load_sides(
                before, after, given, tuple(function or ()), compile=compile or memory,
                memory=memory, profile=profile,
            )  # fmt: skip
        warn_refused(loaded.refused)
        _warn_incomplete(loaded.incomplete)
        diff = DiffReport(
            before=before,
            after=after,
            targets=loaded.targets(),
            fail_on=fail_on,
            allow=allowed,
            only_before=loaded.only_before,
            only_after=loaded.only_after,
            findings=loaded.program_findings,
            guard_before=loaded.guards[0],
            guard_after=loaded.guards[1],
        )
        style = formats.Style(color=use_color(color, output))
        emit(formats.DIFF.render(diff, format, style), output)
        return EXIT_FINDINGS if diff.failed else EXIT_OK

    run_command(body, show_traceback, stages_here=True)


def _emit_survey_diff(surveyed: SurveyDiff, format: str, color: bool, output: Path | None) -> int:
    """Two surveys' difference in the format asked (one a survey's difference has)."""
    if format not in formats.SURVEY_DIFF.names:
        raise UsageError(
            f"--format {format}: two surveys compare as {' or '.join(formats.SURVEY_DIFF.names)}"
        )
    emit(formats.SURVEY_DIFF.render(surveyed, format, formats.Style(color=color)), output)
    return EXIT_FINDINGS if surveyed.failed else EXIT_OK


def _survey_diff(before: str, after: str, gate: bool) -> SurveyDiff | None:
    """Two saved surveys compared cell by cell; ``None`` when neither side is a survey."""
    from jxinspect.compare.survey import diff_surveys, read_survey

    old, new = read_survey(before), read_survey(after)
    if old is None and new is None:
        return None
    if old is None or new is None:
        survey, other = (before, after) if old is not None else (after, before)
        if _names_no_file(other):
            raise no_such_file(other)
        raise UsageError(
            f"{survey} is a survey and {other} is not: compare two surveys "
            "(jxinspect survey --format json -o FILE, under each JAX)"
        )
    return diff_surveys(old, new, before, after, gate)


def _names_no_file(text: str) -> bool:
    """Whether ``text`` is a path (a file's name, not ``module:function``) that names
    nothing: the side beside a survey is then missing, not of another kind."""
    path = Path(text)
    if path.exists():
        return False
    return ":" not in text or path.suffix.lower() in (".json", ".mlir")


def _warn_incomplete(folders: Iterable[str]) -> None:
    """A warning line for each record folder whose run did not complete."""
    for folder in folders:
        typer.echo(
            f"warning: {one_line(folder)}: the recorded run did not complete; "
            "functions it had not lowered yet show as missing",
            err=True,
        )
