"""JX201: a large argument is left fully replicated on a multi-device mesh."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.units import human_bytes, type_text
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    devices = report.mesh.size if report.mesh is not None else report.num_devices
    if devices <= 1:
        return
    for leaf in report.inputs:
        sharding = leaf.compiled_sharding or leaf.sharding
        if sharding is None or not sharding.is_replicated or leaf.status == "pruned":
            continue
        if (leaf.bytes_per_device or 0) >= facts.settings.replicated_bytes:
            yield RULE.finding(
                report,
                f"argument {leaf.path} ({type_text(leaf.shape, leaf.dtype)}, "
                f"{human_bytes(leaf.bytes_per_device)}) is replicated on all {devices} devices "
                f"(threshold {human_bytes(facts.settings.replicated_bytes)})",
                leaf.path,
            )


RULE = Rule(
    code="JX201",
    severity="warning",
    summary="large argument left fully replicated on a multi-device mesh",
    explanation="""\
An argument at least `replicated_bytes` large (1 MiB by default, bytes per device) has a
fully replicated sharding on a mesh of several devices: every device holds the whole
array. For weights and optimizer state that is usually an oversight (a missing entry in
in_shardings / in_specs, or P() where P('fsdp', None) was meant), and it multiplies the
memory the program needs by the number of devices.

Fix: shard the argument over a mesh axis (--in-specs, in_shardings, or the spec language's
f32[8192@fsdp,1024]). Tune: `budgets: {replicated_bytes: 64MiB}`. Silence: `ignore: [JX201]`.""",
    check=check,
)
