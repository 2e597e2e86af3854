"""The ``jxinspect`` command: a thin layer over :mod:`jxinspect.api`.

Payload goes to stdout (or ``-o FILE``), diagnostics to stderr, colour only on a
terminal. Importing this module does not import JAX, so ``--help`` stays fast.
"""

from __future__ import annotations

import enum
import sys
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Optional

import typer

from jxinspect import __version__
from jxinspect.errors import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK, JxError, UsageError
from jxinspect.model import SEVERITY_RANK
from jxinspect.options import TargetOptions

app = typer.Typer(
    name="jxinspect",
    help="See what a JAX program became: parameter names, result paths, shardings, "
    "and where JAX dropped them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(str, enum.Enum):
    text = "text"
    json = "json"


class Stage(str, enum.Enum):
    jit = "jit"
    pjit = "pjit"
    pmap = "pmap"
    shard_map = "shard_map"


class Partitioner(str, enum.Enum):
    shardy = "shardy"
    gspmd = "gspmd"


class Platform(str, enum.Enum):
    cpu = "cpu"
    gpu = "gpu"
    tpu = "tpu"


class Show(str, enum.Enum):
    jaxpr = "jaxpr"
    mlir = "mlir"


class FailOn(str, enum.Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


class Color(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


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


def _ints(flag: str, text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    from jxinspect.spec import SpecError, parse_int_tuple

    try:
        return parse_int_tuple(text)
    except SpecError as err:
        raise UsageError(f"--{flag}: {err}") from None


def _names(flag: str, text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    from jxinspect.spec import SpecError, parse_name_tuple

    try:
        return parse_name_tuple(text)
    except SpecError as err:
        raise UsageError(f"--{flag}: {err}") from None


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot write {output}: {err.strerror}") from None


def _use_color(color: Color, output: Path | None) -> bool:
    if color is Color.always:
        return True
    return color is Color.auto and output is None and sys.stdout.isatty()


def _fails(severities: Iterable[str], fail_on: FailOn) -> bool:
    if fail_on is FailOn.never:
        return False
    return any(SEVERITY_RANK[s] >= SEVERITY_RANK[fail_on.value] for s in severities)


def _run(body: Callable[[], int], show_traceback: bool) -> None:
    """Run a command body; errors become one line on stderr and their exit code."""
    try:
        code = body()
    except JxError as err:
        if show_traceback:
            traceback.print_exc()
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(err.exit_code) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as err:  # a bug in jxinspect: say so, briefly
        if show_traceback:
            traceback.print_exc()
        typer.echo(
            f"internal error: {type(err).__name__}: {err} (rerun with --traceback and report it)",
            err=True,
        )
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(code)


TracebackOpt = Annotated[
    bool, typer.Option("--traceback", help="Show the full Python traceback on errors.")
]


@app.command()
def lower(
    target: Annotated[str, typer.Argument(help="module:function or path/to/file.py:function")],
    args: Annotated[Optional[str], typer.Option(help='Example inputs: "f32[8,128], 3".')] = None,
    kwargs: Annotated[Optional[str], typer.Option(help='Keyword inputs: "scale=2.0".')] = None,
    args_from: Annotated[
        Optional[str], typer.Option(help="module:function returning args or (args, kwargs).")
    ] = None,
    stage: Annotated[Optional[Stage], typer.Option(help="Staging API (default jit).")] = None,
    static_argnums: Annotated[Optional[str], typer.Option(help='e.g. "1" or "0,2".')] = None,
    static_argnames: Annotated[Optional[str], typer.Option(help='e.g. "n,mode".')] = None,
    donate_argnums: Annotated[Optional[str], typer.Option()] = None,
    donate_argnames: Annotated[Optional[str], typer.Option()] = None,
    keep_unused: Annotated[
        Optional[bool], typer.Option("--keep-unused", help="Keep unused arguments in @main.")
    ] = None,
    devices: Annotated[
        Optional[int], typer.Option(min=1, help="Simulate N CPU devices.")
    ] = None,
    mesh: Annotated[Optional[str], typer.Option(help='Mesh axes: "data=2,model=4".')] = None,
    in_specs: Annotated[
        Optional[str], typer.Option(help="Input shardings (jit/pjit) or shard_map in_specs.")
    ] = None,
    out_specs: Annotated[Optional[str], typer.Option(help="Output shardings or specs.")] = None,
    axis_name: Annotated[Optional[str], typer.Option(help="pmap axis name.")] = None,
    in_axes: Annotated[Optional[str], typer.Option(help='pmap in_axes: "0, None".')] = None,
    static_broadcasted_argnums: Annotated[Optional[str], typer.Option()] = None,
    abstract: Annotated[
        Optional[bool], typer.Option("--abstract", help="Use an AbstractMesh (no devices).")
    ] = None,
    platform: Annotated[
        Optional[Platform], typer.Option(help="Lower for this platform.")
    ] = None,
    partitioner: Annotated[Optional[Partitioner], typer.Option()] = None,
    explicit: Annotated[
        Optional[bool], typer.Option("--explicit", help="Explicit-sharding mesh axes.")
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.text,
    output: Annotated[Optional[Path], typer.Option("--output", "-o")] = None,
    show: Annotated[
        Optional[list[Show]], typer.Option(help="Also print the jaxpr or the StableHLO.")
    ] = None,
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 on findings this severe.")] = FailOn.never,
    color: Annotated[Color, typer.Option()] = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Stage a function and report each argument's name, each result's path, the shardings,
    and every place JAX dropped or degraded that debug info."""

    def body() -> int:
        given = TargetOptions(
            args=args,
            kwargs=kwargs,
            args_from=args_from,
            stage=stage.value if stage else None,
            static_argnums=_ints("static-argnums", static_argnums),
            static_argnames=_names("static-argnames", static_argnames),
            donate_argnums=_ints("donate-argnums", donate_argnums),
            donate_argnames=_names("donate-argnames", donate_argnames),
            keep_unused=keep_unused,
            devices=devices,
            mesh=mesh,
            in_specs=in_specs,
            out_specs=out_specs,
            axis_name=axis_name,
            in_axes=in_axes,
            static_broadcasted_argnums=_ints(
                "static-broadcasted-argnums", static_broadcasted_argnums
            ),
            partitioner=partitioner.value if partitioner else None,
            platform=platform.value if platform else None,
            abstract=abstract,
            explicit=explicit,
        )
        from jxinspect.api import inspect_target

        report = inspect_target(target, given, keep_texts=bool(show))
        if format is Format.json:
            from jxinspect.render import json as json_render

            text = json_render.render(report)
        else:
            from jxinspect.render import text as text_render

            text = text_render.render(report, color=_use_color(color, output))
        if show and format is Format.text:
            from jxinspect.render import ir

            for what in show:
                text += f"\n── {what.value} ──\n" + ir.render(report, what.value)
        _emit(text, output)
        severities = [f.severity for f in report.findings]
        return EXIT_FINDINGS if _fails(severities, fail_on) else EXIT_OK

    _run(body, show_traceback)


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

    _run(body, False)


def main() -> None:
    """Console-script entry point."""
    app()
