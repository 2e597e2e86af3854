"""JX403: the processes of one run lowered different programs for one function."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding
from jxinspect.rules.base import ComparisonRule


def check(comparison: ProgramComparison) -> Iterator[Finding]:
    if comparison.across != "processes" or comparison.same_program:
        return
    said = f": {comparison.difference}" if comparison.difference is not None else ""
    yield RULE.finding(
        comparison,
        f"`{comparison.function}`: {comparison.before} and {comparison.after} lowered "
        f"different programs{said}",
    )


RULE = ComparisonRule(
    code="JX403",
    severity="error",
    summary="the processes of one run lowered different programs",
    explanation="""\
Every process of a multi-process JAX run (`jax.distributed`) must lower the same program
for a function: each runs its part of one SPMD program, and a process whose program
differs waits in its first collective for partners that never come (a job that hangs
for hours), or computes something else. `jxinspect show FOLDER` of a recording of such
a run (`jxinspect record`, each process in FOLDER/process-K) compares each function's
program identity across the processes: the lowered module without locations and
metadata, hashed.

The finding names the first real difference between a process that lowered the
program most processes lowered and the first one that did not: an argument whose type
or sharding differs (a batch of another size on one host), a static argument's value
(a flag read from the host's environment), or else the first operation that differs,
with the source line it came from in each.

Fix: make every process call the function with the same global shapes, shardings and
static values (read configuration once and broadcast it; pad the last batch), and keep
host-dependent values (hostnames, process indices, clocks) out of traced code.""",
    check=check,
)
