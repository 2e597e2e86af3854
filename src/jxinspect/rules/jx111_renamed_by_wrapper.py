"""JX111: a library's wrapper renamed the arguments or results (``nnx.jit``,
``eqx.filter_jit``, ``eqx.filter_pmap``)."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Input, Output, Report
from jxinspect.rules.base import Rule

SHOWN = 1


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    arguments = [leaf for leaf in report.inputs if leaf.status == "renamed"]
    results = [leaf for leaf in report.outputs if leaf.status == "renamed"]
    renamed: list[Input | Output] = [*arguments, *results]
    if not renamed:
        return
    examples = ", ".join(f"{leaf.path} is carried as {leaf.name!r}" for leaf in renamed[:SHOWN])
    more = f" and {len(renamed) - SHOWN} more" if len(renamed) > SHOWN else ""
    counts = [f"{len(arguments)} of {len(report.inputs)} arguments"] if arguments else []
    if results:
        counts.append(f"{len(results)} of {len(report.outputs)} results")
    yield RULE.finding(
        report,
        f"the wrapper that staged {report.target} renamed {' and '.join(counts)}: {examples}{more}",
        renamed[0].path,
    )


RULE = Rule(
    code="JX111",
    severity="warning",
    summary="a library's wrapper renamed the arguments or results (nnx.jit, eqx.filter_jit)",
    explanation="""\
The target is staged by a model library's own wrapper, which hands its inner jax.jit a
rearranged pytree and returns one of its own: the program names each argument and result
after those pytrees, not after your parameters and return value. jxinspect stages the
target as the library does and maps every argument and result back to your path (the
`path` column); the `name in program` column is what the StableHLO, profiles and compiler
dumps carry.

* Flax NNX (`nnx.jit`): modules, optimizers and metrics are split into a graph definition
  and their state; arguments are named `model.states[0][3]` (the position in the module's
  flattened state). Nothing in nnx.jit keeps the variable paths. To carry them, stage a
  pure function with `graphdef, state = nnx.split(model)` and `nnx.merge(graphdef, state)`
  inside a plain `jax.jit`: then `state['linear1']['kernel'].value` is the name.
* Flax NNX (`nnx.pmap`, `nnx.shard_map`): the same split state under pmap or shard_map;
  where pmap is built on shard_map (JAX 0.10) the program carries `flat_args[0]`, and the
  older pmap of JAX 0.7 carries no names at all (status missing, JX101).
* Flax NNX tree mode (`graph=False` / `graph_updates=False`): arguments keep their tree
  paths, and the variables the step changes come back as extra results
  (`result[1][0]._values[0].value`), mapped back to the variable's path in your call.
* Equinox (`eqx.filter_jit`): array leaves are passed as flat lists,
  `dynamic_donate['first'][0]` for the first argument and `dynamic_nodonate['rest'][3]`
  for the others (positions among the leaves, non-arrays included). To carry the paths,
  split with `params, static = eqx.partition(model, eqx.is_array)` and stage a function
  of `params` with `jax.jit` (static via a closure or static_argnums); jxinspect stages a
  plain function this way by itself. Results come back as `result[1][0]...` (the dynamic
  part of the return value), after a marker `result[0]` of Equinox's own.
* Equinox (`eqx.filter_pmap`): arguments are carried as `_dynamic[1][0]` (as
  `flat_args[0]` where pmap is built on shard_map); the same partitioning keeps the paths.

Silence: `ignore: [JX111]`.""",
    check=check,
)
