"""Walk every jaxpr nested in equation parameters and grade its debug info."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.model import NestedJaxpr, NestedQuality
from jxinspect.tracer import seam


def grade(jaxpr: seam.Jaxpr, where: str, primitive: str) -> NestedJaxpr:
    """The debug-info quality of one jaxpr."""
    info = seam.debug_info(jaxpr)
    n_in, n_out = seam.arity(jaxpr)
    if info is None:
        return NestedJaxpr(where, primitive, "missing", num_invars=n_in, num_outvars=n_out)
    names, paths = info.arg_names, info.result_paths
    if paths is not None and tuple(paths) == ("",) and not seam.result_paths_prefixed_in_release():
        paths = ("result",)  # before 0.5.3 a lone result's whole path is ""
    quality: NestedQuality = "ok"
    if (names is not None and len(names) != n_in) or (paths is not None and len(paths) != n_out):
        quality = "count_mismatch"
    elif names is None or paths is None or "" in names or "" in paths:
        quality = "partial"
    return NestedJaxpr(
        where=where,
        primitive=primitive,
        quality=quality,
        traced_for=info.traced_for,
        func_src_info=info.func_src_info,
        arg_names=names,
        result_paths=info.result_paths,
        num_invars=n_in,
        num_outvars=n_out,
    )


def walk(jaxpr: seam.Jaxpr, stage: str | None = None) -> Iterator[NestedJaxpr]:
    """Every nested jaxpr of the program ``stage`` staged, depth first, with its place
    (``3:scan.jaxpr/0:pjit.jaxpr``). A staged pmap's body (the older pmap's) is the
    program, not a jaxpr nested in it; an ``xla_pmap`` in any other program (a jit of a
    pmap, or of its jvp) is nested like any call."""
    body = seam.pmap_body(jaxpr) if stage == "pmap" else None
    yield from _walk(body if body is not None else jaxpr, "")


def _walk(jaxpr: seam.Jaxpr, prefix: str) -> Iterator[NestedJaxpr]:
    for i, eqn in enumerate(seam.equations(jaxpr)):
        for label, sub in eqn.nested:
            where = f"{prefix}{i}:{eqn.primitive}.{label}"
            yield grade(sub, where, eqn.primitive)
            yield from _walk(sub, where + "/")
