"""Jaxprs: their debug info, equations, nested jaxprs and abstract values.

* **Debug info**: ``JaxprDebugInfo`` in 0.4.x, ``DebugInfo`` later (``result_paths``
  computed lazily in some releases); :class:`DebugInfo` reads both alike.
* **Source lines**: ``source_info_util.user_frame`` takes a traceback, in 0.4.35 the
  ``SourceInfo`` itself.
* **Closed jaxprs**: up to 0.11 a nested jaxpr in an equation's parameters is a
  ``ClosedJaxpr`` (a ``Jaxpr`` with its constants) or a bare ``Jaxpr``; 0.12 has no
  ``ClosedJaxpr`` (a ``Jaxpr`` holds its constants): every one is a ``Jaxpr``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jxinspect.core.dtypes import short_name
from jxinspect.tracer.seam.objects import Aval, Jaxpr


@dataclass(frozen=True)
class DebugInfo:
    """A jaxpr's debug info as every release spells it (``JaxprDebugInfo`` in 0.4.x)."""

    traced_for: str
    func_src_info: str | None
    arg_names: tuple[str, ...] | None
    result_paths: tuple[str, ...] | None


@dataclass(frozen=True)
class SourceLine:
    """The user's frame that an equation came from."""

    function: str
    file: str
    line: int


@dataclass(frozen=True)
class Equation:
    """One equation of a jaxpr, as the readers need it."""

    primitive: str
    """The primitive's name (``pjit``, ``scan``, ``add``)."""
    nested: tuple[tuple[str, Jaxpr], ...]
    """``(label, jaxpr)`` for each jaxpr in its parameters (``jaxpr``, ``branches[1]``)."""
    source: SourceLine | None = None
    """The user's line it came from, where asked for and known."""


def debug_info(jaxpr: Jaxpr) -> DebugInfo | None:
    info = getattr(jaxpr, "debug_info", None)
    if info is None:
        return None
    names = getattr(info, "arg_names", None)
    paths = getattr(info, "result_paths", None)
    if callable(paths):  # some releases compute them lazily
        paths = paths()
    return DebugInfo(
        traced_for=str(info.traced_for),
        func_src_info=str(info.func_src_info) if info.func_src_info is not None else None,
        arg_names=tuple(str(n) for n in names) if names is not None else None,
        result_paths=tuple(str(p) for p in paths) if paths is not None else None,
    )


@dataclass(frozen=True)
class LeafType:
    """What JAX's tracing cache tells one flat input apart by: its path, shape, dtype
    and weak type (a Python scalar is weakly typed)."""

    path: str
    shape: tuple[int, ...]
    dtype: str
    weak_type: bool

    @property
    def text(self) -> str:
        """``f32[32,128]`` (the short dtype, as a jaxpr prints it)."""
        return f"{short_name(self.dtype)}[{','.join(str(d) for d in self.shape)}]"


def leaf_types(jaxpr: Jaxpr) -> tuple[LeafType, ...]:
    """Each input of a jaxpr, by the name its debug info gives it (``args[i]`` where it
    gives none)."""
    info = debug_info(jaxpr)
    names = info.arg_names if info is not None and info.arg_names is not None else ()
    found = []
    for i, aval in enumerate(in_avals(jaxpr)):
        name = names[i] if i < len(names) and names[i] else f"args[{i}]"
        shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
        dtype = str(getattr(aval, "dtype", "?"))
        found.append(LeafType(name, shape, dtype, bool(getattr(aval, "weak_type", False))))
    return tuple(found)


def arity(jaxpr: Jaxpr) -> tuple[int, int]:
    """How many inputs and outputs a jaxpr has."""
    return len(jaxpr.invars), len(jaxpr.outvars)


def in_avals(jaxpr: Jaxpr) -> list[Aval]:
    """The abstract values of a ``Jaxpr``'s inputs (``Jaxpr.in_avals`` is newer than 0.4.35)."""
    return [v.aval for v in jaxpr.invars]


def out_avals(jaxpr: Jaxpr) -> list[Aval]:
    return [v.aval for v in jaxpr.outvars]


def jaxpr_text(jaxpr: Jaxpr) -> str:
    """The jaxpr as JAX prints it, without colour."""
    return str(jaxpr.pretty_print(use_color=False))


def equations(jaxpr: Jaxpr, source: bool = False) -> tuple[Equation, ...]:
    """A jaxpr's equations in order; with ``source``, each one's user line."""
    return tuple(
        Equation(
            primitive=str(eqn.primitive.name),
            nested=tuple(sub_jaxprs(eqn.params)),
            source=user_line(eqn) if source else None,
        )
        for eqn in jaxpr.eqns
    )


def pmap_body(jaxpr: Jaxpr) -> Jaxpr | None:
    """The body of the older pmap (0.4.35–0.7): ``make_jaxpr`` of a ``PmapFunction`` is
    one ``xla_pmap`` equation, and JAX lowers its ``call_jaxpr`` as the program itself
    (one replica's), not as a jaxpr nested in it. ``None`` for any other jaxpr. Ask only
    of a pmap's own jaxpr: a jit whose one equation is an ``xla_pmap`` (``jit`` of a
    pmap, or of its ``jvp``) lowers that pmap as a call nested in its program."""
    eqns = jaxpr.eqns
    if len(eqns) != 1 or eqns[0].primitive.name != "xla_pmap":
        return None
    body = eqns[0].params.get("call_jaxpr")
    return getattr(body, "jaxpr", body)


def sub_jaxprs(params: dict[str, Any]) -> Iterator[tuple[str, Jaxpr]]:
    """``(label, jaxpr)`` for each jaxpr in an equation's parameters (``branches[1]``)."""
    from jax._src import core

    closed = closed_jaxpr_type()
    for key, value in params.items():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for i, item in enumerate(items):
            label = f"{key}[{i}]" if isinstance(value, (tuple, list)) else key
            if closed is not None and isinstance(item, closed):
                yield label, item.jaxpr
            elif isinstance(item, core.Jaxpr):
                yield label, item


def closed_jaxpr_type() -> type[Any] | None:
    """``core.ClosedJaxpr`` (0.4.35–0.11); ``None`` from 0.12, where a ``Jaxpr`` holds
    its own constants (every nested jaxpr is a ``Jaxpr``)."""
    from jax._src import core

    found = getattr(core, "ClosedJaxpr", None)
    return found if isinstance(found, type) else None


def user_line(eqn: Any) -> SourceLine | None:
    """The user's frame that an equation (a ``JaxprEqn``) came from."""
    from jax._src import source_info_util

    info = eqn.source_info
    try:
        frame = source_info_util.user_frame(info.traceback)
    except AttributeError:  # 0.4.35 takes the SourceInfo itself
        frame = source_info_util.user_frame(info)
    if frame is None:
        return None
    return SourceLine(str(frame.function_name), str(frame.file_name), int(frame.start_line))


def frames(eqn: Any) -> Iterator[SourceLine]:
    """The frames of an equation's traceback outside JAX's own code (as JAX's
    ``source_info_util.user_frames`` keeps them: a library's among them), innermost
    first."""
    from jax._src import source_info_util

    info = eqn.source_info
    try:
        kept = source_info_util.user_frames(info.traceback)
        first = next(kept, None)
    except AttributeError:  # 0.4.35 takes the SourceInfo itself
        kept = source_info_util.user_frames(info)
        first = next(kept, None)
    while first is not None:
        yield SourceLine(str(first.function_name), str(first.file_name), int(first.start_line))
        first = next(kept, None)


def first_user_line(jaxpr: Jaxpr, besides: SourceLine | None = None) -> SourceLine | None:
    """The user's line of a jaxpr's first operation that has one (other than
    ``besides``), nested jaxprs searched depth first."""
    for eqn in jaxpr.eqns:
        found = user_line(eqn)
        if found is not None and found != besides:
            return found
        for _, inner in sub_jaxprs(eqn.params):
            found = first_user_line(inner, besides)
            if found is not None:
                return found
    return None


def traced_code(jaxpr: Jaxpr, function: tuple[str, int]) -> set[tuple[str, int]]:
    """``(file, first line)`` of every code object outside JAX that the program's
    equations (nested jaxprs too) were traced through inside ``function``, the function
    traced (``(file, first line)``): each equation's frames (jaxlib's
    ``Traceback.raw_frames``, innermost first) up to that function's own; an equation
    made outside it (a wrapper's) adds none. What a program came from: the helpers and
    methods it called, the user's and the libraries'."""
    import jax

    jax_folder = os.path.dirname(jax.__file__) + os.sep
    found: set[tuple[str, int]] = set()
    pending = [jaxpr]
    while pending:
        current = pending.pop()
        for eqn in current.eqns:
            pending.extend(inner for _, inner in sub_jaxprs(eqn.params))
            raw = getattr(getattr(eqn.source_info, "traceback", None), "raw_frames", None)
            if raw is None:  # a release or an equation without one: its frames unknown
                continue
            sites: list[tuple[str, int]] = []
            for code in raw()[0]:
                site = (code.co_filename, code.co_firstlineno)
                if site == function:
                    found.update(sites)
                    break
                if not code.co_filename.startswith(jax_folder):
                    sites.append(site)
    return found


def name_stack(eqn: Any) -> str:
    """The transformations and scopes an equation was made under, as JAX prints them
    (``jvp()``, ``transpose(jvp(loss))``; ``""`` where it keeps none)."""
    return str(getattr(eqn.source_info, "name_stack", "") or "")


TRANSFORMATION_NAMES_SINCE = "0.7.0"
"""The first release whose traced jaxprs keep the transformations each equation was made
under in its name stack (``jvp()``, ``transpose(jvp())``); measured: 0.4.35 to 0.6.2
keep none at the top level, 0.7.1 on do."""
NAMED_OUTPUTS_ONLY_SINCE = "0.10.2"
"""The first release whose ``print_saved_residuals`` names by a ``checkpoint_name`` only
the name's own output; measured: 0.4.35 to 0.10.1 name the value it is given too."""


def names_transformations() -> bool:
    """Whether this release's jaxprs say which equations are the forward pass and which
    the backward (:data:`TRANSFORMATION_NAMES_SINCE`)."""
    from jxinspect.tracer.seam.release import running_since

    return running_since(TRANSFORMATION_NAMES_SINCE)


def residual_parts(
    jaxpr: Jaxpr,
) -> list[tuple[Any, Any, Any | None, str | None]]:
    """Each value a top-level backward equation (``transpose(`` in its name stack) reads
    that the forward pass (``jvp(``) made or that is an input of ``jaxpr``, once, in order:
    ``(variable, its aval, the equation that made it or None for an input, the
    checkpoint name that names it as this release's print_saved_residuals does)``."""
    from jax._src import core

    from jxinspect.tracer.seam.release import running_since

    named_inputs = not running_since(NAMED_OUTPUTS_ONLY_SINCE)
    made: dict[Any, Any] = {}
    names: dict[Any, str] = {}
    inputs = set(jaxpr.invars)
    found: dict[Any, tuple[Any, Any, Any | None, str | None]] = {}
    for eqn in jaxpr.eqns:
        stack = name_stack(eqn)
        if "transpose(" in stack:
            for var in eqn.invars:
                if isinstance(var, core.Literal) or var in found:
                    continue
                if var in inputs or var in made:
                    found[var] = (var, var.aval, made.get(var), names.get(var))
        elif "jvp(" in stack:
            made.update((var, eqn) for var in eqn.outvars)
            if eqn.primitive.name == "name":
                named = str(eqn.params.get("name"))
                names[eqn.outvars[0]] = named
                if named_inputs and not isinstance(eqn.invars[0], core.Literal):
                    names.setdefault(eqn.invars[0], named)
    return list(found.values())


REMATTED = "rematted_computation"
"""The scope JAX names the forward operations a ``jax.checkpoint`` runs again in the
backward pass (the transpose of its ``checkpoint``/``remat2`` equation), in the equations'
name stacks and the lowered module's locations: measured on 0.4.35 to 0.12.1."""

_LOOPS = frozenset(("scan", "while", "fori_loop"))


def recomputed_parts(jaxpr: Jaxpr, looped: bool = False) -> list[tuple[Any, bool]]:
    """Each equation, at any depth, that recomputes a forward value in the backward pass
    (in :data:`REMATTED`) and whose value is used, in order: ``(equation, whether a loop
    runs it)``. One whose value nothing reads JAX drops before lowering it (0.5.3 keeps
    such an ``integer_pow`` in the traced program): it is not run again."""
    found = []
    marked = {id(eqn) for eqn in jaxpr.eqns if REMATTED in name_stack(eqn)}
    recomputed = marked & _used(jaxpr) if marked else set()  # most jaxprs recompute none
    for eqn in jaxpr.eqns:
        if id(eqn) in recomputed:
            found.append((eqn, looped))
        inner_looped = looped or eqn.primitive.name in _LOOPS
        for _, inner in sub_jaxprs(eqn.params):
            found += recomputed_parts(inner, inner_looped)
    return found


def _used(jaxpr: Jaxpr) -> set[int]:
    """The equations of ``jaxpr`` whose values its results need (or that have effects),
    by ``id``: a backward pass over its equations from its results."""
    from jax._src import core

    needed = {var for var in jaxpr.outvars if not isinstance(var, core.Literal)}
    used: set[int] = set()
    for eqn in reversed(jaxpr.eqns):
        if getattr(eqn, "effects", None) or any(var in needed for var in eqn.outvars):
            used.add(id(eqn))
            needed.update(var for var in eqn.invars if not isinstance(var, core.Literal))
    return used


def host_transfers(jaxpr: Jaxpr) -> list[tuple[Any, str, str | None]]:
    """Each top-level equation of ``jaxpr`` that moves a value to host memory (a
    ``jax.checkpoint`` policy's offload, a ``device_put`` to a host memory kind):
    ``(equation, the memory kind asked, the checkpoint_name of the value moved)``.
    Release fact: 0.4.35 writes the destination as ``TransferToMemoryKind(memory_kind=
    'pinned_host')``; 0.7 on as ``MemorySpace.Host`` (the kind said ``host``)."""
    made = {out: eqn for eqn in jaxpr.eqns for out in eqn.outvars}
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name != "device_put":
            continue
        for target, operand in zip(eqn.params.get("devices", ()), eqn.invars):
            kind = getattr(target, "memory_kind", None)
            if kind is None and str(target).endswith(".Host"):  # MemorySpace.Host
                kind = "host"
            if not isinstance(kind, str) or "host" not in kind:
                continue
            producer = made.get(operand)
            named = producer.params.get("name") if producer is not None else None
            is_name = producer is not None and producer.primitive.name == "name"
            found.append((eqn, kind, str(named) if is_name and named else None))
    return found
