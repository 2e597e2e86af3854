"""What the guard (``record --guard``) checked and found in a recorded run, in words: the
one wording that ``show`` of a recording of several processes and ``diff-debug`` of two
process folders both write. Raw text: each renderer escapes it for where it goes (the
reason it stopped the run names the user's function)."""

from __future__ import annotations

from collections.abc import Sequence

from jxinspect.core.recording import GuardSummary

NOT_GUARDED = "the run was not guarded"
"""A side of a diff whose run had no guard, beside one that had."""


def guard_said(
    summaries: Sequence[tuple[int | None, GuardSummary]], processes: int | None
) -> list[str]:
    """``2 programs across processes checked the same on all 2 processes``, then
    ``stopped the run: WHY`` for each reason the guard stopped it (none where it stopped
    nothing); ``summaries``: each guarded process's index and its guard's summary (one,
    for one process's folder, said as that process counted), ``processes``: how many
    the run had (``None``: not said)."""
    on = f"all {processes} processes" if processes else "every process"
    counts = {summary.checked for _, summary in summaries}
    if len(counts) == 1:
        checked = counts.pop()
        said = (f"{checked} program{'s' if checked != 1 else ''} across processes checked "
                f"the same on {on}")  # fmt: skip
    else:
        said = f"programs across processes checked the same on {on}: " + ", ".join(
            f"process {process} {summary.checked}" for process, summary in summaries
        )
    if len(summaries) == 1 and summaries[0][0] is not None and processes != 1:
        said += f" (as process {summaries[0][0]} counted them)"
    stopped = sorted({summary.stopped for _, summary in summaries if summary.stopped})
    return [said, *(f"stopped the run: {why}" for why in stopped)]
