"""Devices and the backend: simulated CPU devices, the platform, the partitioner.

* **Simulated CPU devices**: the ``jax_num_cpu_devices`` option (0.5.0 on; 0.7.2 and
  0.10.2 have it); before it (0.4.35), the XLA flag
  ``--xla_force_host_platform_device_count`` set before the backend starts.
* **Partitioner**: GSPMD (``mhlo.sharding``) is the default up to 0.6 (0.4.35), Shardy
  (``sdy.sharding``) from 0.7 on; ``jax_use_shardy_partitioner`` switches either way up
  to 0.12.0.1. From 0.12.1 (:data:`GSPMD_GONE_IN`) the option "has no effect": JAX
  lowers with Shardy whatever it says.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

from jxinspect.core.vocabulary import Partitioner
from jxinspect.tracer.seam import release, xla_flags
from jxinspect.tracer.seam.objects import Device

_DEVICE_FLAG = "--xla_force_host_platform_device_count"

GSPMD_GONE_IN = "0.12.1"
"""The first release that lowers with Shardy whatever ``jax_use_shardy_partitioner``
says (its help: "DEPRECATED: Shardy is now always enabled; this flag has no effect");
measured: 0.12.0.1 still writes ``mhlo.sharding`` with the option off, 0.12.1 writes
``sdy.sharding``."""


def backend_started() -> bool:
    from jax._src import xla_bridge

    return bool(xla_bridge.backends_are_initialized())


def default_backend() -> str:
    import jax

    return str(jax.default_backend())


def device_count() -> int:
    import jax

    return int(jax.device_count())


def devices() -> list[Device]:
    import jax

    return list(jax.devices())


def platforms_setting() -> str:
    """The ``jax_platforms`` setting (``""`` when JAX chooses)."""
    import jax

    return str(jax.config.jax_platforms or "")


def simulate_cpu_devices(count: int) -> None:
    """Ask for ``count`` CPU devices; call before the backend starts."""
    import jax

    if release.config_has("jax_num_cpu_devices"):
        jax.config.update("jax_num_cpu_devices", count)
        return
    given = xla_flags.tokens(os.environ.get("XLA_FLAGS", ""))  # a quoted value kept whole
    flags = [f for f in given if not f.startswith(_DEVICE_FLAG)]
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"{_DEVICE_FLAG}={count}"])


@contextlib.contextmanager
def partitioner(name: str | None) -> Iterator[Partitioner]:
    """Use Shardy (``"shardy"``) or GSPMD inside the block, and say which one JAX will
    use (Shardy from :data:`GSPMD_GONE_IN`, whatever was asked); JAX's setting is
    restored."""
    import jax

    option = "jax_use_shardy_partitioner"  # in every supported release
    before = bool(jax.config.values[option])
    wanted = before if name is None else name == "shardy"
    if not gspmd_lowers():
        yield "shardy"
        return
    if wanted != before:
        jax.config.update(option, wanted)
    try:
        yield "shardy" if wanted else "gspmd"
    finally:
        if wanted != before:
            jax.config.update(option, before)


def gspmd_lowers() -> bool:
    """Whether this release can still lower with GSPMD (before :data:`GSPMD_GONE_IN`)."""
    return not release.running_since(GSPMD_GONE_IN)


def partitioner_note(asked: str | None) -> str | None:
    """What to tell a user who asked for GSPMD where JAX no longer has it."""
    if asked != "gspmd" or gspmd_lowers():
        return None
    return (
        f"--partitioner gspmd: JAX {release.jax_version()} always partitions with Shardy "
        "(its jax_use_shardy_partitioner has no effect); this is Shardy's lowering"
    )


def shardy_default() -> bool:
    """Whether this release partitions with Shardy unless told otherwise (0.7 on)."""
    import jax

    return bool(jax.config.values.get("jax_use_shardy_partitioner", False))


def distributed_process() -> tuple[int, int] | None:
    """``(process index, process count)`` once ``jax.distributed.initialize`` has run
    in this process with more than one process; ``None`` before, or for one process.
    Read from JAX's distributed state (``jax._src.distributed.global_state``, every
    supported release), never by ``jax.process_index()``, which would start a backend:
    nothing is initialized here."""
    import sys

    module = sys.modules.get("jax._src.distributed")
    state = getattr(module, "global_state", None)
    if state is None or getattr(state, "client", None) is None:
        return None
    index, count = getattr(state, "process_id", None), getattr(state, "num_processes", None)
    if not isinstance(index, int) or not isinstance(count, int) or count < 2:
        return None
    return index, count


def coordination_client() -> Any:
    """The ``jax.distributed`` client of this process (its key-value store is the
    coordination service's, which every process of the job reaches); ``None`` before
    ``jax.distributed.initialize``. Its ``key_value_set(key, value)`` and
    ``blocking_key_value_get(key, timeout_ms)`` are in every supported release."""
    import sys

    module = sys.modules.get("jax._src.distributed")
    state = getattr(module, "global_state", None)
    return getattr(state, "client", None)


def spans_processes(shardings: Sequence[Any]) -> bool:
    """Whether a program laid out with ``shardings`` runs on devices of other processes
    too (a sharding not fully addressable here): its collectives wait for them."""
    return any(getattr(s, "is_fully_addressable", True) is False for s in shardings)
