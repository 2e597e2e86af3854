"""What one lowering was called with, as JAX's tracing cache tells calls apart (the
function object, each leaf's type and sharding by its path, the static values, the
tracing context, the program made): what record's compile log compares lowerings by
(:mod:`jxinspect.record.recompiles`) and what the guard publishes of each program
across processes (:mod:`jxinspect.record.guard`), one reading for both.

It imports only what it reads with: the staging machinery (:mod:`jxinspect.tracer.stage`)
only under a library's wrapper, where the user's paths are found through it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Any

from jxinspect.core.specs import normalized_spec, spec_text
from jxinspect.tracer import seam


@dataclass(frozen=True)
class Fingerprint:
    """What one lowering was called with, as JAX's tracing cache tells calls apart."""

    function: Any
    """A weak reference to the function object (``None`` where there is none)."""
    leaves: dict[str, seam.LeafType]
    shardings: dict[str, str]
    """Each leaf's sharding as the user spelled it (``P('model', None)``), as a reason
    says it."""
    layouts: dict[str, str]
    """Each leaf's sharding as the layout it names (:func:`normalized_spec`:
    ``P('model')``): what two lowerings are told apart by, as JAX does."""
    statics: dict[str, str]
    context: dict[str, str]
    program: str
    static_arguments: bool = True
    """``statics`` are a ``jit`` call's static arguments by name (not the static leaves of
    a library wrapper's pytree, by path)."""

    def same_function(self, other: Fingerprint) -> bool:
        if self.function is None or other.function is None:
            return True
        mine, theirs = self.function(), other.function()
        return mine is not None and mine is theirs


def fingerprint(
    lowering: seam.RunLowering, statics: list[tuple[str, str]], program: str
) -> Fingerprint:
    """The lowering's :class:`Fingerprint` (``statics``: name and ``repr``)."""
    fun = lowering.call.fun if lowering.call is not None else None
    try:
        ref = weakref.ref(fun) if fun is not None else None
    except TypeError:  # an object that takes no weak reference: not told apart
        ref = None
    leaves = seam.leaf_types(lowering.names_jaxpr)
    user = _wrapper_view(lowering, len(leaves))
    if user is not None:  # the user's paths and static values, not the wrapper's
        paths, statics = user
        leaves = tuple(replace(leaf, path=path or leaf.path) for leaf, path in zip(leaves, paths))
    placed = list(zip(leaves, lowering.shardings))
    shardings = {leaf.path: _sharding_text(s) for leaf, s in placed}
    layouts = {leaf.path: _sharding_text(s, normalized=True) for leaf, s in placed}
    return Fingerprint(
        ref, {leaf.path: leaf for leaf in leaves}, shardings, layouts, dict(statics),
        dict(lowering.context), program, static_arguments=user is None,
    )  # fmt: skip


def _wrapper_view(
    lowering: seam.RunLowering, count: int
) -> tuple[list[str | None], list[tuple[str, str]]] | None:
    """Under a library's wrapper, each program leaf's path in the user's call (found by
    identity) and the user's static values by their paths; ``None`` where there is no
    wrapper, or its leaves are not the program's one for one."""
    if lowering.wrapper is None or lowering.wrapper_call is None:
        return None  # what :func:`recorded` would find, without loading the staging
    from jxinspect.tracer.stage import recorded

    expected, statics = recorded(lowering).traced.paths or (None, [])
    if expected is None or len(expected) != count:
        return None
    return expected, [(s.path, s.value) for s in statics]


STATIC_COMPARED = 300
"""How much of a static argument's ``repr`` two compiles are compared by."""


def static_values(call: seam.JitCall | None) -> list[tuple[str, str]]:
    """Each static argument of a ``jit`` call and its ``repr``, as two compiles are told
    apart by (none where no ``jit`` call made the lowering)."""
    if call is None:
        return []
    return [(k, short_repr(v, STATIC_COMPARED)) for k, v in seam.static_arguments(call)]


def short_repr(value: Any, limit: int) -> str:
    """``repr(value)`` cut to ``limit`` characters (a class's own ``repr`` may raise)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sharding_text(sharding: Any, *, normalized: bool = False) -> str:
    """``P('model')``, as every view writes a spec; the class's name for a sharding
    without one. ``normalized``: the layout it names (:func:`normalized_spec`), one text
    for every spelling of it."""
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return type(sharding).__name__
    entries = seam.spec_entries(spec)
    return spec_text(normalized_spec(entries) if normalized else entries)
