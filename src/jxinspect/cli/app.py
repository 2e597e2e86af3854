"""The ``jxinspect`` command: a thin layer over :mod:`jxinspect.pipeline`.

Payload goes to stdout (or ``-o FILE``), diagnostics to stderr, colour only on a
terminal. Importing this module does not import JAX, so ``--help`` stays fast; a run of
one command imports and builds that command only (``--help`` and an unknown name build
them all).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
from typing import Annotated, Any, NamedTuple, NoReturn

import typer

from jxinspect._version import __version__
from jxinspect.core import interrupts
from jxinspect.core.errors import EXIT_INTERRUPTED, EXIT_OK, UsageError


class Command(NamedTuple):
    """One command of the table."""

    module: str
    function: str
    summary: str
    """Its line in ``jxinspect --help``, whole at 80 columns (at most 60 characters; its
    own ``--help`` shows its docstring)."""
    settings: dict[str, Any] = {}


COMMANDS: dict[str, Command] = {
    "lower": Command("jxinspect.cli.lower", "lower",
                     "Stage a function; show the debug info JAX kept and dropped."),
    "profile": Command("jxinspect.cli.profile", "profile",
                       "Run a function's steps; measure time by line and path."),
    "explain": Command("jxinspect.cli.app", "explain",
                       "Say what a finding code means and how to fix or silence it."),
    "diff-debug": Command("jxinspect.cli.diff", "diff_debug",
                          "Compare two versions of a program; exit 1 on a regression."),
    "lint": Command("jxinspect.cli.lint", "lint",
                    "Stage every target; fail on lost names, shardings, budgets."),
    "lint-merge": Command("jxinspect.cli.lint", "lint_merge",
                          "Combine the parts of a lint run split with --shard K/N."),
    "record": Command("jxinspect.cli.record", "record",
                      "Run a command; record each function of yours JAX lowers.",
                      {"context_settings": {"allow_interspersed_args": False}}),
    "show": Command("jxinspect.cli.record", "show",
                    "Show a recording: every recorded function, or one's report."),
    "trend": Command("jxinspect.cli.trend", "trend",
                     "Show where each target's cost changed (lint --history)."),
    "survey": Command("jxinspect.cli.survey", "survey",
                      "What this JAX keeps, transformation by transformation."),
}  # fmt: skip
"""Each command's name, where its function is, its summary and how it is registered, in
``--help``'s order."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jxinspect {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """See what a JAX program became."""


def explain(
    code: Annotated[str, typer.Argument(help="A finding code such as JX102.")],
) -> None:
    """Say what a finding code means and how to fix or silence it."""

    from jxinspect.cli.common import run_command

    def body() -> int:
        from jxinspect.project.options import nearest
        from jxinspect.rules import EXPLAINED
        from jxinspect.rules.base import Rule

        rule = EXPLAINED.get(code.upper())
        if rule is None:
            codes = sorted(EXPLAINED)
            raise UsageError(
                f"unknown code {code!r}{nearest(code.upper(), codes)}; known: {', '.join(codes)}"
            )
        typer.echo(f"{rule.code} ({rule.severity}): {rule.summary}\n\n{rule.explanation}")
        if isinstance(rule, Rule) and rule.surveyed:
            from jxinspect.rules import advice

            said = advice.summary(rule.surveyed)
            if said:
                releases = ", ".join(s.jax_version for s in advice.shipped())
                typer.echo(f"\nBy the surveys shipped with jxinspect (JAX {releases}):")
                typer.echo("\n".join(f"  {line}" for line in said))
        return EXIT_OK

    run_command(body, False)


def _listed() -> None:
    """Stands for a command in ``jxinspect --help``, which lists the commands without
    importing them; a command line that names one builds the real one instead."""


def make_app(names: list[str] | None = None, *, listed: bool = False) -> typer.Typer:
    """The command line with the ``names`` commands (default: all); ``listed``: every
    command listed by its summary, none imported (``--help``, an unknown name)."""
    app = typer.Typer(
        name="jxinspect",
        help="See what a JAX program became: parameter names, result paths, shardings, "
        "and where JAX dropped them.",
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,  # click's help: wrapped at any width, never cut
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for name, command in COMMANDS.items():
        if listed:
            app.command(name, help=command.summary, **command.settings)(_listed)
        elif names is None or name in names:
            function = getattr(importlib.import_module(command.module), command.function)
            app.command(name, short_help=command.summary, **command.settings)(function)
    return app


def main() -> None:
    """Console-script entry point: usage errors become one ``error:`` line and exit 2;
    SIGINT and SIGTERM stop the run with one line and ``128 + N``, from the start."""
    interrupts.stop_on_signals()
    try:
        _main()
    except KeyboardInterrupt:  # a second signal while the run was stopping, say
        _stopped()
    finally:
        # what the run made lives until the process ends: out of the collector's way,
        # so the collections of the interpreter's shutdown do not walk it (15 ms of a
        # lint run)
        gc.freeze()


def _main() -> None:
    usage_error: type[Exception] = typer.BadParameter.__mro__[1]  # click's UsageError
    argv = sys.argv[1:] or ["--help"]
    try:
        gc.disable()  # importing the command's modules makes objects that live on: no
        try:  # collection walks them meanwhile (15-30 ms of every command's start)
            app = make_app([argv[0]]) if argv[0] in COMMANDS else make_app(listed=True)
        finally:
            gc.enable()
        code = app(args=argv, standalone_mode=False)
    except usage_error as err:
        from jxinspect.render.common.escape import text as one_line

        context = getattr(err, "ctx", None)
        where = f" (see `{context.command_path} --help`)" if context is not None else ""
        message = one_line(getattr(err, "format_message", err.__str__)())
        typer.echo(f"error: {message}{where}", err=True)
        sys.exit(int(getattr(err, "exit_code", 2)))
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if interrupts.stopped_by() is not None:  # stopped before a command's body ran
        _stopped()
    sys.exit(code if isinstance(code, int) else 0)


def _stopped() -> NoReturn:
    line = interrupts.stop_line()
    if line is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"{line}\n")
            sys.stderr.flush()
    sys.exit(interrupts.exit_status())
