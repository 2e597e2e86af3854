"""JX307: compiled for a TPU topology, the program does not fit in a device's memory."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts, Read
from jxinspect.core.model import Finding, Report
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Conditions, Rule
from jxinspect.rules.jx302_memory_budget import bytes_per_device, unknown_sizes
from jxinspect.rules.jx303_cost_budget import largest_buffers


def largest_leaves(report: Report, count: int = 3) -> str:
    """The largest arguments and results per device: ``w 16.0 GiB, x 256.0 MiB``."""
    sizes = [
        (leaf.bytes_per_device, leaf.path) for leaf in report.inputs if leaf.status != "pruned"
    ]
    sizes += [(leaf.bytes_per_device, leaf.path) for leaf in report.outputs]
    sized = sorted(((size, path) for size, path in sizes if size), key=lambda pair: -pair[0])
    return ", ".join(f"{path} {human_bytes(size)}" for size, path in sized[:count]) or "none"


def needs(conditions: Conditions) -> tuple[Read, ...]:
    """The peak, compiled for a topology under a budget of less than all its HBM."""
    return ("peak",) if conditions.topology and conditions.settings.hbm_fraction < 1 else ()


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    topology = report.topology
    if topology is None:
        return
    short = report.does_not_fit
    if short is not None:
        needs = (
            f"needs {human_bytes(short.required)}" if short.required is not None else "needs more"
        )
        has = f"has {human_bytes(short.available)}" if short.available is not None else "has less"
        yield RULE.finding(
            report,
            f"does not fit in a {topology.device_kind}: the program {needs} per device and "
            f"the chip {has} (its compiler refused it); largest arguments and results per "
            f"device: {largest_leaves(report)}",
        )
        return
    compiled = report.compiled
    if compiled is None or topology.hbm is None:
        return
    peak = compiled.peak
    if peak is not None and peak.allocated is not None:
        used, how = peak.allocated, "allocated to run it"
    elif peak is not None and peak.bytes is not None:
        used, how = peak.bytes, "at its peak"
    else:
        used, how, unknown = bytes_per_device(report)
        how = f"by {how}" + (f"; at least: {unknown_sizes(unknown)}" if unknown else "")
    limit = facts.settings.hbm_fraction * topology.hbm
    if used > limit:
        largest = (
            f"largest there: {largest_buffers(peak.buffers)}"
            if peak is not None and peak.buffers
            else f"largest arguments and results per device: {largest_leaves(report)}"
        )  # fmt: skip
        yield RULE.finding(
            report,
            f"{human_bytes(used)} per device ({how}) is over "
            f"{facts.settings.hbm_fraction:.0%} of a {topology.device_kind}'s "
            f"{human_bytes(topology.hbm)} of HBM (budgets.hbm_fraction); {largest}",
        )


RULE = Rule(
    code="JX307",
    severity="error",
    summary="does not fit in the TPU's memory",
    explanation="""\
Compiled for a TPU topology that is not here (`--topology v5e:2x2`) or for this
machine's chips, the program needs more memory per device than the chip has: the TPU's
compiler refused it for want of HBM (`RESOURCE_EXHAUSTED`, its own figures quoted), or it
compiled but what it allocates to run (XLA's memory analysis: arguments + outputs +
temporaries - aliased, and the code, which the chip loads into HBM; within 0.1 % of what
a v5e chip needed free) is over `budgets: {hbm_fraction: ...}` of the HBM a device has
(default: all of it). The on-chip memories (VMEM, SMEM) are left out: `--memory` lists
them apart. Before anyone pays for the slice.

Fix: shard the largest arguments and results named (the per-device column of `jxinspect
lower`), donate buffers updated in place, rematerialize (`jax.checkpoint`) what the
backward pass keeps, or pick a topology with more devices or more HBM.""",
    check=check,
    reads=("lowered", "compiled", "peak"),
    needs=needs,
)
