"""``jxinspect record -o FOLDER -- COMMAND`` and ``jxinspect show PATH``.

Importing this module does not import JAX; ``record`` never does (the run does), and
``show`` reads saved reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from jxinspect.cli.common import (
    FORMAT_HELP,
    SAVED_VIEWS,
    Color,
    ColorOpt,
    Format,
    OutputOpt,
    SavedShow,
    TracebackOpt,
    emit,
    render_report,
    run_command,
    use_color,
    views,
)
from jxinspect.core import interrupts
from jxinspect.core.errors import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USER_CODE,
    UsageError,
    releases,
)
from jxinspect.core.model import fails, gate
from jxinspect.core.recording import Index, Recording, Tally, several_programs
from jxinspect.core.vocabulary import VIEWS, FailOn, either
from jxinspect.record import folder as records
from jxinspect.record.processes import is_multi_process
from jxinspect.render import formats

if TYPE_CHECKING:
    from jxinspect.project.config import Policy

ProcessesOpt = Annotated[
    Optional[int],
    typer.Option(
        "--processes",
        min=1,
        help="Start N processes of the command on this machine, each with "
        "JAX_COORDINATOR_ADDRESS (127.0.0.1), JAX_NUM_PROCESSES and JAX_PROCESS_ID set, "
        "each recorded into FOLDER/process-K; stop the rest when one fails.",
    ),
]
MaxCompilesOpt = Annotated[
    Optional[int],
    typer.Option(
        "--max-compiles",
        min=1,
        help="Exit 1 after the run when a function of yours compiled more than N times: "
        "JX402 with that budget, each finding said, judged under the project's "
        "select/ignore, severity and fail_on as lint --records judges it; the run's own "
        "failure exit wins.",
    ),
]
MaxCompileSecondsOpt = Annotated[
    Optional[float],
    typer.Option(
        "--max-compile-seconds",
        min=0,
        help="Exit 1 after the run when a function of yours took more than S seconds to "
        "compile, all its compiles together (each named with its seconds and what the "
        "persistent cache did); the run's own failure exit wins.",
    ),
]
ProfileOpt = Annotated[
    Optional[int],
    typer.Option(
        "--profile",
        min=1,
        help="Measure the run's own first N calls of each recorded function (after the "
        "one that follows its compile) under JAX's profiler, by line and collective "
        "(compiles each, as --compile).",
    ),
]
GuardOpt = Annotated[
    bool,
    typer.Option(
        "--guard",
        help="In a run of several JAX processes, check at each compile that every process "
        "compiles the same program (through JAX's coordination service), and stop them "
        "all before it runs where one differs, naming the difference.",
    ),
]
GuardWaitOpt = Annotated[
    float,
    typer.Option(
        "--guard-wait",
        min=0.1,
        help="With --guard: seconds a process waits at a compile for the others to "
        "compile the same program before naming those that did not.",
    ),
]
TimeoutOpt = Annotated[
    Optional[float],
    typer.Option("--timeout", min=0.1, help="With --processes: stop them all after S seconds."),
]


def record(
    command: Annotated[
        Optional[list[str]],
        typer.Argument(help="The command to run, after --: python train.py --steps 2"),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Folder for the records (replaced if one).")
    ] = Path("jxinspect-record"),
    only: Annotated[
        Optional[list[str]], typer.Option("--only", help="Record only this function (repeat).")
    ] = None,
    stop_after: Annotated[
        Optional[str],
        typer.Option("--stop-after", help="End the run once this function is recorded."),
    ] = None,
    max_functions: Annotated[
        Optional[int], typer.Option("--max-functions", min=1, help="Record at most N.")
    ] = None,
    compile: Annotated[
        bool, typer.Option("--compile", help="Also compile each: what XLA chose.")
    ] = False,
    profile: ProfileOpt = None,
    max_compiles: MaxCompilesOpt = None,
    max_compile_seconds: MaxCompileSecondsOpt = None,
    processes: ProcessesOpt = None,
    timeout: TimeoutOpt = None,
    guard: GuardOpt = False,
    guard_wait: GuardWaitOpt = 60.0,
    show_traceback: TracebackOpt = False,
) -> None:
    """Run a command unchanged and record every function of yours that JAX lowers in it,
    each as a report in FOLDER, with every compile's reasons and seconds. The run's
    output and exit code are its own. Under jax.distributed each process records into
    FOLDER/process-K."""

    def body() -> int:
        settings = records.RecordSettings(
            only=tuple(only or ()),
            stop_after=stop_after,
            max_functions=max_functions,
            compile=compile or profile is not None,
            guard=guard_wait if guard else None,
            profile=profile,
        )
        if processes is not None:
            return _record_processes(list(command or ()), output, settings, processes, timeout)
        if timeout is not None:
            raise UsageError("--timeout stops the processes --processes N starts: give both")
        budgets = (max_compiles, max_compile_seconds)
        return _record_one(list(command or ()), output, settings, budgets)

    run_command(body, show_traceback)


def _record_one(
    command: list[str],
    output: Path,
    settings: records.RecordSettings,
    budgets: tuple[Optional[int], Optional[float]],
) -> int:
    """``record``: the run recorded (into ``output``, or its processes' folders in it)."""
    from jxinspect.record import recording

    status, ended = recording.run(command, output, settings)
    for where, index in ended:
        _say_recorded(index, where)
    stopped_by = interrupts.stopped_by()
    if stopped_by is not None:  # what was recorded is said; the run ends with 128 + N
        typer.echo(
            f"jxinspect record: the command did not finish ({interrupts.signal_named(stopped_by)}"
            "); the recording is incomplete",
            err=True,
        )
        return status
    failed = next((index for _, index in ended if index.failed), None)
    if failed is not None and status == 0:  # the run succeeded; recording it did not
        return _recording_failed(failed)
    if not any(index.functions for _, index in ended) and status == 0:
        raise_no_records(ended[0][1], ended[0][0])
    max_compiles, max_seconds = budgets
    folders = [where for where, _ in ended]
    over_compiles = _over_compiles(folders, max_compiles)
    over = [line for where in folders for line in _over_seconds(where, max_seconds)]
    for line in over:
        typer.echo(f"error: {line}", err=True)
    return EXIT_FINDINGS if (over or over_compiles) and status == 0 else status


def _say_recorded(index: Index, output: Path) -> None:
    """The recording's summary on stderr, and a note for each function not recorded."""
    from jxinspect.render.record import summary as record_summary

    count = len(index.functions)
    typer.echo(
        f"jxinspect record: {count} function{'s' if count != 1 else ''} recorded in "
        f"{output}; {record_summary.run_line(index)} (see `jxinspect show {output}`)",
        err=True,
    )
    compiles, dropped = records.read_compiles(output)
    compiled = record_summary.compile_line(index, compiles, dropped)
    if compiled:
        typer.echo(f"jxinspect record: {compiled}", err=True)
    for line in record_summary.not_recorded(index):
        typer.echo(f"note: {line}", err=True)


def _record_processes(
    command: list[str],
    output: Path,
    settings: records.RecordSettings,
    count: int,
    timeout: Optional[float],
) -> int:
    """``record --processes N``: one line per process on stderr; the worst exit status."""
    from jxinspect.record import launch
    from jxinspect.render.record import summary as record_summary

    status, ended = launch.run_processes(command, output, settings, count, timeout)
    for where, index in ended:
        recorded = len(index.functions)
        typer.echo(
            f"jxinspect record: {recorded} function{'s' if recorded != 1 else ''} recorded in "
            f"{where}; {record_summary.run_line(index)}",
            err=True,
        )
    if status == launch.TIMED_OUT:
        typer.echo(f"error: --timeout {timeout:g}: the processes were stopped", err=True)
    typer.echo(f"jxinspect record: see `jxinspect show {output}`", err=True)
    return status


def _recording_failed(index: Index) -> int:
    """Say that lowerings of a run that succeeded could not be recorded: a bug of ours."""
    first = index.failures[0]
    typer.echo(
        f"error: internal error ({releases()}): {index.failed} lowering"
        f"{'s' if index.failed != 1 else ''} could not be recorded (first: "
        f"`{first.function}`: {first.error}); the run itself succeeded (rerun with "
        "--traceback in the recorded command's environment and report it)",
        err=True,
    )
    return EXIT_INTERNAL


def _over_compiles(folders: list[Path], most: int | None) -> bool:
    """``--max-compiles``: JX402 judged with that budget on the run's folders, under the
    project's policy as ``lint --records`` judges them; each finding said on stderr in the
    rule's words. Whether one fails the project's ``fail_on``."""
    if most is None:  # no budget: the rules are not loaded
        return False
    from jxinspect.project.config import DEFAULT_FAIL_ON, project_config
    from jxinspect.record.judged import compile_budget, judged_records
    from jxinspect.render.common.escape import text as esc
    from jxinspect.render.common.source import source_text

    config = project_config()
    policy = compile_budget(config.policy, most)
    found = [f for where in folders for _, report in judged_records(where, policy)
             for f in report.findings]  # fmt: skip
    for f in found:
        where = source_text(f.file, f.line)
        said = f"{esc(where)}: " if where else ""
        typer.echo(f"{f.severity}: {said}{f.code} {esc(f.message)}", err=True)
    return gate(found, config.fail_on or DEFAULT_FAIL_ON)


def _over_seconds(folder: Path, seconds: float | None) -> list[str]:
    """One line per function of the run whose compiles took more than ``seconds`` in all."""
    if seconds is None:
        return []
    from jxinspect.core.recompiles import by_function
    from jxinspect.render.common.escape import text as esc
    from jxinspect.render.record.recompiles import cache_said

    compiles, _ = records.read_compiles(folder)
    lines = []
    for found in by_function(compiles):
        if found.seconds > seconds:
            named = f"`{esc(found.function)}` ({esc(found.source or 'no source')})"
            said = f"{found.count} compiles; cache: {cache_said(found)}"
            budget = f"--max-compile-seconds {seconds:g}"
            lines.append(f"{named} took {found.seconds:.2f} s to compile ({said}), more "
                         f"than {budget} (jxinspect show {folder})")  # fmt: skip
    return lines


def raise_no_records(index: Index, output: Path) -> None:
    """A run that succeeded without recording anything is not a recording."""
    why = (
        f"every function was left out by --only ({index.not_selected} lowerings)"
        if index.not_selected
        else "the run lowered no function of its own: is it a Python program that "
        "imports JAX and calls a jit-compiled function?"
    )
    typer.echo(f"error: nothing recorded in {output}: {why}", err=True)
    raise typer.Exit(EXIT_USER_CODE)


_UNSAVED = either(tuple(view for view in VIEWS if view not in SAVED_VIEWS))


def show(
    path: Annotated[
        str,
        typer.Argument(help="A record folder, one function's folder in it, or a .json report."),
    ],
    format: Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: OutputOpt = None,
    show: Annotated[
        Optional[list[SavedShow]],
        typer.Option(
            help="Also draw sharding pictures (one function; a saved report keeps "
            f"no program text for {_UNSAVED})."
        ),
    ] = None,
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 on findings this severe.")] = "never",
    color: ColorOpt = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Show a recording: a table of every recorded function, or one function's report."""

    def body() -> int:
        from jxinspect.pipeline import judge
        from jxinspect.project.config import project_config
        from jxinspect.record.judged import judged_function

        given = Path(path)
        policy = project_config().policy  # the one policy every reading is judged under
        if is_multi_process(given):
            return _show_processes(given, format, output, fail_on, policy)
        if records.is_record_folder(given):
            return _show_folder(given, format, output, fail_on, policy)
        if records.is_record(given):
            report = judged_function(given, policy)
        elif given.is_dir():
            raise UsageError(
                f"{path} is neither a record folder nor a recorded function's folder; "
                f"make one with `jxinspect record -o {path} -- python your_script.py`"
            )
        else:
            report = judge(records.read_report(path), policy)
        emit(render_report(report, format, views(show), use_color(color, output), None), output)
        return EXIT_FINDINGS if gate(report.findings, fail_on) else EXIT_OK

    run_command(body, show_traceback)


def _show_processes(
    folder: Path, format: Format, output: Optional[Path], fail_on: FailOn, policy: Policy
) -> int:
    """``show FOLDER`` of a recording of several processes: each function's program on
    every process, JX403 where they differ; gating, each process's functions judged too,
    as ``lint --records`` judges them."""
    from jxinspect.record.judged import judged_records
    from jxinspect.record.processes import process_folders
    from jxinspect.record.programs import processes_summary

    if format not in formats.PROCESSES.names:
        raise UsageError(
            f"--format {format}: a recording of several processes shows as "
            f"{' or '.join(formats.PROCESSES.names)}; give {folder}/process-K/FUNCTION "
            "for one function's report"
        )
    summary = processes_summary(folder, policy)
    emit(formats.PROCESSES.render(summary, format), output)
    if fail_on == "never":
        return EXIT_OK
    severities = [f.severity for f in summary.findings]
    for _, where in process_folders(folder):
        severities += [f.severity for _, r in judged_records(where, policy) for f in r.findings]
    return EXIT_FINDINGS if fails(severities, fail_on) else EXIT_OK


def _show_folder(
    folder: Path, format: Format, output: Optional[Path], fail_on: FailOn, policy: Policy
) -> int:
    from jxinspect.record.judged import judged_records

    if format not in formats.RECORD.names:
        raise UsageError(
            f"--format {formats.REPORT.format(format).name} shows one function: give "
            f"{folder}/FUNCTION (see `jxinspect show {folder}` for their folders)"
        )
    index = records.read_index(folder)
    several = several_programs(index.functions)
    read: dict[str, tuple[Tally, str | None]] = {}  # by folder: each read once
    for entry, report in judged_records(folder, policy, index):
        if entry.folder not in read:
            tally = Tally.of(report, entry.name in several)
            read[entry.folder] = tally, records.replay_problem(folder, entry)
    reports = tuple((entry, *read[entry.folder]) for entry in index.functions)
    compiles, dropped = records.read_compiles(folder)
    recording = Recording(str(folder), index, reports, tuple(compiles), dropped)
    emit(formats.RECORD.render(recording, format), output)
    severities = [s for _, tally, _ in reports for s in tally.gated]
    return EXIT_FINDINGS if fails(severities, fail_on) else EXIT_OK
