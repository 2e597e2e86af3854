"""``jxinspect diff-debug BEFORE AFTER``: what changed in names, result paths, shardings and
donation between two versions of a program, and exit 1 when it got worse.

Importing this module does not import JAX; staging (both sides, one process) does.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from jxinspect.cliutil import (
    Color,
    FailOn,
    Partitioner,
    Platform,
    Stage,
    TracebackOpt,
    emit,
    ints,
    names,
    run_command,
    use_color,
)
from jxinspect.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from jxinspect.options import TargetOptions, nearest

SIDE_HELP = "A .py file, module:function, file.py:function, a saved .json report or a .mlir file."


class DiffFormat(str, enum.Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


def allowed_classes(values: list[str] | None) -> frozenset[str]:
    """``--allow sharding --allow donation,pruned`` → the change classes, checked."""
    from jxinspect.diff import CHANGE_CLASSES

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


def diff_debug(
    before: Annotated[str, typer.Argument(help=SIDE_HELP)],
    after: Annotated[str, typer.Argument(help=SIDE_HELP)],
    function: Annotated[
        Optional[list[str]],
        typer.Option("--function", help="Compare this function of the .py files (repeatable)."),
    ] = None,
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
    devices: Annotated[Optional[int], typer.Option(min=1, help="Simulate N CPU devices.")] = None,
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
    platform: Annotated[Optional[Platform], typer.Option(help="Lower for this platform.")] = None,
    partitioner: Annotated[Optional[Partitioner], typer.Option()] = None,
    explicit: Annotated[
        Optional[bool], typer.Option("--explicit", help="Explicit-sharding mesh axes.")
    ] = None,
    format: Annotated[DiffFormat, typer.Option("--format", "-f")] = DiffFormat.text,
    output: Annotated[Optional[Path], typer.Option("--output", "-o")] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option(
            help="Exit 1 on regressions this severe (lost or degraded names "
            "and paths, sharding changes and dropped donation are errors)."
        ),
    ] = FailOn.error,
    allow: Annotated[
        Optional[list[str]],
        typer.Option(
            help="Accept a class of change: name, path, sharding, donation, pruned, "
            "nested, finding, stage... (repeatable, or comma-separated)."
        ),
    ] = None,
    color: Annotated[Color, typer.Option()] = Color.auto,
    show_traceback: TracebackOpt = False,
) -> None:
    """Compare two versions of a program (Python, target, saved report or StableHLO): names
    lost or degraded, result paths, shardings, donation, pruning and findings; exit 1 on a
    regression at or above --fail-on."""

    def body() -> int:
        from jxinspect.diff import DiffReport, Policy, diff_reports
        from jxinspect.sources import load_reports

        policy = Policy(
            fail_on=None if fail_on is FailOn.never else fail_on.value,
            allow=allowed_classes(allow),
        )
        given = TargetOptions(
            args=args,
            kwargs=kwargs,
            args_from=args_from,
            stage=stage.value if stage else None,
            static_argnums=ints("static-argnums", static_argnums),
            static_argnames=names("static-argnames", static_argnames),
            donate_argnums=ints("donate-argnums", donate_argnums),
            donate_argnames=names("donate-argnames", donate_argnames),
            keep_unused=keep_unused,
            devices=devices,
            mesh=mesh,
            in_specs=in_specs,
            out_specs=out_specs,
            axis_name=axis_name,
            in_axes=in_axes,
            static_broadcasted_argnums=ints(
                "static-broadcasted-argnums", static_broadcasted_argnums
            ),
            partitioner=partitioner.value if partitioner else None,
            platform=platform.value if platform else None,
            abstract=abstract,
            explicit=explicit,
        )
        pairs = load_reports(before, after, given, tuple(function or ()))
        diff = DiffReport(
            before=before,
            after=after,
            targets=tuple(diff_reports(old, new, pair.name) for pair, old, new in pairs),
            policy=policy,
        )
        if format is DiffFormat.json:
            from jxinspect.render import diff_json

            text = diff_json.render(diff)
        elif format is DiffFormat.markdown:
            from jxinspect.render import diff_markdown

            text = diff_markdown.render(diff)
        else:
            from jxinspect.render import diff_text

            text = diff_text.render(diff, color=use_color(color, output))
        emit(text, output)
        return EXIT_FINDINGS if diff.failed else EXIT_OK

    run_command(body, show_traceback)
