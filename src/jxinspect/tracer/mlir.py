"""Read ``func.func @main`` of a StableHLO module through jaxlib's MLIR bindings.

What each argument and result carries: its name (the block argument's location),
its type, its sharding (``sdy.sharding`` or ``mhlo.sharding``), donation
(``tf.aliasing_output``, ``jax.buffer_donor``), memory kind, and whether JAX added it
itself (``jax.token``, ``jax.const``, ``jax.global_constant``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jxinspect import dtypes
from jxinspect.model import ExtraKind, Mesh, Sharding
from jxinspect.tracer import seam, shardings


@dataclass(frozen=True)
class MainValue:
    """One argument or result of ``@main``."""

    index: int
    type: str
    shape: tuple[int, ...] | None
    """``None`` for a non-tensor (a token)."""
    dtype: str | None
    name: str | None
    """Argument: its location's name; result: ``jax.result_info``."""
    sharding: Sharding | None
    aliasing_output: int | None = None
    buffer_donor: bool = False
    memory_kind: str | None = None
    jax_kind: ExtraKind | None = None
    """``token``, ``constant`` or ``dimension`` when JAX added this value itself."""


@dataclass(frozen=True)
class MainSignature:
    """``@main``'s arguments and results, and the meshes the module declares."""

    args: tuple[MainValue, ...]
    results: tuple[MainValue, ...]
    meshes: dict[str, Mesh]


def _attr_dict(array: Any, i: int) -> dict[str, Any]:
    ir = seam.ir()

    if array is None or i >= len(array):
        return {}
    return {named.name: named.attr for named in ir.DictAttr(array[i])}


def string_value(attr: Any) -> str:
    ir = seam.ir()

    return str(ir.StringAttr(attr).value) if isinstance(attr, ir.StringAttr) else str(attr)


def _tensor(type_: Any) -> tuple[tuple[int, ...] | None, str | None]:
    ir = seam.ir()

    try:
        tensor = ir.RankedTensorType(type_)
    except (ValueError, TypeError):
        return None, None
    return tuple(int(d) for d in tensor.shape), dtypes.from_mlir(str(tensor.element_type))


def _value(
    index: int,
    type_: Any,
    attrs: dict[str, Any],
    name: str | None,
    meshes: dict[str, Mesh],
    mesh_hint: Mesh | None,
    device_ids: Any,
    maximal: frozenset[str] = frozenset(),
) -> MainValue:
    shape, dtype = _tensor(type_)
    sharding: Sharding | None = None
    if "sdy.sharding" in attrs:
        sharding = shardings.from_sdy(attrs["sdy.sharding"], meshes, maximal)
    elif "mhlo.sharding" in attrs:
        text = string_value(attrs["mhlo.sharding"])
        sharding = shardings.from_hlo_text(text, len(shape or ()), mesh_hint, device_ids)
    jax_kind: ExtraKind | None = None
    if "jax.token" in attrs or str(type_) == "!stablehlo.token":
        jax_kind = "token"
    elif "jax.const" in attrs:
        jax_kind = "constant"
    elif "jax.global_constant" in attrs:
        jax_kind = "dimension"
    alias = attrs.get("tf.aliasing_output")
    memory = attrs.get("mhlo.memory_kind")
    return MainValue(
        index=index,
        type=str(type_),
        shape=shape,
        dtype=dtype,
        name=name,
        sharding=sharding,
        aliasing_output=int(str(alias).split(":")[0]) if alias is not None else None,
        buffer_donor="jax.buffer_donor" in attrs and str(attrs["jax.buffer_donor"]) == "true",
        memory_kind=string_value(memory) if memory is not None else None,
        jax_kind=jax_kind,
    )


def find_main(module: Any) -> Any:
    """The public entry function (``@main``) of a module."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and string_value(op.attributes["sym_name"]) == "main":
            return op
    raise ValueError("the module has no func.func @main")


def read_main(module: Any, mesh_hint: Mesh | None = None, device_ids: Any = None) -> MainSignature:
    """Read ``@main``; ``mesh_hint`` names GSPMD tile assignments (Shardy names its own)."""
    ir = seam.ir()

    with module.context:
        abstract = bool(mesh_hint and mesh_hint.abstract)
        declared = [op for op in module.body.operations if op.operation.name == "sdy.mesh"]
        meshes = {
            string_value(op.attributes["sym_name"]): shardings.mesh_from_sdy(
                op.attributes["mesh"], abstract
            )
            for op in declared
        }
        maximal = frozenset(
            string_value(op.attributes["sym_name"])
            for op in declared
            if shardings.is_maximal_mesh(op.attributes["mesh"])
        )
        main = find_main(module)
        attrs = main.attributes
        arg_attrs = attrs["arg_attrs"] if "arg_attrs" in attrs else None
        res_attrs = attrs["res_attrs"] if "res_attrs" in attrs else None
        function_type = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
        block = main.regions[0].blocks[0]
        names = seam.block_argument_names(main)
        args = tuple(
            _value(
                i,
                arg.type,
                _attr_dict(arg_attrs, i),
                names[i],
                meshes,
                mesh_hint,
                device_ids,
                maximal,
            )  # fmt: skip
            for i, arg in enumerate(block.arguments)
        )
        results = tuple(
            _value(i, type_, res, _result_name(res), meshes, mesh_hint, device_ids, maximal)
            for i, type_ in enumerate(function_type.results)
            for res in (_attr_dict(res_attrs, i),)
        )
        args, results = _with_manual_specs(
            block, args, results, meshes, mesh_hint, device_ids, maximal
        )
    return MainSignature(args, results, meshes)


def _result_name(attrs: dict[str, Any]) -> str | None:
    return string_value(attrs["jax.result_info"]) if "jax.result_info" in attrs else None


def _with_manual_specs(
    block: Any,
    args: tuple[MainValue, ...],
    results: tuple[MainValue, ...],
    meshes: dict[str, Mesh],
    mesh_hint: Mesh | None,
    device_ids: Any,
    maximal: frozenset[str] = frozenset(),
) -> tuple[tuple[MainValue, ...], tuple[MainValue, ...]]:
    """Give the arguments and results of a top-level shard_map its in/out specs when
    ``@main`` itself declares none: Shardy's ``sdy.manual_computation``, or GSPMD's
    ``@Sharding`` (into the shard_map) and ``@SPMDShardToFullShape`` (out of it)."""
    from dataclasses import replace

    sdy = seam.sdy()

    arg_specs: dict[int, Sharding] = {}
    result_specs: dict[int, Sharding] = {}
    operations = list(block.operations)
    returned = list(operations[-1].operands) if operations else []

    def feeds_in(operand: Any, sharding: Sharding) -> None:
        number = seam.block_argument_number(operand, block)
        if number is not None:
            arg_specs.setdefault(number, sharding)

    def comes_out(result: Any, sharding: Sharding) -> None:
        for i, value in enumerate(returned):
            if value == result:
                result_specs.setdefault(i, sharding)

    def gspmd(op: Any, value: Any) -> Sharding:
        shape, _ = _tensor(value.type)
        text = string_value(op.attributes["mhlo.sharding"])
        return shardings.from_hlo_text(text, len(shape or ()), mesh_hint, device_ids)

    def target(op: Any) -> str | None:
        if op.operation.name != "stablehlo.custom_call" or "mhlo.sharding" not in op.attributes:
            return None
        return string_value(op.attributes["call_target_name"])

    # GSPMD enters a shard_map as @Sharding then @SPMDFullToShardShape on its result
    entering = [op.operands[0] for op in operations if target(op) == "SPMDFullToShardShape"]
    for op in operations:
        name = op.operation.name
        if name == "sdy.manual_computation":
            ins = sdy.TensorShardingPerValueAttr(op.attributes["in_shardings"]).shardings
            outs = sdy.TensorShardingPerValueAttr(op.attributes["out_shardings"]).shardings
            for operand, attr in zip(op.operands, ins):
                feeds_in(operand, shardings.from_sdy(attr, meshes, maximal))
            for result, attr in zip(op.results, outs):
                comes_out(result, shardings.from_sdy(attr, meshes, maximal))
        elif target(op) == "Sharding" and any(op.results[0] == v for v in entering):
            feeds_in(op.operands[0], gspmd(op, op.operands[0]))
        elif target(op) == "SPMDShardToFullShape":
            comes_out(op.results[0], gspmd(op, op.results[0]))
    if not arg_specs and not result_specs:
        return args, results
    args = tuple(
        replace(a, sharding=arg_specs[a.index])
        if a.sharding is None and a.index in arg_specs
        else a
        for a in args
    )
    results = tuple(
        replace(r, sharding=result_specs[r.index])
        if r.sharding is None and r.index in result_specs
        else r
        for r in results
    )
    return args, results
