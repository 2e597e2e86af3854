"""JX303: the compiled program's temporaries or collective bytes per step are over their
budgets, or it holds a collective of a kind the budgets forbid."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from jxinspect.core.facts import Facts, Read
from jxinspect.core.model import CompiledInfo, Finding, PeakBuffer, Report, at_source
from jxinspect.core.settings import Settings
from jxinspect.core.source import source_text
from jxinspect.core.units import human_bytes, human_flops
from jxinspect.rules.base import Conditions, Rule


def _over(report: Report, compiled: CompiledInfo, settings: Settings) -> Iterator[Finding]:
    budget, temporaries = settings.temporaries_per_device, compiled.memory.temporaries
    if budget is not None and temporaries is not None and temporaries > budget:
        yield RULE.finding(
            report,
            f"{human_bytes(temporaries)} of temporaries per device (XLA memory analysis) "
            f"is over the budget of {human_bytes(budget)}",
        )
    yield from _peak_over(report, compiled, settings.peak_per_device)
    yield from _flops_over(report, compiled, settings.flops_per_device)
    budget = settings.collective_bytes_per_step
    if compiled.collectives is None:
        if budget is not None or settings.forbid_collectives:
            yield RULE.finding(
                report,
                "the collective budgets cannot be judged: the compiled program's collectives "
                f"were not read ({compiled.unread})",
            )
        return
    total, count = sum(c.bytes_per_step for c in compiled.collectives), len(compiled.collectives)
    uncounted = sorted({c.loops[-1] for c in compiled.collectives if c.trip_count is None
                        and c.loops})  # fmt: skip
    at_least = "at least " if uncounted else ""
    if budget is not None and total > budget:
        yield RULE.finding(
            report,
            f"{at_least}{human_bytes(total)} per step per device moved by {count} "
            f"collective{'s' if count != 1 else ''} is over the budget of {human_bytes(budget)}",
        )
    elif budget is not None and uncounted:
        yield RULE.finding(
            report,
            f"the collective budget cannot be judged: collectives run in loops whose trip "
            f"count XLA does not say ({', '.join(uncounted)}); once each, they move "
            f"{human_bytes(total)} per step per device",
        )


def largest_buffers(buffers: Sequence[PeakBuffer], count: int = 3) -> str:
    """The largest buffers live at a peak, by path (else instruction and line, the
    library's beside it): ``w 9.0 GiB, fusion.2 1.0 MiB (train.py:12)``."""
    return ", ".join(
        f"{b.path or b.instruction} {human_bytes(b.bytes)}"
        + (
            f" ({source_text(b.file, b.line, b.library_file, b.library_line)})"
            if (b.file or b.library_file) and b.path is None
            else ""
        )  # fmt: skip
        for b in buffers[:count]
    )


def _peak_over(report: Report, compiled: CompiledInfo, budget: int | None) -> Iterator[Finding]:
    """The peak over ``peak_per_device``, with its largest buffers; a peak not read (or
    not read for this report) cannot pass the budget."""
    if budget is None:
        return
    peak = compiled.peak
    if peak is None or peak.bytes is None:
        why = "it was not read" if peak is None else (peak.unread or "unknown")
        yield RULE.finding(report, f"the peak budget cannot be judged: {why}")
        return
    if peak.bytes > budget:
        largest = (
            largest_buffers(peak.buffers)
            if peak.buffers is not None
            else "not read (XLA keeps no buffer assignment)"
        )
        at = f" at {peak.at.instruction}" if peak.at else ""
        yield RULE.finding(
            report,
            f"{human_bytes(peak.bytes)} live per device at the peak{at} is over the budget "
            f"of {human_bytes(budget)}; largest there: {largest}",
        )


def _flops_over(report: Report, compiled: CompiledInfo, budget: int | None) -> Iterator[Finding]:
    """The FLOPs over ``flops_per_device``; FLOPs unknown (a kernel without a cost
    estimate, or no analysis) cannot pass it."""
    if budget is None:
        return
    if compiled.flops is None:
        unknown = compiled.uncosted
        why = (
            "kernel " + ", ".join(k.name + at_source(k.file, k.line) for k in unknown)
            + (" has" if len(unknown) == 1 else " have") + " no cost estimate"
            if unknown else "XLA gave no cost analysis"
        )  # fmt: skip
        known = compiled.flops_known_part
        part = f" ({human_flops(known)} known)" if known is not None else ""
        yield RULE.finding(
            report, f"the FLOPs budget cannot be judged: the cost is unknown{part}; {why}"
        )
    elif compiled.flops > budget:
        yield RULE.finding(
            report,
            f"{human_flops(compiled.flops)} per device (XLA cost analysis) is over the budget "
            f"of {human_flops(budget)}",
        )


def needs(conditions: Conditions) -> Iterator[Read]:
    """The compiled program for any budget of its own; the peak for ``peak_per_device``."""
    settings = conditions.settings
    if (
        settings.temporaries_per_device is not None
        or settings.collective_bytes_per_step is not None
        or settings.peak_per_device is not None
        or settings.forbid_collectives
        or settings.flops_per_device is not None
    ):
        yield "compiled"
    if settings.peak_per_device is not None:
        yield "peak"


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    compiled = report.compiled
    if compiled is None:
        return  # no budget set (with one, the judge says the compile was not read)
    yield from _over(report, compiled, facts.settings)
    for collective in compiled.collectives or ():
        for limit in facts.settings.forbid_collectives:
            if limit.forbids(collective.kind, collective.bytes):
                moving = (
                    "" if limit.over is None
                    else f", {human_bytes(collective.bytes)} per device,"
                )  # fmt: skip
                limited = "" if limit.over is None else f": {limit}"
                yield RULE.finding(
                    report,
                    f"{collective.described}{moving} is forbidden "
                    f"(budgets.forbid_collectives{limited})",
                    path=collective.moved_paths,
                    at=collective,
                )
                break


RULE = Rule(
    code="JX303",
    severity="error",
    summary="compiled cost over the budget, or a forbidden collective",
    explanation="""\
The compiled program costs more per device than `budgets:` allows:
`temporaries_per_device` (XLA's memory analysis of the temporaries: activations kept for
the backward pass, a remat removed, a fusion that no longer fits),
`collective_bytes_per_step` (each collective's operand bytes times the trips of the loops
it runs in, summed), `peak_per_device` (the bytes live at the peak: arguments, results and
the temporaries live there, as `jxinspect lower --memory` shows them; the finding names
the largest; on a TPU its HBM with the code the chip loads there, VMEM and SMEM apart),
`flops_per_device` (XLA's cost analysis, which counts a Pallas kernel by its
`pl.CostEstimate`: a kernel without one leaves the FLOPs unknown, and the budget cannot
pass on them), or it holds a collective whose kind `forbid_collectives` lists
(`[all-to-all, all-gather]`), or one that moves more per device than the size a kind is
given there (`["all-gather > 1 GiB"]`: the gather of a small bias passes, the weights'
does not). A forbidden collective is named with its mesh axes, the argument or result
paths it moves and its source line.

These need the compiled program: lint compiles a target one is set for; `lower` without
`--compile` (or a compile that failed) is one finding that they cannot be judged. Off
unless a budget is set. Where
the compiled program's collectives could not be read, a collective budget or
`forbid_collectives` is a finding of its own, and so is `peak_per_device` where the peak
could not be read, and `collective_bytes_per_step` where a collective runs in a loop whose
trip count XLA does not say (a TPU's loops, a loop on a traced bound: counted once, a
lower bound): a gate that cannot see does not pass.

Fix: shard or rematerialize what grew (`jxinspect lower --compile --show collectives`
lists each collective with its paths), or raise the budget.""",
    check=check,
    reads=("compiled", "peak"),
    needs=needs,
)
