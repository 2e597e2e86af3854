"""``jxinspect lint``: the CI gate. A thin layer over :func:`jxinspect.lint.run.run_lint`.

The payload (in the chosen format) goes to stdout or ``-o FILE``; a progress bar and
diagnostics go to stderr, the bar only when stderr is a terminal
(:mod:`jxinspect.cli.progress`). Imports no JAX.
"""

from __future__ import annotations

from dataclasses import dataclass
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
from jxinspect.cli.parameters import takes_options
from jxinspect.cli.progress import progress_on_terminal
from jxinspect.core.lint import LintResult
from jxinspect.core.vocabulary import FailOn
from jxinspect.render import formats
from jxinspect.render.common.escape import text as one_line

if TYPE_CHECKING:  # typer reads the enum; the code reads a format name
    from jxinspect.lint.options import LintRequest

    LintFormat = str
else:
    LintFormat = formats.LINT.choice()


def render(result: LintResult, format: LintFormat, color: bool) -> str:
    """The result in the chosen format."""
    return formats.LINT.render(result, format, formats.Style(color=color))


@dataclass(frozen=True)
class LintFlags:
    """lint's own options, in ``--help``'s order (the staging options are configured)."""

    config: Annotated[
        Optional[Path],
        typer.Option(help="jxinspect.yaml or pyproject.toml (default: found from here upward)."),
    ] = None
    format: Annotated[LintFormat, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text"
    output: OutputOpt = None
    select: Annotated[
        Optional[str], typer.Option(help='Run only these codes or prefixes: "JX1,JX201".')
    ] = None
    ignore: Annotated[Optional[str], typer.Option(help='Skip these codes: "JX105".')] = None
    fail_on: Annotated[
        Optional[FailOn], typer.Option(help="Exit 1 on new findings this severe (default error).")
    ] = None
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even with failing findings.")
    ] = False
    baseline: Annotated[
        Optional[Path],
        typer.Option(help="Baseline file (default: as configured, or jxinspect-baseline.json)."),
    ] = None
    write_baseline: Annotated[
        bool, typer.Option("--write-baseline", help="Record the current findings as accepted.")
    ] = False
    jobs: Annotated[
        Optional[int],
        typer.Option(
            "--jobs", "-j", min=1, help="Worker processes (default: the cores, at most 8)."
        ),
    ] = None
    timeout: Annotated[
        Optional[float],
        typer.Option(
            min=0,
            help="Seconds one target may take to stage; 0 for no limit "
            "(default: as configured, or 300).",
        ),
    ] = None
    compile: Annotated[
        Optional[bool],
        typer.Option("--compile/--no-compile", help="Also compile (XLA's shardings, memory)."),
    ] = None
    cache: Annotated[
        Optional[bool],
        typer.Option(
            "--cache/--no-cache",
            help="Reuse the reports of unchanged targets (default: as configured, on).",
        ),
    ] = None
    keep_workers: Annotated[
        Optional[bool],
        typer.Option(
            "--keep-workers/--no-keep-workers",
            help="Keep the workers, with JAX loaded, for the next run (they exit after 10 "
            "idle minutes; default: as configured, off).",
        ),
    ] = None
    shard: Annotated[
        Optional[str],
        typer.Option(help="Stage only part K of N (K/N), for a CI job matrix; see lint-merge."),
    ] = None
    records: Annotated[
        Optional[Path],
        typer.Option(
            "--records",
            help="Judge the functions a record folder holds (jxinspect record) instead of "
            "staging targets; a recording whose run did not complete fails (exit 3).",
        ),
    ] = None
    history: Annotated[
        Optional[Path],
        typer.Option(
            help="Append a row per target (commit, time, JAX, devices, memory per kind, "
            "collective bytes) to this SQLite database; see `jxinspect trend`."
        ),
    ] = None
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Say on stderr how each target was judged.")
    ] = False
    color: ColorOpt = Color.auto


@takes_options
def lint(
    paths: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="Files or folders to search for modules that declare JXINSPECT "
            "(added to the configured targets)."
        ),
    ] = None,
    *,
    flags: LintFlags,
    show_traceback: TracebackOpt = False,
) -> None:
    """Stage every configured or declared target and fail when debug info, shardings or
    memory budgets regress. Exit 0 clean, 1 new findings at or above --fail-on, 2 usage
    or configuration error, 3 a target failed (import, trace, exit, crash, timeout), 4
    internal error, 130 interrupted. --exit-zero covers findings, never failed targets."""
    run_command(
        lambda: _lint(tuple(paths or ()), flags, show_traceback), show_traceback, stages_here=True
    )


def _lint(paths: tuple[str, ...], flags: LintFlags, show_traceback: bool) -> int:
    """Run lint, say what the flags ask on stderr and emit the result; its exit code."""
    from jxinspect.lint.run import run_lint

    with progress_on_terminal(flags.format):
        result = run_lint(_request(paths, flags, show_traceback))
    for folder in _incomplete_records(flags.records):
        typer.echo(
            f"error: {one_line(str(folder))}: the recorded run did not complete; "
            "its functions were judged, those it had not lowered yet were not "
            "(exit 3); record a run that completes",
            err=True,
        )
    elsewhere = result.config is not None and Path(result.config).name != result.config
    if elsewhere and flags.format == "text":  # found above the working folder, or named
        typer.echo(f"using configuration {one_line(result.config)}", err=True)  # JSON: config
    for note in result.notes:
        typer.echo(f"warning: {one_line(note)}", err=True)
    if flags.verbose:
        for target in result.targets:
            how = (
                "cached" if target.cached
                else f"failed ({target.error_kind})" if target.failed
                else f"staged in {target.seconds:.2f} s" if target.seconds is not None
                else "staged"
            )  # fmt: skip
            typer.echo(f"{one_line(target.target)}: {how}", err=True)
    text = render(result, flags.format, use_color(flags.color, flags.output))
    emit(text, flags.output, says_interrupted=result.interrupted)  # what finished
    if flags.write_baseline:
        size, costs = result.baseline_size, result.baseline_costs
        kept = (
            f" and the compiled cost of {costs} target{'s' if costs != 1 else ''}" if costs else ""
        )
        typer.echo(
            f"wrote {size} finding{'s' if size != 1 else ''}{kept} to the baseline "
            f"{one_line(result.baseline)}",
            err=True,
        )
    return result.exit_code(flags.exit_zero)


def _request(paths: tuple[str, ...], flags: LintFlags, show_traceback: bool) -> LintRequest:
    """What lint is asked to do, the flags checked."""
    from jxinspect.lint.history import check_history
    from jxinspect.lint.options import LintRequest
    from jxinspect.lint.shards import parse_shard
    from jxinspect.lint.workers.supervisor import default_jobs
    from jxinspect.project.codes import codes

    return LintRequest(
        paths=paths,
        config=flags.config,
        select=codes("select", flags.select),
        ignore=codes("ignore", flags.ignore) or (),
        fail_on=flags.fail_on,
        baseline=flags.baseline,
        write_baseline=flags.write_baseline,
        jobs=flags.jobs or default_jobs(),
        timeout=flags.timeout,
        cache=flags.cache,
        keep_workers=flags.keep_workers,
        shard=parse_shard(flags.shard) if flags.shard is not None else None,
        compile=flags.compile,
        traceback=show_traceback,
        records=flags.records,
        history=check_history(flags.history) if flags.history is not None else None,
    )


def _incomplete_records(records: Path | None) -> list[Path]:
    """The folders of a judged recording (each process's, for several) whose run did not
    complete."""
    if records is None:
        return []
    from jxinspect.record.folder import read_index
    from jxinspect.record.processes import is_multi_process, process_folders

    folders = [f for _, f in process_folders(records)] if is_multi_process(records) else [records]
    return [folder for folder in folders if not read_index(folder).complete]


def lint_merge(
    parts: Annotated[
        list[Path], typer.Argument(help="The JSON results of every part (lint --shard K/N).")
    ],
    format: Annotated[LintFormat, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: OutputOpt = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even with failing findings.")
    ] = False,
    color: ColorOpt = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Combine the parts of a lint run split with --shard K/N into one result, in any
    format, with the exit code one run would have given; say which part is missing or
    overlaps."""

    def body() -> int:
        from jxinspect.lint.shards import merge, read_part

        result = merge([(str(path), read_part(path)) for path in parts])
        emit(render(result, format, use_color(color, output)), output)
        return result.exit_code(exit_zero)

    run_command(body, show_traceback)
