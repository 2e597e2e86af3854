"""JX301: a donated argument is not aliased to any output, so the donation is wasted."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Input, Output, Report
from jxinspect.core.units import type_text
from jxinspect.rules.base import Rule


def _unused(leaf: Input, compiled: bool) -> bool:
    if compiled:
        return leaf.compiled_alias is None
    return leaf.aliased_output is None and not leaf.buffer_donor


def _same_type(leaf: Input, report: Report) -> list[Output]:
    return [o for o in report.outputs if o.shape == leaf.shape and o.dtype == leaf.dtype]


def can_take(leaf: Input, report: Report) -> bool:
    """Some output could take the argument's buffer: one of its type and per-device
    shape (the compiler aliases nothing else), or one whose layout or the argument's is
    not known yet (the compiler's to pick)."""
    mine = leaf.shard_shape
    return any(
        mine is None or o.shard_shape is None or o.shard_shape == mine
        for o in _same_type(leaf, report)
    )


def reason(leaf: Input, report: Report) -> str:
    """Why no output can take the buffer: no output of its type, a per-shard shape that
    differs, or the matching outputs already taken by other donations."""
    same_type = _same_type(leaf, report)
    if not same_type:
        return f"no output is {type_text(leaf.shape, leaf.dtype)}"
    mine = leaf.shard_shape
    if mine is None:
        return "its layout is the compiler's to pick, unknown before compiling"
    same_shard = [o for o in same_type if o.shard_shape == mine]
    open_layout = [o for o in same_type if o.shard_shape is None]
    if not same_shard and open_layout:
        return (f"the layout of the output {open_layout[0].path} of its type is the "
                "compiler's to pick, unknown before compiling")  # fmt: skip
    if not same_shard:
        theirs = type_text(same_type[0].shard_shape or (), leaf.dtype)
        return (f"per-shard shapes differ: {type_text(mine, leaf.dtype)} per "
                f"device, the output {same_type[0].path} has {theirs}")  # fmt: skip
    return "the outputs that match it are reused by other donated arguments"


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    if report.reached == "traced":
        return
    compiled = report.compiled is not None
    if report.compiled is not None and report.compiled.aliases is None:
        return  # the compiled aliasing was not read: unknown, judged by JX306
    for leaf in report.inputs:
        if leaf.donated and leaf.status != "pruned" and _unused(leaf, compiled):
            where = "the compiled program" if compiled else "lowering"
            yield RULE.finding(
                report,
                f"argument {leaf.path} ({type_text(leaf.shape, leaf.dtype)}) is donated but "
                f"{where} aliases it to no output: {reason(leaf, report)}",
                leaf.path,
            )


RULE = Rule(
    code="JX301",
    severity="warning",
    summary="donated argument not aliased (unusable donation)",
    explanation="""\
The argument is donated (donate_argnums / donate_argnames), but no output can reuse its
buffer: no result has its shape, dtype and sharding, or another donated argument took
the only match. Lowering marks a usable donation with tf.aliasing_output or
jax.buffer_donor; with neither, JAX warns "Some donated buffers were not usable" at run
time and the caller's array is invalidated for nothing. With `compile: true` the rule
reads the aliasing the compiled program really does; where that could not be read it
says nothing (JX306 fails the run instead).

Fix: return an updated value with the same shape, dtype and sharding as the donated
argument, or stop donating it. Silence: `ignore: [JX301]`.""",
    check=check,
    reads=("lowered", "compiled"),
)
