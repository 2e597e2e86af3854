"""Adapters: stage a target wrapped by a model library exactly as that library does.

One small module per wrapper (``nnx_jit``: Flax NNX's ``nnx.jit``; ``nnx_pmap``:
``nnx.pmap``; ``nnx_shard_map``: ``nnx.shard_map``; ``eqx_jit``:
Equinox's ``eqx.filter_jit``; ``eqx_pmap``: Equinox's ``eqx.filter_pmap``). Each is chosen
by what the target *is* (an ``isinstance`` or code-object check after importing the
library), and the library is imported only when the user's program already loaded it: a
target that does not use Flax never imports it.

An adapter runs the library's own preprocessing of the call (the pytree the library hands
to its inner ``jax.jit``) and traces that inner ``jax.jit`` with it, so the program is the
one the library builds. It also returns the leaves of that pytree, in the program's order:
the same objects as the leaves of the user's call, which is how each program argument is
mapped back to the user's own path (``model.linear1.kernel.value``). The program's results
are mapped back the same way, from what the library does with them: the user's result path
(``result['loss']``), or for a state the wrapper writes back into an argument, that
argument's path (``model.linear1.kernel.value``).

What an adapter returns (:class:`~jxinspect.tracer.adapters.adapted.Adapted`) is in
``adapted``, which the adapters import; this package's ``find`` imports the adapters, and
none of them imports it back.
"""

from __future__ import annotations

import sys
from typing import Any


def find(fun: Any) -> Any | None:
    """The adapter module for ``fun``, or ``None`` when no library wrapper staged it.
    A library is looked at only when the user's program imported it."""
    if "flax.nnx" in sys.modules:
        from jxinspect.tracer.adapters import nnx_jit

        if nnx_jit.matches(fun):
            return nnx_jit
        from jxinspect.tracer.adapters import nnx_pmap

        if nnx_pmap.matches(fun):
            return nnx_pmap
        from jxinspect.tracer.adapters import nnx_shard_map

        if nnx_shard_map.matches(fun):
            return nnx_shard_map
    if "equinox" in sys.modules:
        from jxinspect.tracer.adapters import eqx_jit, eqx_pmap

        if eqx_jit.matches(fun):
            return eqx_jit
        if eqx_pmap.matches(fun):
            return eqx_pmap
    return None


def recorded_call(wrapper: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The user's call of a program a recorded run lowered through ``wrapper`` (its
    library is loaded there already), as that wrapper's adapter names its leaves."""
    if wrapper == "nnx.jit":
        from jxinspect.tracer.adapters import nnx_jit

        return nnx_jit.named_call(args, kwargs)
    return args, kwargs


def recorded_results(
    wrapper: str,
    fun: Any,
    names: list[str | None],
    inputs: list[tuple[str | None, str | None]],
) -> list[str | None] | None:
    """The user's path of each result of a program a recorded run lowered through
    ``wrapper`` (its library is loaded there already), from the names it carries
    (``inputs``: each input's name and the user's path); ``None`` where not known."""
    if wrapper == "eqx.filter_jit":
        from jxinspect.tracer.adapters import eqx_jit

        return eqx_jit.user_results(names)
    if wrapper == "nnx.jit":
        from jxinspect.tracer.adapters import nnx_jit

        return nnx_jit.user_results(fun, names, inputs)
    return None


def nnx_objects_note(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """For a function staged by plain ``jax.jit`` with Flax NNX objects (a module, an
    optimizer, metrics) among its arguments: that their in-place updates are not in the
    program, and what to inspect instead; ``None`` otherwise."""
    if "flax.nnx" not in sys.modules:
        return None
    from jxinspect.tracer.adapters import nnx_shared

    held = [name for name, value in _arguments(fun, args, kwargs) if nnx_shared.is_node(value)]
    if not held:
        return None
    said = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
    return (
        f"{said} {'is a Flax NNX object' if len(held) == 1 else 'are Flax NNX objects'} "
        "staged by plain jax.jit: what the function updates in place (optimizer.update, "
        "metrics.update, a module's state) is not in this program, only what it returns; "
        "inspect the function decorated with @nnx.jit instead (its .fun or __wrapped__ "
        "is the undecorated one), which jxinspect stages as Flax does, updates included"
    )


def _arguments(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each argument by its parameter's name where the signature binds the call."""
    import inspect

    try:
        bound = inspect.signature(fun).bind(*args, **kwargs).arguments
        return list(bound.items())
    except (TypeError, ValueError):
        return [(f"argument {i}", a) for i, a in enumerate(args)] + list(kwargs.items())
