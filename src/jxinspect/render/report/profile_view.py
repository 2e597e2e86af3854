"""``jxinspect profile``'s text: the measured step, then where its time goes by the user's
line and by collective (the largest first, bounded), as plain lines."""

from __future__ import annotations

from jxinspect.core.profile import Profile
from jxinspect.core.units import human_bytes
from jxinspect.core.units import human_seconds as seconds
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.source import source_text
from jxinspect.render.common.table import plain_table

TOP = 15
"""Rows a table shows (the rest summed in one line)."""


def render(profile: Profile) -> str:
    step = profile.step_seconds
    devices = (f"{profile.devices} {esc(profile.device_kind or profile.platform)} device"
               f"{'s' if profile.devices != 1 else ''}")  # fmt: skip
    times = f"median {seconds(step.median)} (min {seconds(step.min)}, max {seconds(step.max)})"
    head = (
        [f"measured:     {profile.steps} calls of the run's own (after its first "
         f"{profile.warmup}) on {devices}",
         f"call:         {times}, each call's span in the trace (its first instruction's "
         "start to its last one's end)"]
        if profile.recorded else
        [f"measured:     {profile.steps} steps after {profile.warmup} warm-up on {devices}",
         f"step:         {times}, wall time of the call until its outputs are ready"]
    )  # fmt: skip
    if profile.flops_per_second is not None:
        head.append(f"achieved:     {profile.flops_per_second / 1e9:.3g} GFLOP/s per device "
                    "(XLA's cost analysis over the median step)")  # fmt: skip
    if profile.trace is not None:
        head.append(f"trace:        {esc(profile.trace)} (XProf's layout: xprof, TensorBoard, "
                    "Perfetto)")  # fmt: skip
    if profile.unread is not None or profile.instruction_seconds is None:
        return "\n".join([*head, f"by line:      not measured: {esc(profile.unread or '')}"]) + "\n"
    busy = f", {profile.busy:.0%} of the step" if profile.busy is not None else ""
    head.append(f"instructions: {seconds(profile.instruction_seconds)} per step and device{busy}")
    return "\n".join([*head, "", *_lines(profile), *_collectives(profile)]) + "\n"


def _lines(profile: Profile) -> list[str]:
    rows: list[tuple[str, ...]] = [
        (seconds(line.seconds), f"{line.share:.1%}", str(line.count),
         source_text(line.file, line.line, line.library_file, line.library_line) or "(no line)",
         _cut(", ".join(line.instructions), 60))
        for line in profile.by_line[:TOP]
    ]  # fmt: skip
    rest = profile.by_line[TOP:]
    more = (
        [f"  and {len(rest)} more lines ({seconds(sum(r.seconds for r in rest))})"] if rest else []
    )
    table = plain_table(("time/step", "share", "runs", "source", "instructions"), rows)
    return [f"time by line ({len(profile.by_line)})", *(f"  {row}" for row in table), *more]


def _collectives(profile: Profile) -> list[str]:
    if not profile.collectives:
        return []
    rows: list[tuple[str, ...]] = [
        (c.kind, ",".join(c.axes or ()) or "?", seconds(c.seconds), human_bytes(c.bytes),
         f"{human_bytes(round(c.bytes_per_second))}/s" if c.bytes_per_second else "",
         _cut(", ".join(c.moves), 60), c.instruction)
        for c in profile.collectives[:TOP]
    ]  # fmt: skip
    table = plain_table(("collective", "axes", "time/step", "bytes", "achieved", "moves", "op"),
                        rows)  # fmt: skip
    return ["", f"collectives measured ({len(profile.collectives)})",
            *(f"  {row}" for row in table)]  # fmt: skip


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
