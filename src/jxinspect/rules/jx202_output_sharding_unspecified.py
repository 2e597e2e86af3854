"""JX202: an output's sharding is left to the compiler although the inputs declare theirs."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Output, Report, Sharding, at_source
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    if report.reached == "traced" or report.mesh is None or report.mesh.size <= 1:
        return
    if not any(_declared(leaf.sharding) for leaf in report.inputs):
        return
    undeclared = [o for o in report.outputs if o.sharding is None and not o.left_to_compiler]
    wrapped = [o for o in undeclared if o.status == "renamed"]
    if len(wrapped) > 1:
        yield _wrapper_finding(report, wrapped)
    for leaf in undeclared:
        if len(wrapped) < 2 or leaf.status != "renamed":
            chosen = leaf.compiled_sharding
            tail = f"; XLA chose {chosen.readable}" if chosen is not None else ""
            tail += _made_by(report, leaf.path) if chosen is not None else ""
            yield RULE.finding(
                report,
                f"output {leaf.path} has no declared sharding although the inputs declare "
                f"theirs: the compiler picks its layout{tail}",
                leaf.path,
            )


SHOWN = 2


def _wrapper_finding(report: Report, outputs: list[Output]) -> Finding:
    """One finding for the results a library's wrapper returns (``nnx.jit``'s updated
    state): the wrapper declares none of their shardings, so each would say the same."""
    chosen = [o for o in outputs if o.compiled_sharding is not None]
    examples = ", ".join(o.path for o in outputs[:SHOWN])
    more = f" and {len(outputs) - SHOWN} more" if len(outputs) > SHOWN else ""
    tail = f"; the outputs table shows the layout XLA chose for {len(chosen)}" if chosen else ""
    return RULE.finding(
        report,
        f"{len(outputs)} outputs of the library's wrapper have no declared sharding (it "
        f"declares none for the state it returns): the compiler picks their layout: "
        f"{examples}{more}{tail}",
        outputs[0].path,
    )


def _made_by(report: Report, path: str) -> str:
    """``, which all-reduce over data makes (128 B per device, at step.py:8)``: the
    compiled program's collectives whose data becomes that output."""
    compiled = report.compiled
    found = [c for c in (compiled.collectives or ()) if path in c.operand_paths] if compiled else []
    said = []
    for c in found:
        axes = ",".join(c.axes) if c.axes else "?"
        where = at_source(c.file, c.line, c.library_file, c.library_line)
        at = f",{where}" if where else ""
        said.append(f"{c.kind} over {axes} ({human_bytes(c.bytes)} per device{at})")
    return f", which {' and '.join(said)} makes" if said else ""


def _declared(sharding: Sharding | None) -> bool:
    """A sharding the program declares (JAX's own replicated one for a scalar is not)."""
    return sharding is not None and sharding.source != "jax_default"


RULE = Rule(
    code="JX202",
    severity="warning",
    summary="output sharding left to the compiler where input shardings are declared",
    explanation="""\
The inputs carry declared shardings, but a result of @main has none: XLA's sharding
propagation decides its layout. The choice can change with an unrelated edit or a new
XLA version, silently adding a reshard (and its communication) at the next step, or
replicating a large result on every device. Lint with `compile: true` to see the layout
XLA chose, and the collectives that make it (their kind, axes, bytes and line).

Fix: declare out_shardings (--out-specs, out_specs in JXINSPECT or jxinspect.yaml) for
every result; a result whose `out_shardings` entry is `None` is left to the compiler on
purpose, and is not reported. A library's wrapper (`nnx.jit`) declares no sharding for
the state it returns: its results are one finding, not one each; to declare them, stage
the `nnx.split` state under `jax.jit` with `out_shardings`. Silence: `ignore: [JX202]`.""",
    check=check,
)
