"""One report, graded level by level into the survey's cells."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

from jxinspect.core.model import Input, NestedJaxpr, Report
from jxinspect.core.survey import (
    NESTED,
    OUTCOMES,
    Cell,
    Outcome,
    leaf_shape,
    nested_shape,
    primitive_name,
)
from jxinspect.core.vocabulary import Status
from jxinspect.tracer import seam
from jxinspect.tracer.read.compiled import names_read
from jxinspect.tracer.read.report import (
    FALLBACK_ARG,
    FALLBACK_RESULT,
    classify_name,
    normalized_result,
)

OUTCOME_OF_STATUS: dict[Status, Outcome] = {
    "ok": "kept",
    "renamed": "kept",  # a library wrapper's name, mapped back to the user's path
    "pruned": "pruned",
    "synthetic": "fallback",
    "mismatch": "wrong",
    "missing": "missing",
}
"""A leaf's name status, as the survey counts it."""

OUTCOME_OF_QUALITY: dict[str, Outcome] = {
    "ok": "kept",
    "partial": "partial",
    "count_mismatch": "wrong",
    "missing": "missing",
}
"""A nested jaxpr's debug-info quality, as the survey counts it."""

EXAMPLES = 3
"""Names shown per cell that were not kept."""


def _cell(
    level: str, graded: Iterable[tuple[Outcome, str]], shape: str | None = None
) -> Cell | None:
    """A cell of the outcomes (each with a few words for a person); ``None`` for none."""
    graded = list(graded)
    if not graded:
        return None
    counts = Counter(outcome for outcome, _ in graded)
    examples = tuple(words for outcome, words in graded if outcome != "kept")[:EXAMPLES]
    return Cell(level, {o: counts[o] for o in OUTCOMES if counts[o]}, shape, examples)


def _function(jaxpr: NestedJaxpr) -> str:
    """A nested jaxpr's function, without its file and line (``_scaled_sum``)."""
    return (jaxpr.func_src_info or "").partition(" at ")[0] or "no function"


def _lacks(jaxpr: NestedJaxpr) -> str:
    """What a partial nested jaxpr lacks, in words: ``no names at all (debug info names
    only its function)``, ``no result paths``, ``2 of 3 argument names empty``."""
    names, paths = jaxpr.arg_names, jaxpr.result_paths
    if not any(names or ()) and not any(paths or ()):
        return "debug info without names"
    said = []
    for kind, found in (("argument names", names), ("result paths", paths)):
        if found is None:
            said.append(f"no {kind}")
        elif "" in found:
            said.append(f"{sum(1 for n in found if not n)} of {len(found)} {kind} empty")
    return ", ".join(said)


def _mismatch(jaxpr: NestedJaxpr) -> str:
    """How a nested jaxpr's names do not match its variables: ``4 argument names for 2
    inputs``."""
    said = []
    for kind, found, wanted, of in (
        ("argument names", jaxpr.arg_names, jaxpr.num_invars, "inputs"),
        ("result paths", jaxpr.result_paths, jaxpr.num_outvars, "outputs"),
    ):
        if found is not None and len(found) != wanted:
            said.append(f"{len(found)} {kind if len(found) != 1 else kind[:-1]} for {wanted} {of}")
    return ", ".join(said) or "names that do not match its variables"


def jax_own(report: Report) -> dict[str, int]:
    """The nested jaxprs of JAX's own functions (``jnp.clip``'s jit), by primitive: the
    survey leaves them out of its nested levels, and says how many it left out."""
    found = Counter(primitive_name(j.primitive) for j in report.nested if j.inside_jax)
    return dict(sorted(found.items()))


def reads(report: Report) -> str | None:
    """Which jaxpr the ``jaxpr.*`` levels read, where it is not the traced function's top
    jaxpr: for pmap, the jaxpr ``@main`` is lowered from, found in ``make_jaxpr(pmap(f))``
    (``0:jit.jaxpr``, JAX's ``_fun``, from 0.8 on; the ``xla_pmap`` body on 0.7)."""
    top = report.jaxpr
    if report.stage != "pmap" or top is None:
        return None
    function = _function(top) + (" (JAX's own)" if top.inside_jax else "")

    def same(jaxpr: NestedJaxpr) -> tuple[object, ...]:
        return (jaxpr.func_src_info, jaxpr.arg_names, jaxpr.result_paths, jaxpr.traced_for)

    for jaxpr in report.nested:
        if same(jaxpr) == same(top):
            return (f"{jaxpr.where} of make_jaxpr(pmap(f)): {function}, which @main is "
                    "lowered from, not its top jaxpr")  # fmt: skip
    if top.traced_for == "pmap":
        return f"pmap's body (0:xla_pmap.call_jaxpr) of make_jaxpr(pmap(f)): {function}"
    return f"the top jaxpr of make_jaxpr(pmap(f)): {function}"


def _shown(name: str | None) -> str:
    return repr(name) if name else "no name"


def _compiled_status(leaf: Input) -> Status:
    """The name a compiled parameter carries, judged as ``@main``'s is."""
    if leaf.main_index is None:
        return "pruned"
    return classify_name(leaf.compiled_name, leaf.path, FALLBACK_ARG)


def cells(report: Report, family: str | None = None) -> tuple[Cell, ...]:
    """The cells of one program's report: the top jaxpr's names and paths (as its debug
    info holds them), ``@main``'s (as the report judged them), the compiled program's
    parameters' (once compiled), and each primitive's nested jaxprs (those of JAX's own
    functions left out). ``family`` names the program shape of ``@main``'s cells
    (``pmap``) for the findings' advice."""
    prefixed = seam.result_paths_prefixed()
    jaxpr_args = (
        (OUTCOME_OF_STATUS[classify_name(i.jaxpr_name, i.path, FALLBACK_ARG)],
         f"{i.path} → {_shown(i.jaxpr_name)}")
        for i in report.inputs
    )  # fmt: skip
    jaxpr_results = (
        (OUTCOME_OF_STATUS[classify_name(normalized_result(o.jaxpr_path, prefixed), o.path,
                                         FALLBACK_RESULT)],
         f"{o.path} → {_shown(o.jaxpr_path)}")
        for o in report.outputs
    )  # fmt: skip
    lowered = report.reached in ("lowered", "compiled")
    main_args = ((OUTCOME_OF_STATUS[i.status], f"{i.path} → {_shown(i.name)}")
                 for i in report.inputs if lowered)  # fmt: skip
    main_results = ((OUTCOME_OF_STATUS[o.status], f"{o.path} → {_shown(o.name)}")
                    for o in report.outputs if lowered)  # fmt: skip

    compiled = report.reached == "compiled" and names_read(report)  # unread: unknown
    compiled_args = ((OUTCOME_OF_STATUS[_compiled_status(i)],
                      f"{i.path} → {_shown(i.compiled_name)}")
                     for i in report.inputs if compiled)  # fmt: skip

    def main_shape(side: Literal["args", "results"]) -> str | None:
        return leaf_shape(family, side) if family else None

    found = [
        _cell("jaxpr.args", jaxpr_args),
        _cell("jaxpr.results", jaxpr_results),
        _cell("main.args", main_args, main_shape("args")),
        _cell("main.results", main_results, main_shape("results")),
        _cell("compiled.args", compiled_args),
    ]
    by_primitive: dict[str, list[tuple[Outcome, str]]] = {}
    for jaxpr in report.nested:
        if not jaxpr.inside_jax:
            words = f"{jaxpr.where}: {_function(jaxpr)}"  # no file or line: the same anywhere
            if jaxpr.quality == "partial":
                words += ", " + _lacks(jaxpr)
            elif jaxpr.quality == "missing":
                words = f"{jaxpr.where}: no debug info"
            elif jaxpr.quality == "count_mismatch":
                words += ", " + _mismatch(jaxpr)
            by_primitive.setdefault(primitive_name(jaxpr.primitive), []).append(
                (OUTCOME_OF_QUALITY[jaxpr.quality], words)
            )
    for primitive in sorted(by_primitive):
        found.append(_cell(NESTED + primitive, by_primitive[primitive], nested_shape(primitive)))
    return tuple(c for c in found if c is not None)
