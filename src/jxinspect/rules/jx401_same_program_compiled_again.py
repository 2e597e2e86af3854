"""JX401: a recorded run compiled the same program of a function again."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.recompiles import Compile
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    again = [c for c in facts.compiles if c.number > 1 and not c.reasons]
    if again:
        first = again[0]
        numbers = ", ".join(f"#{c.number}" for c in again)
        where = f" (called from {first.call_site})" if first.call_site else ""
        yield RULE.finding(
            report,
            f"{first.function} compiled the same program again {len(again)}× ({numbers} of "
            f"{len(facts.compiles)} compiles){where}: nothing JAX's cache tells "
            "calls apart changed",
        )
    renewed = _new_function_same_program(facts.compiles)
    if renewed:
        first = renewed[0]
        where = f" (called from {first.call_site})" if first.call_site else ""
        yield RULE.finding(
            report,
            f"{first.function} compiled the same program again {len(renewed)}× for a new "
            f"function object of the same code ({len(facts.compiles)} compiles){where}: "
            "a jit (or lambda) made anew each call",
        )


def _new_function_same_program(compiles: tuple[Compile, ...]) -> list[Compile]:
    """The compiles whose one difference from the earlier ones of their code is a new
    function object, and which made a program an earlier compile of it had made (its
    record: one per distinct program); JAX calls each a "never seen function"."""
    made: set[tuple[str | None, str]] = set()
    found = []
    for compile in compiles:
        program = (compile.source, compile.folder)
        if (
            compile.number > 1
            and compile.reasons
            and all(r.kind == "function" for r in compile.reasons)
            and program in made
        ):
            found.append(compile)
        made.add(program)
    return found


RULE = Rule(
    code="JX401",
    severity="warning",
    summary="the same program compiled again",
    explanation="""\
A recorded run (`jxinspect record`, judged by `jxinspect lint --records FOLDER`) traced,
lowered and compiled a function of yours again although nothing that JAX's tracing cache
tells calls apart had changed: the same function object, the same input types,
shardings, static values and configuration, and the same program came out. Each such
compile is pure waste: JAX threw its cache entry away, or never kept it.

Usual causes: `jax.clear_caches()` (or a library that calls it) inside the loop, a
`jit` whose cache is full (`jax_compilation_cache` settings), a function object that
compares equal but hashes differently each call, or a wrapper that makes a new `jit`
per call around the same function. A new function object of the same code that makes
the same program (`jax.jit(lambda x: ...)` inside the loop: JAX says "never seen
function" every step) is reported too: its cache entry can never be hit.

Fix: make the `jit` once, outside the loop, and keep the function object alive; see
the compiles with `jxinspect show FOLDER`. Only judged on recordings.""",
    check=check,
    reads=("compiles",),
)
