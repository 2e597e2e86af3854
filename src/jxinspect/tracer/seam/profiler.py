"""Running a compiled program under JAX's profiler: concrete inputs of a ``Compiled``'s
own arguments (its ``args_info`` and input shardings, in every supported release), the
call, and ``jax.profiler.trace(folder)``, which writes
``folder/plugins/profile/<run>/<host>.xplane.pb`` (XProf's layout; read by
:mod:`jxinspect.tracer.read.xplane`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jxinspect.tracer.seam.compiled import _assigned
from jxinspect.tracer.seam.objects import Compiled


def concrete_inputs(compiled: Compiled, seed: int = 0) -> list[Any]:
    """Arrays for each argument of ``compiled`` (its own ``args_info`` and input
    shardings): random values of each leaf's shape and dtype, laid out as it was
    compiled; typed PRNG keys as keys."""
    import jax
    import numpy as np

    rng = np.random.default_rng(seed)
    infos = jax.tree_util.tree_leaves(compiled.args_info)
    shardings = jax.tree_util.tree_leaves(compiled.input_shardings)
    arrays = []
    for info, sharding in zip(infos, shardings, strict=True):
        aval = info._aval  # noqa: SLF001  # ArgInfo's one field: no public name in any release
        arrays.append(jax.device_put(_value(aval, rng), sharding))
    return arrays


def _value(aval: Any, rng: Any) -> Any:
    import jax
    import jax.numpy as jnp

    shape = tuple(aval.shape)
    dtype = aval.dtype
    if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        keys = jax.random.split(
            jax.random.key(int(rng.integers(1 << 30))), max(1, math.prod(shape))
        )
        return keys[: math.prod(shape)].reshape(shape)
    if jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.complexfloating):
        return rng.standard_normal(shape).astype(dtype)
    if jnp.issubdtype(dtype, jnp.bool_):
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 4, shape).astype(dtype)


def donated_arguments(compiled: Compiled) -> list[bool]:
    """Whether each argument's buffer is donated to the program."""
    import jax

    return [bool(info.donated) for info in jax.tree_util.tree_leaves(compiled.args_info)]


def run_compiled(compiled: Compiled, arrays: list[Any]) -> None:
    """Run ``compiled`` on ``arrays`` (its arguments' leaves) until its outputs are ready."""
    import jax

    args, kwargs = jax.tree_util.tree_unflatten(compiled.in_tree, arrays)
    jax.block_until_ready(compiled(*args, **kwargs))


def _options(hlo_protos: bool) -> dict[str, Any]:
    """The profiler's options as keywords of ``start_trace``: no Python tracer (JAX's
    default traces every Python call while on: the harness's own, or the whole user's
    run, each one an event to keep and write), the XLA host tracer as JAX's default,
    and the programs' HLO protos only where the trace is kept (XProf's op profile reads
    them). ``{}`` where the release has no ``ProfileOptions`` (its defaults then)."""
    import jax

    made = getattr(jax.profiler, "ProfileOptions", None)
    if (
        made is None
        or "profiler_options" not in inspect.signature(jax.profiler.start_trace).parameters
    ):
        return {}
    options = made()
    options.python_tracer_level = 0
    options.enable_hlo_proto = hlo_protos
    return {"profiler_options": options}


@contextmanager
def profiler_traced(folder: Path, kept: bool = False) -> Iterator[None]:
    """JAX's profiler on inside the block, its trace written under ``folder`` (``kept``:
    with the programs' HLO protos, for XProf)."""
    import jax

    jax.profiler.start_trace(str(folder), **_options(kept))
    try:
        yield
    finally:
        jax.profiler.stop_trace()


def profiled_module(compiled: Compiled) -> str:
    """The compiled module's name, as the profiler's events say it (``jit_f``)."""
    text = compiled.as_text()
    first = text.split(maxsplit=2)
    return first[1].rstrip(",") if len(first) > 1 and first[0] == "HloModule" else ""


def profiled_devices(compiled: Compiled) -> tuple[str | None, str | None, int | None]:
    """The platform, the device kind and how many devices ``compiled`` runs on (``None``
    where it cannot say)."""
    devices = _assigned(compiled)
    if not devices:
        return None, None, None
    first = devices[0]
    kind = str(getattr(first, "device_kind", "")) or None
    return str(first.platform), kind, len(devices)


def start_profiler(folder: Path) -> None:
    """JAX's profiler on, its trace to be written under ``folder`` (XProf's layout, with
    the programs' HLO protos) by :func:`stop_profiler`; no Python tracer."""
    import jax

    jax.profiler.start_trace(str(folder), **_options(True))


def stop_profiler() -> None:
    """JAX's profiler off, its trace written where :func:`start_profiler` said."""
    import jax

    jax.profiler.stop_trace()
