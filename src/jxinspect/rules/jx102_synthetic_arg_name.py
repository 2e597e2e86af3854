"""JX102: an argument carries a fallback name such as ``flat_args[0]``."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.survey import pmap_shape
from jxinspect.rules.base import Rule, Surveyed


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    for leaf in report.inputs:
        if leaf.status == "synthetic":
            yield RULE.finding(
                report,
                f"argument {leaf.path} carries the fallback name {leaf.name!r}",
                leaf.path,
                shape=pmap_shape(report, "args"),
            )


RULE = Rule(
    code="JX102",
    severity="warning",
    summary="argument has a fallback name (flat_args[i], args[i], kwargs['k'])",
    explanation="""\
JAX could not bind the call to the function's signature, or staged an internal wrapper,
and named the argument by position: `flat_args[0]` (pmap, which is built on shard_map in
current JAX), `args[1]` or `kwargs['k']` (no bindable signature). The real name, e.g.
`params['w']`, is lost in the StableHLO and everything downstream.

Fix: prefer jax.jit with shardings or jax.shard_map over jax.pmap; give wrappers a
signature (functools.wraps). Silence: `ignore: [JX102]`.""",
    check=check,
    surveyed=Surveyed("pmap:args"),
)
