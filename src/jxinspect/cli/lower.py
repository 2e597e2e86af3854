"""``jxinspect lower``: stage one function and print its report."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from jxinspect.cli.common import (
    FORMAT_HELP,
    Color,
    ColorOpt,
    Format,
    OutputOpt,
    Show,
    TracebackOpt,
    emit,
    project_config_said,
    render_report,
    run_command,
    text_request,
    use_color,
    views,
)
from jxinspect.cli.progress import progress_on_terminal
from jxinspect.cli.staging import NO_FLAGS, Flags, with_staging_flags
from jxinspect.core.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USER_CODE
from jxinspect.core.model import gate
from jxinspect.core.program import ModuleDialect
from jxinspect.core.vocabulary import COMPILED_VIEWS, FailOn
from jxinspect.project.config import Policy
from jxinspect.project.options import TargetOptions, options_from_flags
from jxinspect.project.resolve import Resolved
from jxinspect.project.targets import user_prints_to_stderr
from jxinspect.render.common.escape import text as one_line

SHOW_HELP = (
    "Also print a view (repeatable): the annotated jaxpr or module, the sharding pictures, "
    "or the compiled program's collectives."
)


COMPILE_HELP = "Also compile: chosen shardings, memory, collectives."
MEMORY_HELP = "Also compile and show the peak per device and the buffers live there."
WHY_OF_HELP = (
    "Also compile and show why this value is sharded as it is (repeatable): an argument's "
    "or result's path, or FILE:LINE (LINE: in the target's file) for each operation there."
)
WHY_HELP = (
    "Also compile and show why each collective is there: the declaration each mesh axis of "
    "its operation's shardings came from (compiles again in a child process)."
)


WhyOfOpt = Annotated[
    Optional[list[str]], typer.Option("--why-of", metavar="PATH_OR_LINE", help=WHY_OF_HELP)
]


@with_staging_flags
def lower(
    target: Annotated[str, typer.Argument(help="module:function or path/to/file.py:function")],
    staging: Flags = NO_FLAGS,
    args_from_record: Annotated[
        Optional[str],
        typer.Option(help="FOLDER/NAME of `jxinspect record`: the inputs that run gave it."),
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: OutputOpt = None,
    show: Annotated[Optional[list[Show]], typer.Option(help=SHOW_HELP)] = None,
    dialect: Annotated[
        Optional[ModuleDialect], typer.Option(help="Module text: stablehlo (default) or hlo.")
    ] = None,
    debug_info: Annotated[
        bool, typer.Option("--debug-info", help="Keep source locations in the module text.")
    ] = False,
    source: Annotated[
        bool, typer.Option("--source", help="Show the user's file:line per jaxpr equation.")
    ] = False,
    max_lines: Annotated[
        Optional[int], typer.Option(help="Cut the jaxpr and module texts to N lines.")
    ] = None,
    compile: Annotated[bool, typer.Option("--compile", help=COMPILE_HELP)] = False,
    memory: Annotated[bool, typer.Option("--memory", help=MEMORY_HELP)] = False,
    why: Annotated[bool, typer.Option("--why", help=WHY_HELP)] = False,
    why_of: WhyOfOpt = None,
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 on findings this severe.")] = "never",
    color: ColorOpt = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Stage a function and report each argument's name, each result's path, the shardings,
    and every place JAX dropped or degraded that debug info."""

    def body() -> int:
        given = _given(staging, args_from_record)
        from jxinspect.pipeline import inspect_target
        from jxinspect.project.resolve import resolve

        config = project_config_said()  # read once: the target's options and the rules
        asked = {"memory": memory, "why": why or bool(why_of)}
        shown = views([*(show or []), *(view for view, wanted in asked.items() if wanted)])
        wants_compiled = compile or any(v in COMPILED_VIEWS for v in shown)
        request = text_request(shown, format, dialect, debug_info, source, max_lines)
        resolved = resolve(target, given, config)
        peak = "memory" in shown or _peak_needed(config.policy, resolved, wants_compiled)
        with user_prints_to_stderr(), progress_on_terminal(format):
            report = inspect_target(
                resolved, keep_texts=request, compile=wants_compiled, memory=peak,
                policy=config.policy, why="why" in shown, why_of=tuple(why_of or ()),
            )  # fmt: skip
        text = render_report(report, format, shown, use_color(color, output), max_lines)
        emit(text, output)
        if show_traceback and report.compiled is not None and report.compiled.unread_error:
            typer.echo(report.compiled.unread_error, err=True)  # the whole error behind unread
        if report.reached == "traced" and report.error:
            # the report (what tracing gave) is out; the user's code still failed to lower
            return _lowering_failed(report.error, report.error_traceback, show_traceback)
        return EXIT_FINDINGS if gate(report.findings, fail_on) else EXIT_OK

    run_command(body, show_traceback, stages_here=True)


def _peak_needed(policy: Policy, resolved: Resolved, compiled: bool) -> bool:
    """Whether a rule of the project's needs the peak of the program compiled here."""
    from jxinspect import rules

    on_topology = resolved.options.topology is not None
    return (compiled or on_topology) and "peak" in rules.needs(policy, topology=on_topology)


def _given(staging: Flags, args_from_record: str | None) -> TargetOptions:
    """The staging options of the flags, over the call of a record when one is named."""
    given = options_from_flags(staging)
    if args_from_record:
        from jxinspect.record.folder import read_call

        given = given.merged_over(read_call(args_from_record))
    return given


def _lowering_failed(error: str, error_traceback: str | None, show_traceback: bool) -> int:
    """Say why lowering failed (and how to fix it, where known): the user's code's exit."""
    if show_traceback and error_traceback:
        typer.echo(error_traceback, err=True, nl=False)
    from jxinspect.tracer import seam

    fix = seam.lowering_fix(error)
    said = one_line(error) + (f"; {fix}" if fix else "")
    typer.echo(f"error: lowering failed: {said}", err=True)
    return EXIT_USER_CODE
