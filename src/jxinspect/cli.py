"""The ``jxinspect`` command: a thin layer over :mod:`jxinspect.api`.

Payload goes to stdout (or ``-o FILE``), diagnostics to stderr, colour only on a
terminal. Importing this module does not import JAX, so ``--help`` stays fast.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from jxinspect import __version__
from jxinspect.cliutil import (
    AbstractOpt,
    ArgsFromOpt,
    ArgsFromRecordOpt,
    ArgsOpt,
    AxisNameOpt,
    Color,
    DevicesOpt,
    Dialect,
    ExplicitOpt,
    Format,
    InAxesOpt,
    InSpecsOpt,
    IntsOpt,
    KeepUnusedOpt,
    KwargsOpt,
    MeshOpt,
    NamesOpt,
    OutAxesOpt,
    OutSpecsOpt,
    PartitionerOpt,
    PlatformOpt,
    Show,
    StageOpt,
    TracebackOpt,
    emit,
    fails,
    render_report,
    run_command,
    target_options,
    text_request,
    use_color,
)
from jxinspect.commands_diff import diff_debug
from jxinspect.commands_lint import lint, lint_merge
from jxinspect.commands_record import record, show
from jxinspect.errors import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, EXIT_USER_CODE, UsageError
from jxinspect.render.escape import text as one_line
from jxinspect.targets import user_prints_to_stderr
from jxinspect.vocabulary import FailOn

app = typer.Typer(
    name="jxinspect",
    help="See what a JAX program became: parameter names, result paths, shardings, "
    "and where JAX dropped them.",
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jxinspect {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """See what a JAX program became."""


@app.command()
def lower(
    target: Annotated[str, typer.Argument(help="module:function or path/to/file.py:function")],
    args: ArgsOpt = None,
    kwargs: KwargsOpt = None,
    args_from: ArgsFromOpt = None,
    args_from_record: ArgsFromRecordOpt = None,
    stage: StageOpt = None,
    static_argnums: IntsOpt = None,
    static_argnames: NamesOpt = None,
    donate_argnums: IntsOpt = None,
    donate_argnames: NamesOpt = None,
    keep_unused: KeepUnusedOpt = None,
    devices: DevicesOpt = None,
    mesh: MeshOpt = None,
    in_specs: InSpecsOpt = None,
    out_specs: OutSpecsOpt = None,
    axis_name: AxisNameOpt = None,
    in_axes: InAxesOpt = None,
    out_axes: OutAxesOpt = None,
    static_broadcasted_argnums: IntsOpt = None,
    abstract: AbstractOpt = None,
    platform: PlatformOpt = None,
    partitioner: PartitionerOpt = None,
    explicit: ExplicitOpt = None,
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.text,
    output: Annotated[Optional[Path], typer.Option("--output", "-o")] = None,
    show: Annotated[
        Optional[list[Show]],
        typer.Option(help="Also print the annotated jaxpr, module, or sharding pictures."),
    ] = None,
    dialect: Annotated[
        Optional[Dialect], typer.Option(help="Module text: stablehlo (default) or hlo.")
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
    compile: Annotated[
        bool, typer.Option("--compile", help="Also compile: chosen shardings, memory, collectives.")
    ] = False,
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 on findings this severe.")] = "never",
    color: Annotated[Color, typer.Option()] = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Stage a function and report each argument's name, each result's path, the shardings,
    and every place JAX dropped or degraded that debug info."""

    flags = dict(locals())

    def body() -> int:
        given = target_options(flags)
        from jxinspect.api import inspect_target

        wants_compiled = compile or Show.collectives in (show or [])
        request = text_request(show or [], format, dialect, debug_info, source, max_lines)
        with user_prints_to_stderr():
            report = inspect_target(target, given, keep_texts=request, compile=wants_compiled)
        text = render_report(report, format, show or [], use_color(color, output), max_lines)
        emit(text, output)
        if report.reached == "traced" and report.error:
            # the report (what tracing gave) is out; the user's code still failed to lower
            if show_traceback and report.error_traceback:
                typer.echo(report.error_traceback, err=True, nl=False)
            typer.echo(f"error: lowering failed: {one_line(report.error)}", err=True)
            return EXIT_USER_CODE
        severities = [f.severity for f in report.findings]
        return EXIT_FINDINGS if fails(severities, fail_on) else EXIT_OK

    run_command(body, show_traceback)


@app.command()
def explain(
    code: Annotated[str, typer.Argument(help="A finding code such as JX102.")],
) -> None:
    """Say what a finding code means and how to fix or silence it."""

    def body() -> int:
        from jxinspect.checks import RULES_BY_CODE
        from jxinspect.options import nearest

        rule = RULES_BY_CODE.get(code.upper())
        if rule is None:
            codes = sorted(RULES_BY_CODE)
            raise UsageError(
                f"unknown code {code!r}{nearest(code.upper(), codes)}; known: {', '.join(codes)}"
            )
        typer.echo(f"{rule.code} ({rule.severity}): {rule.summary}\n\n{rule.explanation}")
        return EXIT_OK

    run_command(body, False)


app.command("diff-debug")(diff_debug)
app.command("lint")(lint)
app.command("lint-merge")(lint_merge)
app.command("record", context_settings={"allow_interspersed_args": False})(record)
app.command("show")(show)


def main() -> None:
    """Console-script entry point: usage errors become one ``error:`` line and exit 2."""
    try:
        _main()
    finally:
        # what the run made lives until the process ends: out of the collector's way,
        # so the collections of the interpreter's shutdown do not walk it (15 ms of a
        # lint run)
        gc.freeze()


def _main() -> None:
    usage_error: type[Exception] = typer.BadParameter.__mro__[1]  # click's UsageError
    argv = sys.argv[1:] or ["--help"]
    try:
        code = app(args=argv, standalone_mode=False)
    except usage_error as err:
        context = getattr(err, "ctx", None)
        where = f" (see `{context.command_path} --help`)" if context is not None else ""
        message = one_line(getattr(err, "format_message", err.__str__)())
        typer.echo(f"error: {message}{where}", err=True)
        sys.exit(int(getattr(err, "exit_code", 2)))
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)
