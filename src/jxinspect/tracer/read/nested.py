"""Walk every jaxpr nested in equation parameters and grade its debug info."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jxinspect.core.model import NestedJaxpr, NestedQuality
from jxinspect.tracer.seam import debug_info, sub_jaxprs


def grade(jaxpr: Any, where: str, primitive: str) -> NestedJaxpr:
    """The debug-info quality of one jaxpr."""
    info = debug_info(jaxpr)
    n_in, n_out = len(jaxpr.invars), len(jaxpr.outvars)
    if info is None:
        return NestedJaxpr(where, primitive, "missing", num_invars=n_in, num_outvars=n_out)
    names, paths = info.arg_names, info.result_paths
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
        result_paths=paths,
        num_invars=n_in,
        num_outvars=n_out,
    )


def walk(jaxpr: Any, prefix: str = "") -> Iterator[NestedJaxpr]:
    """Every nested jaxpr, depth first, with its place (``3:scan.jaxpr/0:pjit.jaxpr``)."""
    for i, eqn in enumerate(jaxpr.eqns):
        name = eqn.primitive.name
        for label, sub in sub_jaxprs(eqn.params):
            where = f"{prefix}{i}:{name}.{label}"
            yield grade(sub, where, name)
            yield from walk(sub, where + "/")
