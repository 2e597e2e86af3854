"""jxinspect: see what a JAX program became.

Stage a function with ``jit``, ``pjit``, ``pmap`` or ``shard_map`` and report each
argument's parameter name, each result's pytree path and the shardings JAX attached,
with a finding wherever JAX dropped or degraded that debug info.

    import jxinspect
    report = jxinspect.inspect(f, args=(x, 3), stage="jit", options={"static_argnums": (1,)})
    report.to_dict()

Importing this package does not import JAX; :func:`inspect` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from jxinspect.model import Report

__all__ = ["__version__", "inspect"]


def inspect(
    fun: Any,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    stage: str = "jit",
    options: dict[str, Any] | None = None,
    platform: str | None = None,
) -> Report:
    """Stage ``fun`` on ``args``/``kwargs`` and return its :class:`~jxinspect.model.Report`.

    ``options`` are passed as given to the staging API (``jax.jit``, ``pjit``,
    ``jax.pmap`` or ``jax.shard_map``); ``args`` may hold arrays or ``ShapeDtypeStruct``s.
    ``platform`` lowers for another platform ("tpu", "gpu") without its hardware.
    """
    from jxinspect.api import inspect_function

    return inspect_function(
        fun, args, kwargs or {}, stage=stage, options=options or {}, platform=platform
    )
