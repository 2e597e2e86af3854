"""Join what the user's call implies, the jaxpr's debug info and ``@main`` into a Report."""

from __future__ import annotations

import re
from typing import Any

from jxinspect.model import (
    ExtraArg,
    Input,
    Mesh,
    NestedJaxpr,
    Output,
    Report,
    Sharding,
    StaticArg,
    Status,
)
from jxinspect.program import TextRequest
from jxinspect.tracer import mlir, nested, shardings
from jxinspect.tracer.mlir import MainSignature, MainValue
from jxinspect.tracer.stage import Staged

# JAX's names when it could not bind the call to the signature, or pmap's flat names.
_FALLBACK_ARG = re.compile(r"^(flat_args|args|kwargs)\[")
_FALLBACK_RESULT = re.compile(r"^(result)?(\[\d+\])*$")


def classify_name(carried: str | None, expected: str, fallback: re.Pattern[str]) -> Status:
    """``ok`` / ``missing`` / ``synthetic`` (a fallback name) / ``mismatch``."""
    if not carried:
        return "missing"
    if carried == expected:
        return "ok"
    if fallback.match(carried):
        return "synthetic"
    return "mismatch"


def kept_inputs(staged: Staged, main_args: list[MainValue], n_inputs: int) -> list[int]:
    """Indices of the flat inputs that survived lowering, in ``@main`` order."""
    lowering = getattr(staged.lowered, "_lowering", None)
    kept = getattr(lowering, "compile_args", {}).get("kept_var_idx") if lowering else None
    if kept is not None and len(kept) == len(main_args):
        return sorted(kept)
    if len(main_args) == n_inputs:
        return list(range(n_inputs))
    # Without JAX's record, match @main's arguments to the inputs by order and type.
    avals = staged.jaxpr.in_avals
    result, j = [], 0
    for i, aval in enumerate(avals):
        if j < len(main_args) and tuple(aval.shape) == main_args[j].shape:
            result.append(i)
            j += 1
    return result


def _aval(aval: Any) -> tuple[tuple[int, ...], str]:
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
    return shape, str(getattr(aval, "dtype", "unknown"))


def _jax_sharding(value: Any, mesh: Mesh | None) -> Sharding | None:
    """A ``NamedSharding`` JAX attached to an aval, for when nothing was lowered."""
    spec = getattr(getattr(value, "sharding", None), "spec", None)
    if spec is None or mesh is None:
        return None
    return shardings.from_partition_spec(spec, len(getattr(value, "shape", ())), mesh, "jax")


def _program(staged: Staged, request: TextRequest, main: Any, inputs: Any) -> Any:
    """The annotated texts the views draw (imported only when a view asks for them)."""
    from jxinspect.tracer import annotate

    return annotate.program(staged, request, main, inputs)


def _function_name(staged: Staged) -> str | None:
    """``f at file.py:12`` of the user's function (pmap's inner jaxpr names only ``_fun``)."""
    for jaxpr in (staged.jaxpr, staged.names_jaxpr):
        if jaxpr.debug_info is not None:
            return str(jaxpr.debug_info.func_src_info)
    return None


def build_report(
    staged: Staged,
    *,
    target: str,
    expected_args: list[str] | None,
    static_args: list[StaticArg],
    platform: str,
    num_devices: int,
    mesh: Mesh | None,
    device_ids: Any,
    partitioner: str,
    file: str | None,
    line: int | None,
    notes: list[str],
    keep_texts: TextRequest | None,
) -> Report:
    """The report for one staged function (findings are added by ``jxinspect.checks``)."""
    import jax

    jaxpr = staged.jaxpr
    names_info = staged.names_jaxpr.debug_info
    arg_names = list(names_info.arg_names) if names_info and names_info.arg_names else None
    res_paths = list(names_info.result_paths) if names_info and names_info.result_paths else None
    n_in, n_out = len(jaxpr.invars), len(jaxpr.outvars)
    if arg_names is not None and len(arg_names) != n_in:
        arg_names = None
    if res_paths is not None and len(res_paths) != n_out:
        res_paths = None
    if expected_args is not None and len(expected_args) != n_in:
        notes = [*notes, f"the call has {len(expected_args)} array leaves but the jaxpr "
                 f"{n_in} inputs; expected names are unknown"]  # fmt: skip
        expected_args = None
    expected_results = None
    if staged.out_info is not None:
        from jxinspect.tracer.paths import result_paths

        expected_results = result_paths(staged.out_info)
        if len(expected_results) != n_out:
            expected_results = None

    main: MainSignature | None = None
    if staged.lowered is not None:
        module = staged.lowered.compiler_ir("stablehlo")
        main = mlir.read_main(module, mesh, device_ids)
        declared = [m for m in main.meshes.values() if m.axes]
        if mesh is None and len(declared) == 1:
            mesh = declared[0]

    user_args = [a for a in main.args if a.jax_kind is None] if main else []
    user_results = [r for r in main.results if r.jax_kind is None] if main else []
    extra = [
        ExtraArg(a.index, a.jax_kind or "unknown", a.type, a.name)  # type: ignore[arg-type]
        for a in (main.args if main else ())
        if a.jax_kind is not None
    ]
    kept = kept_inputs(staged, user_args, n_in) if main else list(range(n_in))
    by_input = dict(zip(kept, user_args))

    inputs = []
    for i, aval in enumerate(jaxpr.in_avals):
        shape, dtype = _aval(aval)
        jaxpr_name = arg_names[i] if arg_names is not None else None
        expected = expected_args[i] if expected_args is not None else (jaxpr_name or f"#{i}")
        value = by_input.get(i)
        if main is not None and value is None:
            status: Status = "pruned"
            carried = None
        else:
            carried = value.name if value is not None else jaxpr_name
            status = classify_name(carried, expected, _FALLBACK_ARG)
        sharding = value.sharding if value is not None else _jax_sharding(aval, mesh)
        inputs.append(
            Input(
                index=i,
                path=expected,
                jaxpr_name=jaxpr_name,
                name=carried,
                status=status,
                shape=shape,
                dtype=dtype,
                sharding=sharding,
                donated=staged.donated[i] if i < len(staged.donated) else False,
                aliased_output=value.aliasing_output if value else None,
                buffer_donor=value.buffer_donor if value else False,
                memory_kind=value.memory_kind if value else None,
                main_index=value.index if value else None,
            )
        )

    outputs = []
    for i, aval in enumerate(jaxpr.out_avals):
        shape, dtype = _aval(aval)
        jaxpr_path = res_paths[i] if res_paths is not None else None
        expected = expected_results[i] if expected_results else (jaxpr_path or f"result#{i}")
        result = user_results[i] if i < len(user_results) else None
        carried = result.name if result is not None else (None if main else jaxpr_path)
        outputs.append(
            Output(
                index=i,
                path=expected,
                jaxpr_path=jaxpr_path,
                name=carried,
                status=classify_name(carried, expected, _FALLBACK_RESULT),
                shape=shape,
                dtype=dtype,
                sharding=result.sharding if result else None,
                memory_kind=result.memory_kind if result else None,
            )
        )

    top = nested.grade(staged.names_jaxpr, "top", staged.stage)
    nested_list: list[NestedJaxpr] = list(nested.walk(jaxpr))
    return Report(
        target=target,
        stage=staged.stage,
        reached="lowered" if staged.lowered is not None else "traced",
        jax_version=jax.__version__,
        platform=platform,
        num_devices=num_devices,
        mesh=mesh,
        partitioner=partitioner,
        function=_function_name(staged),
        file=file,
        line=line,
        inputs=tuple(inputs),
        static_args=tuple(static_args),
        outputs=tuple(outputs),
        extra_args=tuple(extra),
        jaxpr=top,
        nested=tuple(nested_list),
        error=staged.lower_error,
        error_traceback=staged.lower_traceback,
        notes=tuple(notes),
        program=_program(staged, keep_texts, main, inputs) if keep_texts else None,
    )
