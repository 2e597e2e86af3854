"""JX111: a library's wrapper renamed the arguments (``nnx.jit``, ``eqx.filter_jit``)."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.checks.base import Rule
from jxinspect.model import Finding, Report

SHOWN = 2


def check(report: Report) -> Iterator[Finding]:
    renamed = [leaf for leaf in report.inputs if leaf.status == "renamed"]
    if not renamed:
        return
    examples = ", ".join(f"{leaf.path} is carried as {leaf.name!r}" for leaf in renamed[:SHOWN])
    more = f" and {len(renamed) - SHOWN} more" if len(renamed) > SHOWN else ""
    yield RULE.finding(
        report,
        f"the wrapper that staged {report.target} renamed {len(renamed)} of "
        f"{len(report.inputs)} arguments: {examples}{more}",
        renamed[0].path,
    )


RULE = Rule(
    code="JX111",
    severity="warning",
    summary="a library's wrapper renamed the arguments (nnx.jit, eqx.filter_jit)",
    explanation="""\
The target is staged by a model library's own wrapper, which hands its inner jax.jit a
rearranged pytree: the program names each argument after that pytree, not after your
parameters. jxinspect stages the target as the library does and maps every argument back
to your path (the `path` column); the `name in program` column is what the StableHLO,
profiles and compiler dumps carry.

* Flax NNX (`nnx.jit`): modules, optimizers and metrics are split into a graph definition
  and their state; arguments are named `model.states[0][3]` (the position in the module's
  flattened state). Nothing in nnx.jit keeps the variable paths. To carry them, stage a
  pure function with `graphdef, state = nnx.split(model)` and `nnx.merge(graphdef, state)`
  inside a plain `jax.jit`: then `state['linear1']['kernel'].value` is the name.
* Equinox (`eqx.filter_jit`): array leaves are passed as flat lists,
  `dynamic_donate['first'][0]` for the first argument and `dynamic_nodonate['rest'][3]`
  for the others (positions among the leaves, non-arrays included). To carry the paths,
  split with `params, static = eqx.partition(model, eqx.is_array)` and stage a function
  of `params` with `jax.jit` (static via a closure or static_argnums); jxinspect stages a
  plain function this way by itself.

Silence: `ignore: [JX111]`.""",
    check=check,
)
