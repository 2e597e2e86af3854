"""What the forward pass keeps for the backward pass, read from the traced program.

Where a function differentiates (``jax.grad`` inside a train step), its jaxpr holds the
forward pass (equations under ``jvp(``) and the backward pass (under ``transpose(``): the
values the backward equations read that the forward pass made, or that are the
function's inputs, are the residuals ``jax.ad_checkpoint.print_saved_residuals`` lists,
each named as it names them: an argument by its pytree path, a ``checkpoint_name`` by its
name, an operation's output by its primitive and the user's line (the innermost frame in
the user's files, the library's beside it: :mod:`.frames`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from jxinspect.core.dtypes import element_bytes
from jxinspect.core.model import Offload, Recomputed, Report, Residual
from jxinspect.core.units import type_text
from jxinspect.tracer import seam
from jxinspect.tracer.read import frames


def _shape(aval: Any) -> tuple[tuple[int, ...], str]:
    return tuple(int(d) for d in getattr(aval, "shape", ())), str(getattr(aval, "dtype", "?"))


def _bytes(shape: tuple[int, ...], dtype: str) -> int:
    return math.ceil(math.prod(shape) * element_bytes(dtype))


def _placed(at: frames.UserLine) -> tuple[str | None, int | None, str | None, int | None]:
    """The user's file and line, then the library's (the fields' order)."""
    return at.file, at.line, at.library_file, at.library_line


def read_residuals(jaxpr: Any, report: Report) -> tuple[Residual, ...] | None:
    """The residuals of ``jaxpr`` (the top level of the traced program), in the order the
    backward pass first reads them (``()``: it does not differentiate); ``None`` where the
    release's jaxprs do not say which pass an equation is in. ``report``: the inputs'
    paths."""
    if not seam.names_transformations():
        return None
    paths = {i: leaf.path for i, leaf in enumerate(report.inputs)}
    positions = {var: i for i, var in enumerate(jaxpr.invars)}
    found = []
    for var, aval, eqn, named in seam.residual_parts(jaxpr):
        shape, dtype = _shape(aval)
        size, typed = _bytes(shape, dtype), type_text(shape, dtype)
        if eqn is None:
            found.append(Residual(typed, size, "argument", paths.get(positions[var])))
            continue
        at = frames.of_equation(eqn)
        if named is not None:
            found.append(Residual(typed, size, "named", named, *_placed(at)))
        else:
            found.append(Residual(typed, size, "output", str(eqn.primitive.name), *_placed(at)))
    return tuple(found)


def read_offloads(jaxpr: Any) -> tuple[Offload, ...]:
    """What the top level of the traced program ``jaxpr`` moves to host memory."""
    found = []
    for eqn, kind, named in seam.host_transfers(jaxpr):
        for var in eqn.invars[:1]:
            shape, dtype = _shape(var.aval)
            at = frames.of_equation(eqn)
            found.append(Offload(
                type_text(shape, dtype), _bytes(shape, dtype), kind, named, *_placed(at),
            ))  # fmt: skip
    return tuple(found)


def with_offloads(report: Report, jaxpr: Any) -> Report:
    """``report`` (compiled) with what its traced program ``jaxpr`` moves to host memory."""
    if report.compiled is None:
        return report
    return replace(report, compiled=replace(report.compiled, offloads=read_offloads(jaxpr)))


def read_recomputed(jaxpr: Any) -> tuple[Recomputed, ...]:
    """What the checkpoints of the traced program ``jaxpr`` run again in its backward
    pass: each value an operation of theirs makes there (a ``checkpoint_name``'s by its
    name), in order."""
    found = []
    for eqn, looped in seam.recomputed_parts(jaxpr):
        at = frames.of_equation(eqn)
        named = str(eqn.params.get("name")) if eqn.primitive.name == "name" else None
        for var in eqn.outvars:
            shape, dtype = _shape(var.aval)
            found.append(Recomputed(
                type_text(shape, dtype), _bytes(shape, dtype), str(eqn.primitive.name), named,
                at.file, at.line, looped, at.library_file, at.library_line,
            ))  # fmt: skip
    return tuple(found)


def with_residuals(report: Report, jaxpr: Any) -> Report:
    """``report`` (compiled) with the residuals of its traced program ``jaxpr``, and what
    its checkpoints recompute instead."""
    if report.compiled is None:
        return report
    kept, recomputed = read_residuals(jaxpr, report), read_recomputed(jaxpr)
    return replace(report, compiled=replace(report.compiled, residuals=kept,
                                            recomputed=recomputed))  # fmt: skip
