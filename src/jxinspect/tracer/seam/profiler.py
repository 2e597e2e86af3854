"""Running a compiled program and JAX's profiler: concrete inputs of a ``Compiled``'s
own arguments, and the profiler's events read back.

* ``jax.profiler.trace(folder)`` writes ``folder/plugins/profile/<run>/<host>.xplane.pb``
  (XProf's layout: XProf, TensorBoard and Perfetto open it).
* ``jax.profiler.ProfileData`` reads it (measured on 0.10.2; a release without it leaves
  the events unread, said). On CPU each XLA thunk is an event of the host's
  ``tf_XLA…`` lines carrying the stats ``hlo_module`` (``jit_f``), ``hlo_op`` (the
  instruction, named as in ``compiled.as_text()``), ``run_id`` (one per execution) and
  ``device_ordinal``; a TPU's device planes carry the same two names.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jxinspect.tracer.seam.compiled import _assigned
from jxinspect.tracer.seam.objects import Compiled


@dataclass(frozen=True)
class TraceEvent:
    """One instruction's run, as the profiler recorded it."""

    module: str
    instruction: str
    seconds: float
    run: int | None
    """The execution it belongs to (``run_id``); ``None`` where the event says none."""
    device: str
    """Which device ran it (``device_ordinal``, else the plane and line)."""


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


@contextmanager
def profiler_traced(folder: Path) -> Iterator[None]:
    """JAX's profiler on inside the block, its trace written under ``folder``."""
    import jax

    with jax.profiler.trace(str(folder)):
        yield


def trace_events(folder: Path, module: str) -> list[TraceEvent] | str:
    """The events of ``module``'s instructions in the newest trace under ``folder``; a
    line saying why where none could be read."""
    import jax

    reader = getattr(jax.profiler, "ProfileData", None)
    if reader is None:
        return f"JAX {jax.__version__} has no jax.profiler.ProfileData to read its trace with"
    found = sorted(folder.glob("plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime)
    if not found:
        return f"the profiler wrote no trace under {folder}"
    data = reader.from_file(str(found[-1]))
    events = []
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if stats.get("hlo_module") != module or "hlo_op" not in stats:
                    continue
                run = stats.get("run_id")
                device = stats.get("device_ordinal", f"{plane.name}/{line.name}")
                events.append(TraceEvent(module, str(stats["hlo_op"]),
                                         float(event.duration_ns) / 1e9,
                                         int(run) if run is not None else None,
                                         str(device)))  # fmt: skip
    if not events:
        return f"the profiler's trace holds no event of {module}'s instructions"
    return events


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
