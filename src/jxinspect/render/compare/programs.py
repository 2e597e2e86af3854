"""What a diff of two recordings says of each function's programs: the same program
(JAX's persistent compilation cache can hit) or the first real difference, the
comparison rules' findings (JX404), and what each run's guard checked and found. Raw
text: each renderer escapes it."""

from __future__ import annotations

from jxinspect.core.diff import DiffReport, TargetDiff
from jxinspect.render.common.guard import NOT_GUARDED, guard_said

SAME = "same program (a persistent cache hit is possible)"


def program_line(target: TargetDiff) -> str | None:
    """``program: same program (...)`` or ``program: different (...): first difference``;
    ``None`` where the inputs were not two recordings."""
    compared = target.program
    if compared is None:
        return None
    if not compared.before_identity.program or not compared.after_identity.program:
        return "program: not compared (a recording made before programs were identified)"
    if compared.same_program:
        names = (
            ""
            if compared.before_identity.names == compared.after_identity.names
            else ("; the names it carries differ")
        )
        if compared.key_differences:
            differ = "; ".join(compared.key_differences)
            return (f"program: same program, but JAX's persistent cache key differs "
                    f"({differ}): no cache hit between them{names}")  # fmt: skip
        return f"program: {SAME}{names}"
    ids = f"{compared.before_identity.short} → {compared.after_identity.short}"
    said = f": {compared.difference}" if compared.difference is not None else ""
    return f"program: different ({ids}){said}"


def finding_lines(diff: DiffReport) -> list[str]:
    """``error JX404 ...`` for each finding of the comparison rules."""
    return [f"{f.severity} {f.code} {f.message}" for f in diff.findings]


def guard_lines(diff: DiffReport) -> list[str]:
    """``guard before: 2 programs across processes checked the same on all 2 processes
    (as process 0 counted them)``, and ``guard after: stopped the run: ...``: what the
    guard of each side's run checked and found, where a side is a process's folder of a
    guarded run (none where neither is)."""
    sides = (("before", diff.guard_before), ("after", diff.guard_after))
    if all(run is None for _, run in sides):
        return []
    return [
        f"guard {side}: {line}"
        for side, run in sides
        for line in (
            guard_said([(run.process, run.guard)], run.processes) if run else [NOT_GUARDED]
        )
    ]
