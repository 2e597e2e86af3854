"""Join what the user's call implies, the jaxpr's debug info and ``@main`` into a Report."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from jxinspect.core.model import (
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
from jxinspect.core.program import TextRequest
from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir, nested, shardings
from jxinspect.tracer.read.mlir import MainSignature, MainValue
from jxinspect.tracer.stage import Staged

# JAX's names when it could not bind the call to the signature, or pmap's flat names.
FALLBACK_ARG = re.compile(r"^(flat_args|args|kwargs)\[")
FALLBACK_RESULT = re.compile(r"^(result)?(\[\d+\])*$")


def classify_name(carried: str | None, expected: str | None, fallback: re.Pattern[str]) -> Status:
    """``ok`` / ``missing`` / ``synthetic`` (a fallback name) / ``mismatch``; with no
    expected name (a module read alone), any name but a fallback is ``ok``."""
    if not carried:
        return "missing"
    if carried == expected:
        return "ok"
    if fallback.match(carried):
        return "synthetic"
    return "ok" if expected is None else "mismatch"


def kept_inputs(staged: Staged, main_args: list[MainValue], n_inputs: int) -> list[int]:
    """Indices of the flat inputs that survived lowering, in ``@main`` order."""
    kept = seam.kept_inputs(staged.lowered)
    if kept is not None and len(kept) == len(main_args):
        return kept
    if len(main_args) == n_inputs:
        return list(range(n_inputs))
    # Without JAX's record, match @main's arguments to the inputs by order and type.
    avals = seam.in_avals(staged.jaxpr)
    result, j = [], 0
    for i, aval in enumerate(avals):
        if j < len(main_args) and tuple(aval.shape) == main_args[j].shape:
            result.append(i)
            j += 1
    return result


_DTYPE_NAMES: dict[Any, str] = {}
"""``str(dtype)`` by dtype: NumPy spells a dtype slowly, and a model has thousands of
leaves of a few dtypes."""


def _aval(aval: Any) -> tuple[tuple[int, ...], str]:
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
    dtype = getattr(aval, "dtype", "unknown")
    try:
        name = _DTYPE_NAMES.get(dtype)
    except TypeError:  # an unhashable stand-in
        return shape, str(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype)
    return shape, name


def _jax_sharding(value: Any, mesh: Mesh | None) -> Sharding | None:
    """A ``NamedSharding`` JAX attached to an aval, for when nothing was lowered."""
    spec = getattr(getattr(value, "sharding", None), "spec", None)
    if spec is None or mesh is None:
        return None
    return shardings.from_partition_spec(spec, len(getattr(value, "shape", ())), mesh, "jax")


def _program(staged: Staged, request: TextRequest, main: Any, inputs: Any) -> Any:
    """The annotated texts the views draw (imported only when a view asks for them)."""
    from jxinspect.tracer.read import annotate

    return annotate.program(staged, request, main, inputs)


def function_name(staged: Staged) -> str | None:
    """``f at file.py:12`` of the user's function (pmap's inner jaxpr names only ``_fun``)."""
    for jaxpr in (staged.jaxpr, staged.names_jaxpr):
        info = seam.debug_info(jaxpr)
        if info is not None:
            return info.func_src_info
    return None


def _pmap_sharding(
    shape: tuple[int, ...], program_shape: tuple[int, ...] | None, mesh: Mesh | None
) -> Sharding | None:
    """The layout of a pmap leaf whose program holds per-device shapes (the pmap of
    JAX 0.4.x–0.9 lowers one replica's program, with no sharding attributes): split over
    pmap's one axis where the program's shape is smaller, else a copy per device."""
    if mesh is None or program_shape is None or len(mesh.axes) != 1:
        return None
    if len(program_shape) != len(shape):
        return None
    (axis, size), rank = mesh.axes[0], len(shape)
    split = [d for d in range(rank) if shape[d] != program_shape[d]]
    raw = f"pmap over {axis!r}: the program holds {list(program_shape)} per device"
    if not split:
        return Sharding("replicated", ((),) * rank, mesh, replicas=size, source="pmap", raw=raw)
    if len(split) > 1 or shape[split[0]] != program_shape[split[0]] * size:
        return None
    spec = tuple((axis,) if d == split[0] else () for d in range(rank))
    return Sharding("tiled", spec, mesh, source="pmap", raw=raw)


def read_lowered(staged: Staged, mesh: Mesh | None, device_ids: Any) -> MainSignature | None:
    """``@main`` of the lowered module, read once (``None`` when lowering failed)."""
    if staged.lowered is None:
        return None
    return mlir.read_main(seam.stablehlo_module(staged.lowered), mesh, device_ids)


def _result_convention(staged: Staged | None, main: MainSignature | None) -> bool:
    """Whether result paths carry the ``result`` prefix (0.6 on) in this program."""
    if staged is not None:
        return seam.result_paths_prefixed()
    said = seam.prefixes_results([r.name for r in main.results]) if main else None
    return True if said is None else said


def build_report(
    staged: Staged | None,
    main: MainSignature | None,
    *,
    target: str,
    expected_args: list[str | None] | None = None,
    static_args: list[StaticArg] | None = None,
    platform: str | None = None,
    num_devices: int = 1,
    mesh: Mesh | None = None,
    partitioner: str | None = None,
    function: str | None = None,
    file: str | None = None,
    line: int | None = None,
    notes: list[str] | None = None,
    keep_texts: TextRequest | None = None,
) -> Report:
    """The one report builder: for a live lowering (``staged``, with the ``@main`` read
    from it, or ``None`` when lowering failed) or for ``@main`` alone (a ``.mlir`` file).
    Findings are added by ``jxinspect.rules``."""
    notes = list(notes or ())
    if staged is not None:
        if staged.wrapper is not None:
            notes.append(
                f"staged through {staged.wrapper}, as the library does: each argument's "
                "and result's path is yours, its name the one the wrapper gave it in the "
                "program"
            )
        notes.extend(staged.notes)
    if main is not None:
        declared = [m for m in main.meshes.values() if m.axes]
        if mesh is None and len(declared) == 1:
            mesh = declared[0]
    user_args = [a for a in main.args if a.jax_kind is None] if main else []
    user_results = [r for r in main.results if r.jax_kind is None] if main else []
    extra = tuple(
        ExtraArg(a.index, a.jax_kind, a.type, a.name)
        for a in (main.args if main else ())
        if a.jax_kind is not None
    )
    prefixed = _result_convention(staged, main)
    if not prefixed:
        notes.append(
            "result paths are written without the `result` prefix (JAX up to 0.5); "
            "paths below use the newer spelling"
        )
    if staged is None:
        inputs = [_input_from_main(i, value) for i, value in enumerate(user_args)]
        outputs = [
            _output(i, value.shape or (), value.dtype or value.type, value, None, None, prefixed)
            for i, value in enumerate(user_results)
        ]
        sources = {v.sharding.source for v in (*user_args, *user_results) if v.sharding}
        return Report(
            target=target,
            stage=None,
            reached="lowered",
            jax_version=None,
            platform=platform,
            num_devices=max(num_devices, 1),
            mesh=mesh,
            partitioner=partitioner or ("gspmd" if sources == {"gspmd"} else "shardy"),
            function=function,
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            extra_args=extra,
            notes=tuple(notes),
        )

    jaxpr = staged.jaxpr
    names_info = seam.debug_info(staged.names_jaxpr)
    arg_names = list(names_info.arg_names) if names_info and names_info.arg_names else None
    res_paths = list(names_info.result_paths) if names_info and names_info.result_paths else None
    n_in, n_out = seam.arity(jaxpr)
    if arg_names is not None and len(arg_names) != n_in:
        arg_names = None
    if res_paths is not None and len(res_paths) != n_out:
        res_paths = None
    if expected_args is not None and len(expected_args) != n_in:
        notes.append(f"the call has {len(expected_args)} array leaves but the jaxpr "
                     f"{n_in} inputs; expected names are unknown")  # fmt: skip
        expected_args = None
    expected_results: list[str | None] | None = None
    if staged.wrapper is not None:  # the wrapper's mapping to the user's paths, or none
        expected_results = staged.results
    elif staged.out_info is not None:
        from jxinspect.tracer.read.paths import result_paths

        expected_results = list(result_paths(staged.out_info))
    if expected_results is not None and len(expected_results) != n_out:
        expected_results = None

    kept = kept_inputs(staged, user_args, n_in) if main else list(range(n_in))
    by_input = dict(zip(kept, user_args))

    inputs = []
    for i, aval in enumerate(seam.in_avals(jaxpr)):
        shape, dtype = _aval(aval)
        jaxpr_name = arg_names[i] if arg_names is not None else None
        path = expected_args[i] if expected_args is not None else None
        expected = path or jaxpr_name or f"#{i}"
        value = by_input.get(i)
        if main is not None and value is None:
            status: Status = "pruned"
            carried = None
        else:
            carried = value.name if value is not None else jaxpr_name
            known = path if expected_args is not None else None  # None: no signature
            spelled = seam.newer_spelling(carried) if carried else carried
            status = classify_name(spelled, known, FALLBACK_ARG)
            if staged.wrapper is not None and status != "missing" and spelled != known:
                status = "renamed"  # the wrapper's own name, mapped back to the user's path
        sharding = value.sharding if value is not None else _jax_sharding(aval, mesh)
        if sharding is None and value is not None and staged.stage == "pmap":
            sharding = _pmap_sharding(shape, value.shape, mesh)
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
    for i, aval in enumerate(seam.out_avals(jaxpr)):
        shape, dtype = _aval(aval)
        jaxpr_path = res_paths[i] if res_paths is not None else None
        wanted: str | None
        if expected_results:
            wanted = expected_results[i]  # None: a wrapper's result it could not map
        elif staged.wrapper is not None:
            wanted = None  # the wrapper's name is all there is: kept, and renamed
        elif jaxpr_path is not None:
            wanted = seam.normalize_result_path(jaxpr_path, prefixed)
        else:
            wanted = f"result#{i}"
        result = user_results[i] if i < len(user_results) else None
        if result is not None and result.sharding is None and staged.stage == "pmap":
            result = replace(result, sharding=_pmap_sharding(shape, result.shape, mesh))
        outputs.append(_output(i, shape, dtype, result, jaxpr_path, wanted, prefixed,
                               lowered=main is not None,
                               wrapped=staged.wrapper is not None))  # fmt: skip

    top = nested.grade(staged.names_jaxpr, "top", staged.stage)
    nested_list: list[NestedJaxpr] = list(nested.walk(jaxpr))
    return Report(
        target=target,
        stage=staged.stage,
        reached="lowered" if staged.lowered is not None else "traced",
        jax_version=seam.jax_version(),
        platform=platform,
        num_devices=num_devices,
        mesh=mesh,
        partitioner=partitioner or "shardy",
        function=function or function_name(staged),
        file=file,
        line=line,
        inputs=tuple(inputs),
        static_args=tuple(static_args or ()),
        outputs=tuple(outputs),
        extra_args=extra,
        jaxpr=top,
        nested=tuple(nested_list),
        error=staged.lower_error,
        error_traceback=staged.lower_traceback,
        notes=tuple(notes),
        program=_program(staged, keep_texts, main, inputs) if keep_texts else None,
    )


def _input_from_main(i: int, value: MainValue) -> Input:
    """An input known only from ``@main`` (no call says what it should be named)."""
    status = classify_name(value.name, None, FALLBACK_ARG)
    return Input(
        index=i,
        path=value.name if status == "ok" and value.name else f"#{i}",
        jaxpr_name=None,
        name=value.name or None,
        status=status,
        shape=value.shape or (),
        dtype=value.dtype or value.type,
        sharding=value.sharding,
        donated=value.aliasing_output is not None or value.buffer_donor,
        aliased_output=value.aliasing_output,
        buffer_donor=value.buffer_donor,
        memory_kind=value.memory_kind,
        main_index=value.index,
    )


def _output(
    i: int,
    shape: tuple[int, ...],
    dtype: str,
    result: MainValue | None,
    jaxpr_path: str | None,
    expected: str | None,
    prefixed: bool,
    lowered: bool = True,
    wrapped: bool = False,
) -> Output:
    """One output; the carried name stays as written, its path in the newer spelling.
    ``wrapped``: a library's wrapper named it (``renamed`` unless it carries ``expected``,
    the user's path)."""
    carried = result.name if result is not None else (None if lowered else jaxpr_path)
    # "" is a lone result's path in 0.4.x, and an unknown one in newer releases
    known = carried is not None and (carried != "" or not prefixed)
    normalized = seam.normalize_result_path(carried or "", prefixed) if known else None
    if expected is None:
        path = normalized if normalized else (jaxpr_path or f"result#{i}")
        status = "ok" if normalized else "missing"
    else:
        path = expected
        status = classify_name(normalized, expected, FALLBACK_RESULT)
    if wrapped and status != "missing" and normalized != expected:
        status = "renamed"  # the wrapper's own name, mapped back to the user's path
    return Output(
        index=i,
        path=path,
        jaxpr_path=jaxpr_path,
        name=carried,
        status=status,  # type: ignore[arg-type]
        shape=shape,
        dtype=dtype,
        sharding=result.sharding if result else None,
        memory_kind=result.memory_kind if result else None,
    )
