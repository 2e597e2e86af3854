"""Equinox's ``eqx.filter_jit``: array leaves are traced, every other leaf is static.

The wrapper binds the call to the function's signature, splits the first argument and the
rest into dynamic leaves (``None`` for static ones) and a static part, and calls its
inner ``jax.jit`` with ``(dynamic_donate, dynamic_nodonate, static)``: JAX names the
leaves ``dynamic_donate['rest'][3]`` (flat positions, not paths).

Equinox treats only real arrays as dynamic; jxinspect's abstract inputs
(``ShapeDtypeStruct``) are given as NumPy arrays that allocate nothing
(:func:`seam.stand_in_array`).
"""

from __future__ import annotations

from typing import Any

from equinox import _jit

from jxinspect.errors import UsageError
from jxinspect.tracer import seam
from jxinspect.tracer.adapters import Adapted

WRAPPER = "eqx.filter_jit"


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
    return Adapted(WRAPPER, fun.__wrapped__, traced, leaves, args, kwargs)
