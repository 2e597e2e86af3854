"""A recorded ``jit`` call written as options in the spec language, so that
``jxinspect lower TARGET --args-from-record FOLDER/NAME`` stages the function again with
the inputs the run gave it, without the run.

Arrays become their abstract form (``f32[32@data,16]``: dtype, shape, and the mesh axes
of a ``NamedSharding``), Python values stay literals (static arguments included),
tuples, lists and dicts keep their structure, and NamedTuples and dataclasses are
written as their class's import path called with their fields
(``optax._src.transform.ScaleByAdamState(count=i32[], mu=..., nu=...)``). ``jit``'s own
input and output shardings become the options of those roles (``in_layout``,
``out_layout`` in the option table). What the
spec language cannot write (another custom pytree node, a class defined inside a
function, a PRNG key array) makes the call not replayable, with the reason; the text
written is parsed back before it is kept.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, cast

from jxinspect.project import spec
from jxinspect.project.options import OPTIONS, Role
from jxinspect.project.plan import role_option
from jxinspect.tracer import seam


class Unwritable(Exception):
    """A value the spec language cannot write."""


class _Writer:
    def __init__(self) -> None:
        self.mesh: tuple[tuple[str, int], ...] | None = None

    def tree(self, tree: Any, where: str, depth: int, leaf: Callable[[Any, str, int], str]) -> str:
        """A tuple, list or dict as the spec language writes it, each item by
        ``leaf(item, where, depth)``."""
        if depth > spec.MAX_DEPTH:
            raise Unwritable(f"{where} is nested deeper than {spec.MAX_DEPTH}")
        if type(tree) in (tuple, list):
            items = [leaf(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(tree)]
            if isinstance(tree, list):
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        keys = list(tree)
        if not (all(type(k) is str for k in keys) or all(type(k) is int for k in keys)):
            raise Unwritable(f"{where} is a dict whose keys are not all strings or all ints")
        return "{" + ", ".join(
            f"{k!r}: {leaf(v, f'{where}[{k!r}]', depth + 1)}" for k, v in tree.items()
        ) + "}"  # fmt: skip

    def value(self, value: Any, where: str, depth: int = 0) -> str:
        if type(value) in (tuple, list, dict):
            return self.tree(value, where, depth, self.value)
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
        if seam.is_array_leaf(value):
            return self.array(value, where)
        fields = _struct_fields(value)
        if fields is not None:
            path = _import_path(type(value), where)
            return f"{path}(" + ", ".join(
                f"{k}={self.value(v, f'{where}.{k}', depth + 1)}" for k, v in fields
            ) + ")"  # fmt: skip
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
            self.use_mesh(seam.mesh_axes(jax_mesh), where)
            entries = tuple(pspec) + (None,) * (len(shape) - len(tuple(pspec)))
            axes = tuple(
                () if e is None else (e,) if isinstance(e, str) else tuple(e) for e in entries
            )
        elif len(getattr(getattr(value, "sharding", None), "device_set", ())) > 1:
            raise Unwritable(f"{where} is laid out over several devices without a named mesh")
        return str(spec.ArraySpec(dtype, shape, axes))

    def sharding(self, value: Any, where: str) -> str:
        """A ``NamedSharding`` as ``P(...)`` (its mesh the arguments' own), ``None`` as
        ``None``."""
        if value is None or seam.is_unspecified(value):
            return "None"
        found = seam.sharding_of_leaf(value)
        if found is None:
            raise Unwritable(f"{where} is a {type(value).__name__}, not a NamedSharding")
        pspec, jax_mesh = found
        self.use_mesh(seam.mesh_axes(jax_mesh), where)
        return str(spec.PSpec(tuple(
            e if e is None or isinstance(e, str) else tuple(e) for e in tuple(pspec)
        )))  # fmt: skip

    def use_mesh(self, mesh: tuple[tuple[str, int], ...], where: str) -> None:
        if self.mesh is not None and mesh != self.mesh:
            raise Unwritable(f"{where} is sharded over another mesh than the arguments before")
        self.mesh = mesh

    def layout(self, tree: Any, where: str, depth: int = 0) -> str:
        """A tree of shardings, as ``jit`` took it (one, a tuple, or a tree per argument)."""
        if type(tree) in (tuple, list, dict):
            return self.tree(tree, where, depth, self.layout)
        return self.sharding(tree, where)


def _option_name(role: str) -> str:
    """The option that plays ``role`` under ``jit``, from the one option table."""
    option = role_option("jit", cast(Role, role))
    assert option is not None, role
    return option.name


def _struct_fields(value: Any) -> list[tuple[str, Any]] | None:
    """A NamedTuple's or a pytree dataclass's fields by name (``None``: neither)."""
    import dataclasses

    names: Any = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and names is not None:
        return list(zip(names, value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not seam.is_pytree_node(value):
            return None  # a leaf to JAX: not an argument jit takes apart
        return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value) if f.init]
    return None


def _import_path(cls: type, where: str) -> str:
    """``optax._src.transform.ScaleByAdamState``: where the class can be imported from."""
    import sys

    path = f"{cls.__module__}.{cls.__qualname__}"
    found: Any = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    if found is not cls or cls.__module__ == "__main__":
        raise Unwritable(
            f"{where} is a {cls.__qualname__}, which cannot be imported by its path {path} "
            "(defined inside a function, or in the script run as __main__)"
        )
    return path


_CALL_ROLES = ("statics", "static_names", "donated")
"""What a recorded call's ``jit_info`` says and a declaration repeats (donated names are
among its donated positions already)."""


def call_options(call: seam.JitCall) -> dict[str, Any]:
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
    options: dict[str, Any] = {"args": args}
    if kwargs:
        options["kwargs"] = kwargs
    layouts = seam.jit_layouts(call.jit_info)
    for role, tree in layouts.items():
        if role == "in_layout":  # one per positional argument, as the option reads them
            each = tree if type(tree) is tuple else (tree,) * len(call.args)
            written = ", ".join(writer.layout(t, f"input sharding {i}") for i, t in enumerate(each))
        else:
            written = writer.layout(tree, "output sharding")
        options[_option_name(role)] = written
    try:
        spec.parse_args(args)
        spec.parse_kwargs(kwargs)
        for role in layouts:
            spec.parse_specs(options[_option_name(role)])
    except spec.SpecError as err:
        raise Unwritable(f"the written call does not read back: {err}") from None
    for option in OPTIONS:  # the statics and donation jit resolved (names and positions)
        if option.role in _CALL_ROLES and "jit" in option.stages:
            value = getattr(call.jit_info, option.name, None)
            if value:
                options[option.name] = list(value)
    if writer.mesh:
        options["mesh"] = ",".join(f"{name}={size}" for name, size in writer.mesh)
        options["devices"] = math.prod(size for _, size in writer.mesh)
    return options
