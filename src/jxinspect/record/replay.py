"""A recorded ``jit`` call written as options in the spec language, so that
``jxinspect lower TARGET --args-from-record FOLDER/NAME`` stages the function again with
the inputs the run gave it, without the run.

Arrays become their abstract form (``f32[32@data,16]``: dtype, shape, and the mesh axes
of a ``NamedSharding``), Python values stay literals (static arguments included), and
tuples, lists and dicts keep their structure. What the spec language cannot write (a
custom pytree node, a library's model object, a PRNG key array) makes the call not
replayable, with the reason; the text written is parsed back before it is kept.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from jxinspect.project import spec
from jxinspect.project.options import OPTIONS
from jxinspect.tracer import seam


class Unwritable(Exception):
    """A value the spec language cannot write."""


class _Writer:
    def __init__(self) -> None:
        self.mesh: tuple[tuple[str, int], ...] | None = None

    def value(self, value: Any, where: str, depth: int = 0) -> str:
        if depth > spec.MAX_DEPTH:
            raise Unwritable(f"{where} is nested deeper than {spec.MAX_DEPTH}")
        if value is None or isinstance(value, (bool, str)):
            return repr(value)
        if isinstance(value, int):
            return repr(int(value))
        if isinstance(value, float):
            if not math.isfinite(value):
                raise Unwritable(f"{where} is {value}, which the spec language cannot write")
            return repr(float(value))
        if type(value) in (tuple, list):
            items = [self.value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
            if isinstance(value, list):
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if type(value) is dict:
            keys = list(value)
            if not (all(type(k) is str for k in keys) or all(type(k) is int for k in keys)):
                raise Unwritable(f"{where} is a dict whose keys are not all strings or all ints")
            return "{" + ", ".join(
                f"{k!r}: {self.value(v, f'{where}[{k!r}]', depth + 1)}" for k, v in value.items()
            ) + "}"  # fmt: skip
        if seam.is_array_leaf(value):
            return self.array(value, where)
        raise Unwritable(
            f"{where} is a {type(value).__name__}, which the spec language cannot write"
        )

    def array(self, value: Any, where: str) -> str:
        dtype = seam.staged_dtype(value) if hasattr(value, "dtype") else ""
        if dtype not in spec.SHORT_DTYPES.values():
            raise Unwritable(f"{where} has dtype {dtype}, which the spec language cannot write")
        shape = tuple(int(d) for d in value.shape)
        axes: tuple[tuple[str, ...], ...] = ()
        found = seam.sharding_of_leaf(value)
        if found is not None:
            pspec, jax_mesh = found
            mesh = seam.mesh_axes(jax_mesh)
            if self.mesh is not None and mesh != self.mesh:
                raise Unwritable(f"{where} is sharded over another mesh than the arguments before")
            self.mesh = mesh
            entries = tuple(pspec) + (None,) * (len(shape) - len(tuple(pspec)))
            axes = tuple(
                () if e is None else (e,) if isinstance(e, str) else tuple(e) for e in entries
            )
        elif len(getattr(getattr(value, "sharding", None), "device_set", ())) > 1:
            raise Unwritable(f"{where} is laid out over several devices without a named mesh")
        return str(spec.ArraySpec(dtype, shape, axes))


_CALL_ROLES = ("statics", "static_names", "donated")
"""What a recorded call's ``jit_info`` says and a declaration repeats (donated names are
among its donated positions already)."""


def call_options(call: seam.Call) -> dict[str, Any]:
    """The call as ``TargetOptions`` keys (a declaration's mapping); raises
    :class:`Unwritable` with the reason when it cannot be written."""
    bound = call.fun if isinstance(call.fun, functools.partial) else None
    if bound is not None and (bound.args or bound.keywords):
        raise Unwritable(
            "the jitted function is a functools.partial that binds values of its own, "
            "baked into the program; the call's arguments alone would stage another one"
        )
    writer = _Writer()
    args = ", ".join(writer.value(a, f"argument {i}") for i, a in enumerate(call.args))
    kwargs = ", ".join(f"{k}={writer.value(v, f'argument {k!r}')}" for k, v in call.kwargs.items())
    try:
        spec.parse_args(args)
        spec.parse_kwargs(kwargs)
    except spec.SpecError as err:
        raise Unwritable(f"the written call does not read back: {err}") from None
    options: dict[str, Any] = {"args": args}
    if kwargs:
        options["kwargs"] = kwargs
    for option in OPTIONS:  # the statics and donation jit resolved (names and positions)
        if option.role in _CALL_ROLES and "jit" in option.stages:
            value = getattr(call.jit_info, option.name, None)
            if value:
                options[option.name] = list(value)
    if writer.mesh:
        options["mesh"] = ",".join(f"{name}={size}" for name, size in writer.mesh)
        options["devices"] = math.prod(size for _, size in writer.mesh)
    return options
