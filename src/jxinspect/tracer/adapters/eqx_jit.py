"""Equinox's ``eqx.filter_jit``: array leaves are traced, every other leaf is static.

The wrapper binds the call to the function's signature, splits the first argument and the
rest into dynamic leaves (``None`` for static ones) and a static part, and calls its
inner ``jax.jit`` with ``(dynamic_donate, dynamic_nodonate, static)``: JAX names the
leaves ``dynamic_donate['rest'][3]`` (flat positions, not paths). The inner function
returns ``(marker, dynamic_out, Static(static_out))``: a scalar of its own, then the
user's result with its non-array leaves taken out, so the program's ``result[1][0].w`` is
the user's ``result[0].w``.

Equinox treats only real arrays as dynamic; jxinspect's abstract inputs
(``ShapeDtypeStruct``) are given as NumPy arrays that allocate nothing
(:func:`seam.stand_in_array`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from equinox import _jit

from jxinspect.core.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters.adapted import Adapted, unmapped

WRAPPER = "eqx.filter_jit"
MARKER = f"<{WRAPPER} marker>"
MARKER_NOTE = (
    f"result[0] of the program is {WRAPPER}'s own marker (a scalar it returns to wait on), "
    "not one of your results"
)


def matches(fun: Any) -> bool:
    return isinstance(fun, _jit._JitWrapper)


def stage(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Adapted:
    """Preprocess the call as ``eqx.filter_jit`` does and trace its inner ``jax.jit``."""
    preprocess = getattr(_jit, "_preprocess", None)
    inner: Any = getattr(fun, "_cached", None)
    if preprocess is None or not callable(getattr(inner, "trace", None)):
        raise UsageError(
            f"{WRAPPER} of this equinox release is not supported; "
            "stage the undecorated function (arrays are traced, other leaves static)"
        )
    args = tuple(seam.tree_map(seam.stand_in_array, a) for a in args)
    kwargs = {k: seam.tree_map(seam.stand_in_array, v) for k, v in kwargs.items()}
    info = (fun._signature, fun._dynamic_fun, fun._static_fun, fun.donate_first,
            fun.donate_rest)  # fmt: skip
    dynamic_donate, dynamic_nodonate, static = preprocess(info, args, kwargs, return_static=True)
    traced = inner.trace(dynamic_donate, dynamic_nodonate, static)
    leaves, _ = seam.tree_flatten((dynamic_donate, dynamic_nodonate))
    results = _result_paths(seam.out_info(traced))
    notes = (MARKER_NOTE if results is not None else unmapped(WRAPPER, "equinox"),)
    return Adapted(WRAPPER, fun.__wrapped__, traced, leaves, args, kwargs, notes, results)


def _result_paths(out_info: Any) -> list[str | None] | None:
    """The user's path of each result of ``(marker, dynamic_out, Static(static_out))``
    (:func:`user_results` of each leaf's path); ``None`` when the program returns
    something else."""
    if not isinstance(out_info, tuple) or len(out_info) != 3:
        return None
    if seam.tree_leaves(out_info[2]) or len(seam.tree_leaves(out_info[0])) != 1:
        return None
    return user_results(
        ["result" + seam.keystr(p) for p, _ in seam.tree_leaves_with_path(out_info)]
    )


def user_results(names: Sequence[str | None]) -> list[str | None] | None:
    """The user's path of each result of ``(marker, dynamic_out, Static(static_out))``,
    from its path in the program (staged here, or the name a recorded run's program
    carries): ``result[0]`` is the marker, and ``dynamic_out`` is the user's result with
    ``None`` for each non-array leaf, so ``result[1][0].w`` is the user's ``result[0].w``;
    ``None`` when the names are not those of that tuple."""
    if not names or names[0] != "result[0]":
        return None
    found: list[str | None] = [MARKER]
    for name in names[1:]:
        if name is None or not name.startswith(_OUT):
            return None
        found.append("result" + name.removeprefix(_OUT))
    return found


_OUT = "result[1]"
"""Where the user's result sits in what the inner function returns."""
