"""Join what the user's call implies, the jaxpr's debug info and ``@main`` into a Report.

``build_report`` is the one builder of a staged program's report (staged here, or a
lowering a recorded run made); ``report_from_main`` reads ``@main`` alone (a ``.mlir``
file). Findings are added by the one judge step, :func:`jxinspect.pipeline.judge`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from jxinspect.core.model import (
    ExtraArg,
    Input,
    Mesh,
    Output,
    Report,
    Sharding,
    ShardingSource,
    StaticArg,
    Status,
    Topology,
)
from jxinspect.core.program import TextRequest
from jxinspect.core.vocabulary import Partitioner
from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir, nested, shardings
from jxinspect.tracer.read.mlir import MainSignature, MainValue
from jxinspect.tracer.staged import LoweringFailed, Staged, Traced, lowered_of

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


def normalized_result(carried: str | None, prefixed: bool) -> str | None:
    """A carried result path in the newer spelling; ``None`` when it names nothing (``""``
    is a lone result's path in 0.4.x, and an unknown one in newer releases)."""
    known = carried is not None and (carried != "" or not prefixed)
    return seam.normalize_result_path(carried or "", prefixed) if known else None


def kept_inputs(staged: Staged, main_args: list[MainValue], n_inputs: int) -> list[int]:
    """Indices of the flat inputs that survived lowering, in ``@main`` order."""
    kept = seam.kept_inputs(lowered_of(staged))
    if kept is not None and len(kept) == len(main_args):
        return kept
    if len(main_args) == n_inputs:
        return list(range(n_inputs))
    # Without JAX's record, match @main's arguments to the inputs by order and type.
    avals = seam.in_avals(staged.traced.jaxpr)
    result, j = [], 0
    for i, aval in enumerate(avals):
        shape = getattr(aval, "shape", None)  # a token has none, as in @main
        if j < len(main_args) and (None if shape is None else tuple(shape)) == main_args[j].shape:
            result.append(i)
            j += 1
    return result


_DTYPE_NAMES: dict[Any, str] = {}
"""``str(dtype)`` by dtype: NumPy spells a dtype slowly, and a model has thousands of
leaves of a few dtypes."""


def _aval(aval: Any) -> tuple[tuple[int, ...], str]:
    shape = tuple(int(d) if isinstance(d, int) else -1 for d in getattr(aval, "shape", ()))
    if type(aval).__name__ == "AbstractToken":  # a token the function takes or returns
        return shape, "token"
    dtype = getattr(aval, "dtype", "unknown")
    try:
        name = _DTYPE_NAMES.get(dtype)
    except TypeError:  # an unhashable stand-in
        return shape, str(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = _dtype_name(dtype)
    return shape, name


def _dtype_name(dtype: Any) -> str:
    """``str(dtype)``, except for JAX's ``float0`` (the tangent of an integer, a
    structured NumPy dtype that prints ``[('float0', 'V')]``): named as a jaxpr names it."""
    return "float0" if getattr(dtype, "names", None) == ("float0",) else str(dtype)


def _unlowered_sharding(aval: Any, declared: Any, mesh: Mesh | None) -> Sharding | None:
    """For when nothing was lowered: the ``NamedSharding`` the argument declared
    (``source="declared"``), else the spec its type carries on ``Explicit`` axes
    (``source="jax"``); else none (no program says what an ``Auto`` axis makes of it)."""
    sources: tuple[tuple[Any, ShardingSource], ...] = (
        (getattr(declared, "spec", None), "declared"),
        (seam.typed_spec(aval), "jax"),
    )
    for spec, source in sources:
        if spec is not None and mesh is not None:
            rank = len(getattr(aval, "shape", ()))
            return shardings.from_partition_spec(spec, rank, mesh, source)
    return None


def _program(staged: Staged, request: TextRequest, main: Any, inputs: Any) -> Any:
    """The annotated texts the views draw (imported only when a view asks for them)."""
    from jxinspect.tracer.read import annotate

    return annotate.program(staged, request, main, inputs)


def function_name(traced: Traced) -> str | None:
    """``f at file.py:12`` of the user's function (pmap's inner jaxpr names only ``_fun``)."""
    for jaxpr in (traced.jaxpr, traced.names_jaxpr):
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
        return Sharding(
            "replicated", spec=((),) * rank, mesh=mesh, replicas=size, source="pmap", raw=raw
        )
    if len(split) > 1 or shape[split[0]] != program_shape[split[0]] * size:
        return None
    spec = tuple((axis,) if d == split[0] else () for d in range(rank))
    return Sharding("tiled", spec=spec, mesh=mesh, source="pmap", raw=raw)


def read_lowered(staged: Staged, mesh: Mesh | None, device_ids: Any) -> MainSignature | None:
    """``@main`` of the lowered module, read once (``None`` when lowering failed)."""
    lowered = lowered_of(staged)
    if lowered is None:
        return None
    return mlir.read_main(seam.stablehlo_module(lowered), mesh, device_ids)


def _result_convention(traced: Traced | None, main: MainSignature | None) -> bool:
    """Whether result paths carry the ``result`` prefix (0.5.3 on) in this program: as
    its own debug info spells them, else as the release does (a recorded run's from the
    release table: nothing is traced in the user's process)."""
    if traced is not None:
        info = seam.debug_info(traced.names_jaxpr)
        paths = list(info.result_paths) if info is not None and info.result_paths else []
        said = seam.prefixes_results(paths) if paths else None
        if said is not None:
            return said
        if traced.recorded:
            return seam.result_paths_prefixed_in_release()
        return seam.result_paths_prefixed()
    said = seam.prefixes_results([r.name for r in main.results]) if main else None
    return True if said is None else said


_UNPREFIXED = (
    "result paths are written without the `result` prefix (JAX up to 0.5); "
    "paths below use the newer spelling"
)


def _declared_mesh(main: MainSignature | None, mesh: Mesh | None) -> Mesh | None:
    """``mesh``, or the one mesh with axes that ``@main`` declares (0.11 on may declare
    it twice, ``@mesh`` and ``@mesh_0``, the second for the collectives' replica groups:
    one mesh)."""
    if mesh is None and main is not None:
        declared = {m for m in main.meshes.values() if m.axes}
        if len(declared) == 1:
            return declared.pop()
    return mesh


def _extra_args(main: MainSignature | None) -> tuple[ExtraArg, ...]:
    """The arguments JAX added to ``@main`` (tokens, hoisted constants, dimensions)."""
    values = main.args if main else []
    return tuple(ExtraArg(a.index, a.jax_kind, a.type, a.name) for a in values if a.jax_kind)


def _user_values(values: Sequence[MainValue] | None) -> list[MainValue]:
    return [v for v in values or () if v.jax_kind is None]


def report_from_main(
    main: MainSignature,
    *,
    target: str,
    num_devices: int = 1,
    function: str | None = None,
    notes: list[str] | None = None,
) -> Report:
    """The report of ``@main`` alone (a ``.mlir`` file): no call says what the names
    should be. Findings are added by ``jxinspect.rules``."""
    notes = list(notes or ())
    prefixed = _result_convention(None, main)
    if not prefixed:
        notes.append(_UNPREFIXED)
    user_args, user_results = _user_values(main.args), _user_values(main.results)
    outputs = [
        _output(
            i,
            value.shape or (),
            value.dtype or value.type,
            value,
            None,
            None,
            prefixed,
            one_device=main.devices == 1,
        )  # fmt: skip
        for i, value in enumerate(user_results)
    ]
    sources = {v.sharding.source for v in (*user_args, *user_results) if v.sharding}
    return Report(
        target=target,
        stage=None,
        reached="lowered",
        jax_version=None,
        platform=None,
        num_devices=max(num_devices, 1),
        mesh=_declared_mesh(main, None),
        partitioner="gspmd" if sources == {"gspmd"} else "shardy",
        function=function,
        inputs=tuple(
            _input_from_main(i, value, main.devices == 1) for i, value in enumerate(user_args)
        ),
        outputs=tuple(outputs),
        extra_args=_extra_args(main),
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class Context:
    """What the caller knows about a staged program that the program does not say."""

    target: str
    expected_args: list[str | None] | None = None
    """The user's path of each flat input, from the call (``None``: not known)."""
    static_args: tuple[StaticArg, ...] = ()
    platform: str | None = None
    num_devices: int = 1
    mesh: Mesh | None = None
    partitioner: Partitioner | None = None
    function: str | None = None
    """``f at file.py:12``; ``None``: as JAX's debug info says."""
    file: str | None = None
    line: int | None = None
    notes: tuple[str, ...] = ()
    keep_texts: TextRequest | None = None
    topology: Topology | None = None
    """The TPU topology the program was staged for (``--topology``)."""


@dataclass(frozen=True)
class _Names:
    """The names the jaxpr carries and the ones the call implies, each checked against
    the jaxpr's count (``None``: not known, or of another count)."""

    args: list[str] | None
    results: list[str] | None
    expected_args: list[str | None] | None
    expected_results: list[str | None] | None


def _fitting(values: Any, count: int) -> list[Any] | None:
    return list(values) if values is not None and len(values) == count else None


def _names(traced: Traced, expected_args: list[str | None] | None, notes: list[str]) -> _Names:
    info = seam.debug_info(traced.names_jaxpr)
    n_in, n_out = seam.arity(traced.jaxpr)
    if expected_args is not None and len(expected_args) != n_in:
        notes.append(f"the call has {len(expected_args)} array leaves but the jaxpr "
                     f"{n_in} inputs; expected names are unknown")  # fmt: skip
        expected_args = None
    expected_results: list[str | None] | None = None
    if traced.wrapper is not None:  # the wrapper's mapping to the user's paths, or none
        expected_results = traced.results
    elif traced.out_info is not None:
        from jxinspect.tracer.read.paths import result_paths

        expected_results = list(result_paths(traced.out_info))
    return _Names(
        _fitting(info.arg_names or None, n_in) if info else None,
        _fitting(info.result_paths or None, n_out) if info else None,
        expected_args,
        _fitting(expected_results, n_out),
    )


def build_report(staged: Staged, main: MainSignature | None, context: Context) -> Report:
    """The one report builder of a staged program: ``staged``, with the ``@main`` read
    from it (``None`` when lowering failed), and what the caller knows. Findings are
    added by ``jxinspect.rules``."""
    traced = staged.traced
    notes = list(context.notes)
    untested = seam.untested_note()
    if untested is not None:
        notes.append(untested)
    if traced.wrapper is not None:
        notes.append(
            f"staged through {traced.wrapper}, as the library does: each argument's and "
            "result's path is yours, its name the one the wrapper gave it in the program"
        )
    notes.extend(traced.notes)
    prefixed = _result_convention(traced, main)
    if not prefixed:
        notes.append(_UNPREFIXED)
    mesh = _declared_mesh(main, context.mesh)
    names = _names(traced, context.expected_args, notes)
    one_device = main.devices == 1 if main is not None else context.num_devices == 1
    # the older pmap lowers one replica's program: its shapes are each device's already
    one_device = one_device or (traced.stage == "pmap" and not seam.pmap_global_shapes())
    inputs = _inputs(staged, main, names, mesh, one_device)
    failed = staged if isinstance(staged, LoweringFailed) else None
    return Report(
        target=context.target,
        stage=traced.stage,
        reached="traced" if failed else "lowered",
        jax_version=seam.jax_version(),
        platform=context.platform,
        num_devices=context.num_devices,
        mesh=mesh,
        partitioner=context.partitioner or "shardy",
        topology=context.topology,
        function=context.function or function_name(traced),
        file=context.file,
        line=context.line,
        inputs=tuple(inputs),
        static_args=context.static_args,
        outputs=tuple(
            _written_back(
                main,
                inputs,
                _outputs(traced, main, names, mesh, prefixed, one_device),
                prefixed,
                one_device,
            )  # fmt: skip
        ),
        extra_args=_extra_args(main),
        jaxpr=nested.grade(traced.names_jaxpr, "top", traced.stage),
        nested=tuple(nested.walk(traced.jaxpr, traced.stage)),
        error=failed.error if failed else None,
        error_traceback=failed.traceback if failed else None,
        notes=tuple(notes),
        program=_program(staged, context.keep_texts, main, inputs) if context.keep_texts else None,
    )


def _inputs(
    staged: Staged, main: MainSignature | None, names: _Names, mesh: Mesh | None, one_device: bool
) -> list[Input]:
    traced = staged.traced
    user_args = _user_values(main.args if main else None)
    n_in = seam.arity(traced.jaxpr)[0]
    kept = kept_inputs(staged, user_args, n_in) if main else list(range(n_in))
    by_input = dict(zip(kept, user_args))
    return [
        _input(i, aval, traced, by_input.get(i), names, mesh, main is not None, one_device)
        for i, aval in enumerate(seam.in_avals(traced.jaxpr))
    ]


def _input(
    i: int,
    aval: Any,
    traced: Traced,
    value: MainValue | None,
    names: _Names,
    mesh: Mesh | None,
    lowered: bool,
    one_device: bool,
) -> Input:
    """Flat input ``i``: what the jaxpr and ``@main`` (``value``; ``None`` when pruned or
    not lowered) carry, judged against the user's path (``one_device``: the program's)."""
    shape, dtype = _aval(aval)
    jaxpr_name = names.args[i] if names.args is not None else None
    path = names.expected_args[i] if names.expected_args is not None else None
    carried: str | None = None
    status: Status = "pruned"
    if not lowered or value is not None:
        carried = value.name if value is not None else jaxpr_name
        known = path if names.expected_args is not None else None  # None: no signature
        spelled = seam.newer_spelling(carried) if carried else carried
        status = classify_name(spelled, known, FALLBACK_ARG)
        if traced.wrapper is not None and status != "missing" and spelled != known:
            status = "renamed"  # the wrapper's own name, mapped back to the user's path
    declared = traced.declared[i] if traced.declared and not lowered else None
    sharding = value.sharding if value is not None else _unlowered_sharding(aval, declared, mesh)
    if sharding is not None:
        sharding = sharding.for_rank(len(shape))
    if sharding is None and value is not None and traced.stage == "pmap":
        sharding = _pmap_sharding(shape, value.shape, mesh)
    return Input(
        index=i,
        path=path or jaxpr_name or f"#{i}",
        jaxpr_name=jaxpr_name,
        name=carried,
        status=status,
        shape=shape,
        dtype=dtype,
        sharding=sharding,
        donated=traced.donated[i] if i < len(traced.donated) else False,
        aliased_output=value.aliasing_output if value else None,
        buffer_donor=value.buffer_donor if value else False,
        memory_kind=value.memory_kind if value else None,
        main_index=value.index if value else None,
        one_device=one_device,
    )


def _outputs(
    traced: Traced,
    main: MainSignature | None,
    names: _Names,
    mesh: Mesh | None,
    prefixed: bool,
    one_device: bool,
) -> list[Output]:
    user_results = _user_values(main.results if main else None)
    outputs = []
    for i, aval in enumerate(seam.out_avals(traced.jaxpr)):
        shape, dtype = _aval(aval)
        jaxpr_path = names.results[i] if names.results is not None else None
        wanted: str | None
        if names.expected_results:
            wanted = names.expected_results[i]  # None: a wrapper's result it could not map
        elif traced.wrapper is not None:
            wanted = None  # the wrapper's name is all there is: kept, and renamed
        elif jaxpr_path is not None:
            wanted = seam.normalize_result_path(jaxpr_path, prefixed)
        else:
            wanted = f"result#{i}"
        result = user_results[i] if i < len(user_results) else None
        if result is not None and result.sharding is None and traced.stage == "pmap":
            result = replace(result, sharding=_pmap_sharding(shape, result.shape, mesh))
        output = _output(i, shape, dtype, result, jaxpr_path, wanted, prefixed,
                         lowered=main is not None, wrapped=traced.wrapper is not None,
                         one_device=one_device)  # fmt: skip
        if traced.open_outputs is not None and i < len(traced.open_outputs):
            output = replace(output, left_to_compiler=traced.open_outputs[i])
        outputs.append(output)
    return outputs


def _written_back(
    main: MainSignature | None,
    inputs: list[Input],
    outputs: list[Output],
    prefixed: bool,
    one_device: bool,
) -> list[Output]:
    """``@main``'s results beyond the function's own: the new values of ``Ref``
    arguments, which JAX writes back into the argument aliased to them."""
    extra = _user_values(main.results if main else None)[len(outputs) :]
    into = {i.aliased_output: i.path for i in inputs if i.aliased_output is not None}
    written = []
    for i, value in enumerate(extra, len(outputs)):
        output = _output(
            i, value.shape or (), value.dtype or value.type, value, None, None, prefixed,
            one_device=one_device,
        )  # fmt: skip
        into_what = into.get(value.index)
        said = f"written back to {into_what}" if into_what else "not the function's own"
        written.append(replace(output, path=f"{output.path} ({said})"))
    return outputs + written


def _input_from_main(i: int, value: MainValue, one_device: bool) -> Input:
    """An input known only from ``@main`` (no call says what it should be named);
    ``one_device``: the program's."""
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
        one_device=one_device,
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
    one_device: bool = False,
) -> Output:
    """One output; the carried name stays as written, its path in the newer spelling.
    ``wrapped``: a library's wrapper named it (``renamed`` unless it carries ``expected``,
    the user's path)."""
    carried = result.name if result is not None else (None if lowered else jaxpr_path)
    normalized = normalized_result(carried, prefixed)
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
        sharding=result.sharding.for_rank(len(shape)) if result and result.sharding else None,
        memory_kind=result.memory_kind if result else None,
        one_device=one_device,
    )
