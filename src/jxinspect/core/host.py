"""What this machine lets the process use, read from the operating system."""

from __future__ import annotations

import resource
from pathlib import Path


def available_memory() -> int | None:
    """Bytes this process can still take: the least of the memory the kernel reports
    available, what the cgroup's limit leaves, and what the address-space limit
    (``ulimit -v``) leaves; ``None`` where none of them can be read."""
    read = (_meminfo_available(), _cgroup_left(), _address_space_left())
    bounds = [bound for bound in read if bound is not None]  # 0 is a bound: nothing left
    return min(bounds) if bounds else None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii")
    except (OSError, ValueError):
        return None


def _meminfo_available() -> int | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


def _cgroup_left() -> int | None:
    limit, current = _read("/sys/fs/cgroup/memory.max"), _read("/sys/fs/cgroup/memory.current")
    if limit is None or current is None or not limit.strip().isdigit():
        return None  # no cgroup v2 here, or "max"
    return max(0, int(limit) - int(current))


def _address_space_left() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    for line in (_read("/proc/self/status") or "").splitlines():
        if line.startswith("VmSize:"):
            return max(0, soft - int(line.split()[1]) * 1024)
    return soft
