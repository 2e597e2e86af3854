"""Devices and global JAX settings, set before the backend starts and restored after."""

from __future__ import annotations

from jxinspect.core.errors import TooFewDevices, UsageError

MAX_SIMULATED_DEVICES = 4096
"""The most CPU devices one process simulates. Measured with jax 0.10.2 on a 2-core
machine (``XLA_FLAGS=--xla_force_host_platform_device_count=N``, ``jax.devices()``):
8 and 64 devices start in 0.5 s, 512 in 0.7 s, 4096 in 2.2 s (580 MB); 8192 took 15 s
and 1 GB, 16384 had not started after 15 minutes, and far more abort inside jaxlib. A
larger topology is traced and lowered on an abstract mesh (``--abstract``), which needs
no devices."""


def check_count(requested: int | None, needed: int | None, source: str | None = None) -> None:
    """Refuse (:class:`UsageError`) to simulate more CPU devices than one process can.

    ``requested`` and ``needed`` are :func:`prepare_devices`' arguments; it calls this
    first, and so does a caller that prepares devices in other processes (``lint``'s
    workers), to refuse once, before any starts; ``source`` then says where the count
    came from. JAX is not imported for a count within the limit. Devices JAX already
    has, or a platform list without the CPU, are left to :func:`prepare_devices` and
    JAX: nothing is simulated then.
    """
    count = requested or needed
    if count is None or count <= MAX_SIMULATED_DEVICES:
        return
    from jxinspect.tracer import seam  # here: a count within the limit needs none of it

    if seam.backend_started():
        return
    platforms = seam.platforms_setting()
    if platforms and "cpu" not in platforms.split(","):
        return
    limit = f"one process can simulate at most {MAX_SIMULATED_DEVICES} CPU devices"
    if source is not None:
        raise UsageError(
            f"{source} asks for {count} devices: {limit}; for a larger topology make the "
            "mesh abstract (abstract: true, platform: tpu), which needs no devices"
        )
    if requested is not None:
        raise UsageError(
            f"--devices {requested}: {limit}; for a larger topology use --abstract "
            "--mesh NAME=SIZE,... --platform tpu (an abstract mesh needs no devices)"
        )
    raise UsageError(
        f"a concrete mesh of {needed} devices: {limit}; for a larger topology add "
        "--abstract --platform tpu (an abstract mesh needs no devices)"
    )


def prepare_devices(requested: int | None, needed: int | None) -> list[str]:
    """Simulate CPU devices before the backend starts; return notes on what was done.

    ``requested`` comes from ``--devices``; ``needed`` is the size of a concrete mesh,
    simulated on CPU when nothing was requested and the default would be too few.
    """
    from jxinspect.tracer import seam

    check_count(requested, needed)
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
