"""JX203: an axis name JAX made up for its own use appears in the program's mesh."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Input, Output, Report, Sharding
from jxinspect.rules.base import Rule


def _names(sharding: Sharding | None) -> set[str]:
    if sharding is None:
        return set()
    names = {axis.split(":")[0] for axes in sharding.spec for axis in axes}
    if sharding.mesh is not None:
        names |= {name for name, _ in sharding.mesh.axes}
    return names


def axis_names(report: Report) -> set[str]:
    """Every mesh axis name in the report: the mesh's and those its shardings use."""
    names = {name for name, _ in report.mesh.axes} if report.mesh is not None else set()
    leaves: list[Input | Output] = [*report.inputs, *report.outputs]
    for leaf in leaves:
        names |= _names(leaf.sharding) | _names(leaf.compiled_sharding)
    return names


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for name in sorted(n for n in axis_names(report) if n.startswith("_")):
        hint = " (pmap without axis_name)" if name == "_internal_pmap_axis_name" else ""
        yield RULE.finding(report, f"internal axis name {name!r} leaks into the program{hint}")


RULE = Rule(
    code="JX203",
    severity="warning",
    summary="internal axis name leaks into the program",
    explanation="""\
A mesh axis in the lowered program has a name that starts with `_`, such as JAX's own
`_internal_pmap_axis_name` (what jax.pmap calls its axis when no axis_name is given).
Such names appear in sdy.mesh, in every sharding, in XLA dumps and in profiles, where
they say nothing about what the axis is for; code that matches axes by name (collectives,
shard_map specs, checkpoint layouts) can bind to them by accident.

Fix: name the axis: jax.pmap(f, axis_name='batch') (--axis-name batch), or give the Mesh
meaningful axis names. Silence: `ignore: [JX203]`.""",
    check=check,
)
