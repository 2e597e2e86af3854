"""Devices and global JAX settings, set before the backend starts and restored after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from jxinspect.errors import UsageError


def backend_started() -> bool:
    from jax._src import xla_bridge

    return bool(xla_bridge.backends_are_initialized())


def prepare_devices(requested: int | None, needed: int | None) -> list[str]:
    """Simulate CPU devices before the backend starts; return notes on what was done.

    ``requested`` comes from ``--devices``; ``needed`` is the size of a concrete mesh,
    simulated on CPU when nothing was requested and the default would be too few.
    """
    import jax

    count = requested or needed
    if count is None:
        return []
    if backend_started():
        have = jax.device_count()
        if requested is not None and have != requested and jax.default_backend() == "cpu":
            if have < requested:
                raise UsageError(
                    f"--devices {requested}: JAX already started with {have} devices in this "
                    "process; set it before the first JAX computation"
                )
        return []
    platforms = jax.config.jax_platforms or ""
    if platforms and "cpu" not in platforms.split(","):
        return []
    if requested is None and needed is not None and needed <= 1:
        return []
    jax.config.update("jax_num_cpu_devices", count)
    if jax.default_backend() != "cpu":
        return []
    if requested is None:
        return [f"simulated {count} CPU devices for the mesh"]
    return [f"simulated {count} CPU devices"]


@contextlib.contextmanager
def partitioner(name: str | None) -> Iterator[str]:
    """Use Shardy or GSPMD inside the block; leave JAX's setting as it was."""
    import jax

    before = bool(jax.config.jax_use_shardy_partitioner)
    wanted = before if name is None else name == "shardy"
    if wanted != before:
        jax.config.update("jax_use_shardy_partitioner", wanted)
    try:
        yield "shardy" if wanted else "gspmd"
    finally:
        if wanted != before:
            jax.config.update("jax_use_shardy_partitioner", before)
