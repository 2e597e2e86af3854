"""JX302: the program's arguments and results need more bytes per device than budgeted."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Input, Output, Report, shard_bytes
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def bytes_per_device(report: Report) -> tuple[int, str, tuple[str, ...]]:
    """Bytes per device, how they were counted, and the leaves whose size is unknown
    (counted as 0: the total is then a lower bound).

    XLA's memory analysis (arguments + outputs + temporaries - aliased, and the code where
    the device loads it into the same memory: a TPU's HBM) once compiled; otherwise
    arguments plus the results that do not reuse a donated argument's buffer, each by its
    per-device size: unknown where the compiler picks its layout (a result given no
    sharding, before compiling) or a dimension is symbolic.
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
        return total - (memory.aliased or 0), how, ()
    aliased = {
        leaf.compiled_alias if report.compiled is not None else leaf.aliased_output
        for leaf in report.inputs
    }
    leaves: list[Input | Output] = [leaf for leaf in report.inputs if leaf.status != "pruned"]
    leaves += [leaf for leaf in report.outputs if leaf.index not in aliased]
    total = sum(leaf.bytes_per_device or 0 for leaf in leaves)
    unknown = tuple(leaf.path for leaf in leaves if leaf.bytes_per_device is None)
    return total, "arguments + results", unknown


def unknown_sizes(paths: tuple[str, ...]) -> str:
    """``the per-device size of result[0] and 2 more is unknown (...)``."""
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return (
        f"the per-device size of {paths[0]}{more} is unknown before compiling (a layout "
        "the compiler picks, or a symbolic dimension; compile: true, or --compile)"
    )


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    budget = facts.settings.bytes_per_device
    if budget is None:
        return
    total, how, unknown = bytes_per_device(report)
    if total > budget:
        at_least = "at least " if unknown else ""
        yield RULE.finding(
            report,
            f"{at_least}{human_bytes(total)} per device ({how}) is over the budget of "
            f"{human_bytes(budget)}",
        )
        return
    bound = _at_most(report, unknown)
    if unknown and (bound is None or total + bound > budget):
        yield RULE.finding(
            report,
            f"the budget of {human_bytes(budget)} per device cannot be judged: "
            f"{unknown_sizes(unknown)}; the rest is {human_bytes(total)} ({how})",
        )


def _at_most(report: Report, unknown: tuple[str, ...]) -> int | None:
    """The most the leaves of unknown per-device size can take on a device: their global
    sizes (a shard is never larger); ``None`` where a dimension is symbolic."""
    paths = set(unknown)
    leaves: list[Input | Output] = [*report.inputs, *report.outputs]
    sizes = [shard_bytes(leaf.shape, leaf.dtype) for leaf in leaves if leaf.path in paths]
    return None if any(size is None for size in sizes) else sum(s or 0 for s in sizes)


RULE = Rule(
    code="JX302",
    severity="error",
    summary="bytes per device over the budget",
    explanation="""\
The program needs more memory per device than `budgets: {bytes_per_device: ...}` allows.
Lowered, the count is the per-device shards of every argument plus every result that
does not reuse a donated argument's buffer (where one's layout is left to the compiler
its size is unknown until compiled: the rule then says it cannot judge the budget,
unless the rest is over it already); with `compile: true` it is XLA's own memory
analysis (arguments + outputs + temporaries - aliased bytes; on a TPU also the program's
code, which the chip loads into HBM). A change that drops a
sharding, widens a dtype or adds state shows up here before it runs out of memory on
the accelerator.

Fix: shard the largest arguments (see the per-device column of `jxinspect lower`), donate
buffers that are updated in place, or raise the budget. Off unless a budget is set.""",
    check=check,
    reads=("lowered", "compiled"),
)
