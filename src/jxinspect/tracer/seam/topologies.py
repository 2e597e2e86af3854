"""TPU topologies that are not here: libtpu's devices for a topology name, to compile for.

With libtpu installed (``jax[tpu]`` of the same JAX), ``jax.experimental.topologies.
get_topology_desc(platform="tpu", topology_name="v5e:2x2")`` gives the topology's devices
on a machine without a TPU; a mesh over them (or ``jax.default_device`` of one) makes
``jit(...).lower(...).compile()`` compile with the TPU's own compiler. Measured with JAX
0.10.2 and libtpu 0.0.42.1: the memory analysis and cost analysis of a program compiled
so on a CPU-only machine equal those of the same program compiled on a real TPU v5e chip.

Without a TPU here, libtpu looks for a host to initialize unless told there is none
(``TPU_SKIP_MDS_QUERY``, ``TPU_WORKER_HOSTNAMES``; without them it writes errors to the
terminal), and one process at a time loads it unless told otherwise: these are set where
unset, and only on a machine with no TPU chip.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jxinspect.core.errors import UsageError
from jxinspect.tracer.seam.objects import Device

_NO_HOST = {
    "TPU_SKIP_MDS_QUERY": "1",
    "TPU_WORKER_HOSTNAMES": "localhost",
    "TPU_ACCELERATOR_TYPE": "v5litepod-4",
    "ALLOW_MULTIPLE_LIBTPU_LOAD": "1",
}
"""What tells libtpu that no TPU host is to be found (without an accelerator type it
writes that it found no host bounds), and that other processes compiling for a topology
(lint's workers) may load it too: without, the second one is refused (``ABORTED: ...
libtpu multi-process lockfile``). Set only where no chip is. A topology's compile is the
topology's whatever the type says: tests/tracer/test_topology.py compiles for v5e and v4
with these and checks the result against raw JAX's without the type and the hosts (the
tests' raw JAX has only the lockfile's and the metadata server's: ``RAW_LIBTPU``)."""

if TYPE_CHECKING:
    from jxinspect.core.model import Shortfall, Topology


@dataclass(frozen=True)
class TopologyDevices:
    """A topology's devices, and what it is (for the report)."""

    devices: tuple[Device, ...]
    topology: Topology


def libtpu_version() -> str | None:
    """The installed libtpu's version; ``None`` where it is not installed."""
    if importlib.util.find_spec("libtpu") is None:
        return None
    try:
        return importlib.metadata.version("libtpu")
    except importlib.metadata.PackageNotFoundError:  # an unpackaged libtpu
        return "(version unknown)"


def _has_tpu_chip() -> bool:
    return Path("/dev/accel0").exists() or any(Path("/dev/vfio").glob("[0-9]*"))


def no_tpu_host() -> None:
    """Where libtpu is installed and no TPU chip is here, tell it so (:data:`_NO_HOST`,
    where unset), before JAX starts: else JAX's start, looking for a TPU, has libtpu
    write its errors to the terminal (measured with libtpu 0.0.42.1 and 0.0.50.1), and
    a second process loading it is refused. Only in jxinspect's own processes: never in
    a recorded run's."""
    if libtpu_version() is None or _has_tpu_chip():
        return
    for variable, value in _NO_HOST.items():
        os.environ.setdefault(variable, value)


@functools.cache
def topology_devices(name: str, slices: int = 1) -> TopologyDevices:
    """The devices of TPU topology ``name`` (libtpu's spelling: ``v5e:2x2``, ``v4:2x2x1``),
    of ``slices`` such slices (multi-slice: each device says its ``slice_index``).
    :class:`UsageError` without libtpu, or when libtpu refuses the name (its own words)."""
    version = libtpu_version()
    if version is None:
        import jax

        raise UsageError(
            f"--topology {name}: compiling for a TPU needs libtpu, which is not installed: "
            f'pip install "jxinspect[tpu]" (or "jax[tpu]=={jax.__version__}")'
        )
    no_tpu_host()
    from jax.experimental import topologies

    many: dict[str, Any] = {"num_slices": slices} if slices != 1 else {}
    try:
        description: Any = _described(topologies, name, many)
    except Exception as err:  # libtpu refuses the name: its words, one line
        said = (str(err).strip().splitlines() or [type(err).__name__])[0]
        asked = f"--topology {name}" + (f" --slices {slices}" if many else "")
        raise UsageError(f"{asked}: libtpu says: {said}") from None
    devices = tuple(description.devices)
    kind = str(devices[0].device_kind) if devices else "TPU"
    hbm = _hbm(devices[0]) if devices else None
    compiler = f"libtpu {version}"
    from jxinspect.core.model import Topology

    return TopologyDevices(devices, Topology(name, kind, len(devices), compiler, hbm, slices))


_SMALLER_THAN_A_HOST = "is not divisible by the given (or default) chips_per_host_bounds"
"""libtpu's refusal of a topology smaller than its default host (2x2x1 chips): ``v5e:1x1``,
``v5e:1x2``, ``v4:1x1x1`` (libtpu 0.0.42.1)."""


def _described(topologies: Any, name: str, many: dict[str, Any]) -> Any:
    """libtpu's description of topology ``name``; one smaller than libtpu's default host
    is one host of exactly its chips (``chips_per_host_bounds``, as raw JAX names a single
    chip: ``v5e:1x1`` with ``(1, 1, 1)``)."""
    try:
        return topologies.get_topology_desc(platform="tpu", topology_name=name, **many)
    except Exception as err:
        bounds = _chip_bounds(name)
        if _SMALLER_THAN_A_HOST not in str(err) or bounds is None:
            raise
        return topologies.get_topology_desc(
            platform="tpu", topology_name=name, chips_per_host_bounds=bounds, **many
        )


def _chip_bounds(name: str) -> tuple[int, int, int] | None:
    """``v5e:1x2`` → ``(1, 2, 1)``: the chips along each axis; ``None`` where the name
    says no such grid."""
    grid = re.fullmatch(r"[^:]+:(\d+)x(\d+)(?:x(\d+))?", name.strip())
    if grid is None:
        return None
    x, y, z = (int(part) if part else 1 for part in grid.groups())
    return x, y, z


_AVAILABLE = re.compile(r"exceeds available HBM \((\d+(?:\.\d+)?)([KMGTPE]?)\)")
_REQUIRED = re.compile(r"required for [^()]*\((\d+(?:\.\d+)?)([KMGTPE]?)\) exceeds available")
_UNITS = "BKMGTPE"


def _bytes(match: re.Match[str] | None) -> int | None:
    """``15.75`` ``G`` → bytes (XLA writes sizes in powers of 1024, two decimals)."""
    if match is None:
        return None
    scale: int = 1024 ** _UNITS.index(match.group(2) or "B")
    return round(float(match.group(1)) * scale)


def hbm_shortfall(message: str) -> Shortfall | None:
    """What the TPU compiler said a program it refused for want of memory needs and the
    chip has (``RESOURCE_EXHAUSTED: ... required for HLO temporaries (16.50G) exceeds
    available HBM (15.75G)``, as libtpu 0.0.42.1 and 0.0.50.1 write it); ``None`` for any
    other failure."""
    if "RESOURCE_EXHAUSTED" not in message or "HBM" not in message:
        return None
    from jxinspect.core.model import Shortfall

    return Shortfall(_bytes(_REQUIRED.search(message)), _bytes(_AVAILABLE.search(message)))


def local_tpu() -> Topology | None:
    """The TPU chips this process runs on (its default backend's devices, already
    started), described as a topology is; ``None`` where they are no TPU's."""
    import jax

    devices = jax.devices()
    if not devices or devices[0].platform != "tpu":
        return None
    from jxinspect.core.model import Topology

    limit = (devices[0].memory_stats() or {}).get("bytes_limit")
    return Topology("here", devices[0].device_kind, len(devices), f"libtpu {libtpu_version()}",
                    int(limit) if limit else None, here=True)  # fmt: skip


def _hbm(device: Device) -> int | None:
    """The HBM ``device`` has for a program, as its compiler says refusing one of 2**40
    bytes (20 ms, once per topology); libtpu gives a topology's devices no memory stats."""
    import jax
    import jax.numpy as jnp

    with placed_on(device):
        try:
            too_large = jax.ShapeDtypeStruct((2**40,), jnp.int8)
            jax.jit(lambda x: x).lower(too_large).compile()
        except Exception as err:  # the refusal is the answer
            said = hbm_shortfall(str(err))
            return said.available if said is not None else None
    return None


def placed_on(device: Device) -> AbstractContextManager[object]:
    """Inside the block, what is staged without a sharding is placed on ``device``
    (``jax.default_device``): a program with no mesh compiles for that device's chip."""
    import jax

    placing: AbstractContextManager[object] = jax.default_device(device)
    return placing
