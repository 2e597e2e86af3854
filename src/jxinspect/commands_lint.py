"""``jxinspect lint``: the CI gate. A thin layer over :func:`jxinspect.lint.run_lint`.

The payload (in the chosen format) goes to stdout or ``-o FILE``; a progress bar and
diagnostics go to stderr, the bar only when stderr is a terminal. Imports no JAX.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from jxinspect.cliutil import Color, TracebackOpt, emit, run_command, use_color
from jxinspect.errors import UsageError
from jxinspect.render.escape import text as one_line
from jxinspect.vocabulary import FailOn


class LintFormat(str, enum.Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"


def codes(flag: str, text: str | None) -> tuple[str, ...] | None:
    """``"JX102,JX2"`` → code prefixes, each checked against the known rules."""
    if text is None:
        return None
    from jxinspect.checks import RULES
    from jxinspect.options import nearest

    known = tuple(rule.code for rule in RULES)
    result = []
    for item in filter(None, (part.strip().upper() for part in text.split(","))):
        if not item.startswith("JX") or not any(code.startswith(item) for code in known):
            raise UsageError(
                f"--{flag}: unknown code {item!r}{nearest(item, known)}; known: " + ", ".join(known)
            )
        result.append(item)
    return tuple(result)


def lint(
    paths: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="Files or folders to search for modules that declare JXINSPECT "
            "(added to the configured targets)."
        ),
    ] = None,
    config: Annotated[
        Optional[Path],
        typer.Option(help="jxinspect.yaml or pyproject.toml (default: found from here upward)."),
    ] = None,
    format: Annotated[LintFormat, typer.Option("--format", "-f")] = LintFormat.text,
    output: Annotated[Optional[Path], typer.Option("--output", "-o")] = None,
    select: Annotated[
        Optional[str], typer.Option(help='Run only these codes or prefixes: "JX1,JX201".')
    ] = None,
    ignore: Annotated[Optional[str], typer.Option(help='Skip these codes: "JX105".')] = None,
    fail_on: Annotated[
        Optional[FailOn], typer.Option(help="Exit 1 on new findings this severe (default error).")
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even with failing findings.")
    ] = False,
    baseline: Annotated[
        Optional[Path],
        typer.Option(help="Baseline file (default: as configured, or jxinspect-baseline.json)."),
    ] = None,
    write_baseline: Annotated[
        bool, typer.Option("--write-baseline", help="Record the current findings as accepted.")
    ] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes.")] = 1,
    timeout: Annotated[
        Optional[float],
        typer.Option(
            min=0,
            help="Seconds one target may take to stage; 0 for no limit "
            "(default: as configured, or 300).",
        ),
    ] = None,
    compile: Annotated[
        Optional[bool],
        typer.Option("--compile/--no-compile", help="Also compile (XLA's shardings, memory)."),
    ] = None,
    color: Annotated[Color, typer.Option()] = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Stage every configured or declared target and fail when debug info, shardings or
    memory budgets regress. Exit 0 clean, 1 new findings at or above --fail-on, 2 usage
    or configuration error, 3 a target failed (import, trace, exit, crash, timeout), 4
    internal error, 130 interrupted. --exit-zero covers findings, never failed targets."""

    def body() -> int:
        from jxinspect.lint import LintRequest, run_lint

        request = LintRequest(
            paths=tuple(paths or ()),
            config=config,
            select=codes("select", select),
            ignore=codes("ignore", ignore) or (),
            fail_on=fail_on,
            baseline=baseline,
            write_baseline=write_baseline,
            jobs=jobs,
            timeout=timeout,
            compile=compile,
            progress=sys.stderr.isatty(),
            traceback=show_traceback,
        )
        result = run_lint(request)
        if format is LintFormat.json:
            from jxinspect.render import lint_json

            text = lint_json.render(result)
        elif format is LintFormat.sarif:
            from jxinspect.render import sarif

            text = sarif.render(result)
        elif format is LintFormat.github:
            from jxinspect.render import github

            text = github.render(result)
        elif format is LintFormat.junit:
            from jxinspect.render import junit

            text = junit.render(result)
        else:
            from jxinspect.render import lint_text

            text = lint_text.render(result, color=use_color(color, output))
        emit(text, output)
        if write_baseline:
            size = result.baseline_size
            typer.echo(
                f"wrote {size} finding{'s' if size != 1 else ''} to the baseline "
                f"{one_line(result.baseline)}",
                err=True,
            )
        return result.exit_code(exit_zero)

    run_command(body, show_traceback)
