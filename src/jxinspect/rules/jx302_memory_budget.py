"""JX302: the program's arguments and results need more bytes per device than budgeted."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def bytes_per_device(report: Report) -> tuple[int, str]:
    """Bytes per device and how they were counted.

    XLA's memory analysis (arguments + outputs + temporaries - aliased, and the code where
    the device loads it into the same memory: a TPU's HBM) once compiled; otherwise
    arguments plus the results that do not reuse a donated argument's buffer.
    """
    memory = report.compiled.memory if report.compiled is not None else None
    if (
        memory is not None
        and memory.source == "xla"
        and memory.arguments is not None
        and memory.outputs is not None
    ):
        total = memory.arguments + memory.outputs + (memory.temporaries or 0)
        total += memory.loaded_code or 0
        how = "XLA memory analysis" + (", with the code" if memory.loaded_code else "")
        return total - (memory.aliased or 0), how
    aliased = {
        leaf.compiled_alias if report.compiled is not None else leaf.aliased_output
        for leaf in report.inputs
    }
    arguments = sum(leaf.bytes_per_device or 0 for leaf in report.inputs if leaf.status != "pruned")
    results = sum(
        leaf.bytes_per_device or 0 for leaf in report.outputs if leaf.index not in aliased
    )
    return arguments + results, "arguments + results"


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    budget = facts.settings.bytes_per_device
    if budget is None:
        return
    total, how = bytes_per_device(report)
    if total > budget:
        yield RULE.finding(
            report,
            f"{human_bytes(total)} per device ({how}) is over the budget of {human_bytes(budget)}",
        )


RULE = Rule(
    code="JX302",
    severity="error",
    summary="bytes per device over the budget",
    explanation="""\
The program needs more memory per device than `budgets: {bytes_per_device: ...}` allows.
Lowered, the count is the per-device shards of every argument plus every result that
does not reuse a donated argument's buffer; with `compile: true` it is XLA's own memory
analysis (arguments + outputs + temporaries - aliased bytes; on a TPU also the program's
code, which the chip loads into HBM). A change that drops a
sharding, widens a dtype or adds state shows up here before it runs out of memory on
the accelerator.

Fix: shard the largest arguments (see the per-device column of `jxinspect lower`), donate
buffers that are updated in place, or raise the budget. Off unless a budget is set.""",
    check=check,
    reads=("lowered", "compiled"),
)
