"""JX204: the partitioner dropped a mesh axis that a declaration gave a value."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Collective, DroppedAxes, Finding, Report, at_source
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    compiled = report.compiled
    for value in (compiled.dropped if compiled is not None else None) or ():
        at = at_source(value.file, value.line, value.library_file, value.library_line)
        axes = ", ".join(dict.fromkeys(o.axis for o in value.dropped))
        declared = "; ".join(f"{o.axis} from {o.declaration}" for o in value.dropped)
        made = _made_by(report, value)
        yield RULE.finding(
            report,
            f"{value.value}{at} is {value.sharding}, not sharded over {axes} as declared "
            f"({declared}): the partitioner dropped it there{made}, and the devices "
            f"along {axes} each hold the same copy of it",
            value.path,
            at=value,
        )


def _made_by(report: Report, value: DroppedAxes) -> str:
    """`` (all-gather over data moving result, 80 B per device)``: the compiled program's
    collectives over a dropped axis at the value's line, or moving the result's data, as
    the cost rules say a collective (:attr:`Collective.described`)."""
    axes = {o.axis for o in value.dropped}
    collectives = report.compiled.collectives if report.compiled is not None else None
    found = [c for c in collectives or () if _makes(c, value, axes)]
    said = [f"{c.described}, {human_bytes(c.bytes)} per device" for c in found]
    return f" ({'; '.join(said)})" if said else ""


def _makes(collective: Collective, value: DroppedAxes, axes: set[str]) -> bool:
    if not axes & set(collective.axes or ()):
        return False
    if value.path is not None:
        return value.path in collective.operand_paths
    return value.line is not None and (collective.file, collective.line) == (value.file, value.line)


RULE = Rule(
    code="JX204",
    severity="warning",
    summary="a value the partitioner left replicated over an axis a declaration shards it over",
    explanation="""\
Shardy's record of a compile (`lower --why`) names, for each value, the declaration that
gave each mesh axis of its sharding: an argument's in sharding, a constraint, a
shard_map. Here a value has lost an axis that such a declaration gave it: the partitioner
could not keep it (a reshape that cannot split the dimension so, a dimension the axis
does not divide, 17 rows over 4 devices) and gathered the value instead, silently. The
devices along that axis then each hold the same copy: the memory and the all-gather the
declaration meant to avoid. A value whose own sharding the code declares (a constraint, a
declared out sharding) is never reported: its replication is the code's choice.

Fix: keep the axis where it was lost (reshape to a layout the axis still divides, pad the
dimension to a multiple of the axis size), or, where replication is what you want, say so
with a `with_sharding_constraint` at that line (or out_shardings for a result). Only
reported with `--why` (Shardy: JAX 0.7 on). Silence: `ignore: [JX204]`.""",
    check=check,
    reads=("lowered", "compiled", "origins"),
)
