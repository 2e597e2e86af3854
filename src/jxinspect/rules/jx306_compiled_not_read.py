"""JX306: the compiled program (or the partitioner's record of it) could not be read, so
what needs it is unknown."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    compiled = report.compiled
    if compiled is not None and compiled.unread is not None:
        yield RULE.finding(
            report,
            f"{compiled.unread}: its collectives and aliasing are unknown, and no rule that "
            "needs them passed",
        )
    if compiled is not None and compiled.origins_unread is not None:
        yield RULE.finding(
            report,
            f"where each sharding came from is unknown ({compiled.origins_unread}): which "
            "values the partitioner replicated silently (JX204) was not judged",
        )


RULE = Rule(
    code="JX306",
    severity="error",
    summary="compiled program not read",
    explanation="""\
The program compiled, but jxinspect could not read XLA's optimized program
(`compiled.as_text()`): it holds something this release of jxinspect does not know, such
as a replica-group spelling a newer XLA writes. The compiled program's collectives and
aliasing are then unknown, shown as "not read" (null in the JSON), never as none: JX301
says nothing of the compiled aliasing, and collective budgets (JX303) and the baseline's
collectives (JX304) cannot be judged. A CI gate that cannot see must not pass, so this
is an error wherever the program is compiled (`compile: true`); the finding says what
failed and under which JAX, `--traceback` prints the whole error.

The same holds for the partitioner's record of where each sharding came from (`--why`,
lint's `why: true`): where it could not be read (GSPMD keeps none; the partitioner's debug
compile crashed), JX204 cannot judge the program, and the finding says why.

Fix: report it with the JAX version and the line the finding quotes; meanwhile lint
without `compile: true` (or without `why: true`, where the partitioner keeps no record),
or `ignore: [JX306]` to accept the blind spot knowingly.""",
    check=check,
    reads=("compiled", "origins"),
)
