"""The ``jxinspect`` command: a thin layer over :mod:`jxinspect.pipeline`.

Payload goes to stdout (or ``-o FILE``), diagnostics to stderr, colour only on a
terminal. Importing this module does not import JAX, so ``--help`` stays fast; a run of
one command imports and builds that command only (``--help`` and an unknown name build
them all).
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Annotated, Any

import typer

from jxinspect._version import __version__
from jxinspect.cli.common import run_command
from jxinspect.core.errors import EXIT_INTERRUPTED, EXIT_OK, UsageError
from jxinspect.render.common.escape import text as one_line

COMMANDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "lower": ("jxinspect.cli.lower", "lower", {}),
    "explain": ("jxinspect.cli.app", "explain", {}),
    "diff-debug": ("jxinspect.cli.diff", "diff_debug", {}),
    "lint": ("jxinspect.cli.lint", "lint", {}),
    "lint-merge": ("jxinspect.cli.lint", "lint_merge", {}),
    "record": ("jxinspect.cli.record", "record",
               {"context_settings": {"allow_interspersed_args": False}}),
    "show": ("jxinspect.cli.record", "show", {}),
}  # fmt: skip
"""Each command's name, where its function is, and how it is registered, in ``--help``'s
order."""


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

    def body() -> int:
        from jxinspect.project.options import nearest
        from jxinspect.rules import RULES_BY_CODE

        rule = RULES_BY_CODE.get(code.upper())
        if rule is None:
            codes = sorted(RULES_BY_CODE)
            raise UsageError(
                f"unknown code {code!r}{nearest(code.upper(), codes)}; known: {', '.join(codes)}"
            )
        typer.echo(f"{rule.code} ({rule.severity}): {rule.summary}\n\n{rule.explanation}")
        return EXIT_OK

    run_command(body, False)


def make_app(names: list[str] | None = None) -> typer.Typer:
    """The command line with the ``names`` commands (default: all)."""
    app = typer.Typer(
        name="jxinspect",
        help="See what a JAX program became: parameter names, result paths, shardings, "
        "and where JAX dropped them.",
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for name in names or list(COMMANDS):
        module, function, settings = COMMANDS[name]
        app.command(name, **settings)(getattr(importlib.import_module(module), function))
    return app


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
        named = [argv[0]] if argv[0] in COMMANDS else None
        code = make_app(named)(args=argv, standalone_mode=False)
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
