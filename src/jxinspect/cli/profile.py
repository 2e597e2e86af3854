"""``jxinspect profile``: compile one function as ``lower --compile`` does, run it on
random inputs of its own arguments under JAX's profiler, and say where a step's time goes
by the user's line and by collective."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from jxinspect.cli.common import TracebackOpt, emit, render_report, run_command
from jxinspect.cli.progress import progress_on_terminal
from jxinspect.cli.staging import NO_FLAGS, Flags, with_staging_flags
from jxinspect.core.errors import EXIT_OK
from jxinspect.project.options import options_from_flags
from jxinspect.project.targets import user_prints_to_stderr


@with_staging_flags
def profile(
    target: Annotated[str, typer.Argument(help="module:function or path/to/file.py:function")],
    staging: Flags = NO_FLAGS,
    steps: Annotated[int, typer.Option("--steps", min=1, help="Steps measured.")] = 10,
    warmup: Annotated[
        int, typer.Option("--warmup", min=0, help="Steps run first, not measured.")
    ] = 2,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            help="Keep the profiler's trace in DIR, in XProf's layout "
            "(DIR/plugins/profile/RUN/HOST.xplane.pb: xprof, TensorBoard, Perfetto).",
        ),
    ] = None,  # fmt: skip
    format: Annotated[
        Literal["text", "json", "html"],
        typer.Option(
            "--format", "-f", help="text, json, or html (a timeline of one step by line)."
        ),
    ] = "text",
    show_traceback: TracebackOpt = False,
) -> None:
    """Compile a function, run it on random inputs of its arguments' shapes, dtypes and
    shardings (fresh ones for donated arguments) under JAX's profiler, and report the step
    time and where it goes: by the user's line, by instruction and by collective."""

    def body() -> int:
        from jxinspect.pipeline import inspect_target
        from jxinspect.project.config import project_config
        from jxinspect.project.resolve import resolve
        from jxinspect.tracer.read.profile import Measure

        config = project_config()
        resolved = resolve(target, options_from_flags(staging), config)
        with user_prints_to_stderr(), progress_on_terminal(format):
            report = inspect_target(resolved, compile=True, policy=config.policy,
                                    measure=Measure(steps, warmup, output))  # fmt: skip
        if format != "text":
            emit(render_report(report, format, (), False, None), None)
            return EXIT_OK
        emit(render_report(report, "text", (), False, None), None)  # the measured part last
        return EXIT_OK

    run_command(body, show_traceback, stages_here=True)
