"""What an adapter returns: a target staged through its library's wrapper."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Adapted:
    """A target staged through its library's wrapper."""

    wrapper: str
    """The wrapper, as users write it: ``nnx.jit``, ``eqx.filter_jit``."""
    fun: Any
    """The user's function inside the wrapper (its signature names the call's leaves)."""
    traced: Any
    """JAX's ``Traced`` of the wrapper's inner ``jax.jit``."""
    leaves: list[Any] | None
    """The objects the program receives, in ``@main`` order (``None``: not known)."""
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    """The call as the adapter made it (stand-ins for abstract arrays where the library
    stages only real arrays); ``leaves`` are leaves of these."""
    notes: tuple[str, ...] = field(default=())
    results: list[str | None] | None = None
    """Each program result's path as the user knows it, in ``@main`` order: a path of the
    user's return value (``result[0].layers[0].weight``), the path of the argument whose
    state the wrapper writes back (``model.linear1.kernel.value``), or a label for the
    wrapper's own result (``<eqx.filter_jit marker>``); ``None`` where not known."""
    pmap: tuple[Any, tuple[Any, ...], dict[str, Any]] | None = None
    """For a wrapper built on ``jax.pmap`` (``traced`` is ``None``): its inner ``jax.pmap``
    and the arguments and keyword arguments the wrapper calls it with, staged as a
    ``jax.pmap`` object is; the adapter's ``result_paths(adapted, out_info)`` then maps
    the results."""
    context: AbstractContextManager[Any] | None = None
    """Entered already: the library's context the inner ``jax.pmap`` is traced in (flax's
    update context), exited once it is staged."""


def unmapped(wrapper: str, library: str) -> str:
    """The note for a release whose results an adapter cannot map back to the user."""
    return (
        f"{wrapper} of this {library} release returns its results in a way jxinspect "
        "cannot map back to your paths: each result is shown by the name it carries"
    )
