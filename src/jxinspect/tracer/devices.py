"""Devices and global JAX settings, set before the backend starts and restored after."""

from __future__ import annotations

from jxinspect.errors import TooFewDevices
from jxinspect.tracer import seam


def prepare_devices(requested: int | None, needed: int | None) -> list[str]:
    """Simulate CPU devices before the backend starts; return notes on what was done.

    ``requested`` comes from ``--devices``; ``needed`` is the size of a concrete mesh,
    simulated on CPU when nothing was requested and the default would be too few.
    """
    count = requested or needed
    if count is None:
        return []
    if seam.backend_started():
        have = seam.device_count()
        if have < count and seam.default_backend() == "cpu":
            what = f"--devices {requested}" if requested is not None else f"a mesh of {count}"
            raise TooFewDevices(
                f"{what}: JAX already started with {have} devices in this process (the "
                "module ran a JAX computation at import); set the devices before it runs",
                count,
            )
        return []
    platforms = seam.platforms_setting()
    if platforms and "cpu" not in platforms.split(","):
        return []
    if requested is None and needed is not None and needed <= 1:
        return []
    seam.simulate_cpu_devices(count)
    if seam.default_backend() != "cpu":
        return []
    if requested is None:
        return [f"simulated {count} CPU devices for the mesh"]
    return [f"simulated {count} CPU devices"]
