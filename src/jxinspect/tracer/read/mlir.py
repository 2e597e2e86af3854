"""Read ``func.func @main`` of a StableHLO module through jaxlib's MLIR bindings.

What each argument and result carries: its name (the block argument's location),
its type, its sharding (``sdy.sharding`` or ``mhlo.sharding``), donation
(``tf.aliasing_output``, ``jax.buffer_donor``), memory kind, and whether JAX added it
itself (``jax.token``, ``jax.const``, ``jax.global_constant``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jxinspect.core import dtypes
from jxinspect.core.model import ExtraKind, Mesh, Sharding
from jxinspect.tracer import seam
from jxinspect.tracer.read import shardings


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
    devices: int = 1
    """Partitions × replicas (``mhlo.num_partitions``, ``mhlo.num_replicas``): 1 for a
    program of one device, whose every value is whole there."""


def attr_dict(array: Any, i: int) -> dict[str, Any]:
    """Entry ``i`` of an array of attribute dictionaries (a function's ``arg_attrs`` or
    ``res_attrs``) as a dict; ``{}`` where there is none."""
    ir = seam.ir()

    if array is None or i >= len(array):
        return {}
    return {named.name: named.attr for named in ir.DictAttr(array[i])}


def attr_dicts(array: Any, count: int) -> list[dict[str, Any]]:
    """:func:`attr_dict` of each of the first ``count`` entries, read in one pass (most
    arguments of a large program carry none: those cost no dictionary walk)."""
    ir = seam.ir()

    found = [] if array is None else [
        {named.name: named.attr for named in entry} if len(entry) else {}
        for entry in map(ir.DictAttr, array)
    ]  # fmt: skip
    return found[:count] + [{} for _ in range(count - len(found))]


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


class _ModuleReader:
    """Reads the values of one module. A program's values repeat few types and
    shardings (every layer's weights alike), so each distinct one is read once: a type by
    itself (MLIR makes each once per context), a sharding by its printed form, which is
    all that reading it looks at."""

    def __init__(
        self,
        meshes: dict[str, Mesh],
        mesh_hint: Mesh | None,
        device_ids: Any,
        maximal: frozenset[str] = frozenset(),
    ) -> None:
        self.meshes, self.mesh_hint, self.device_ids = meshes, mesh_hint, device_ids
        self.maximal = maximal
        self.types: dict[Any, tuple[str, tuple[int, ...] | None, str | None]] = {}
        self.sdy: dict[str, Sharding] = {}
        self.hlo: dict[tuple[str, int], Sharding] = {}

    def typed(self, type_: Any) -> tuple[str, tuple[int, ...] | None, str | None]:
        """``type_`` printed, and its shape and dtype: once per type (MLIR makes each type
        once per context, so equal types hash alike)."""
        found = self.types.get(type_)
        if found is None:
            found = self.types[type_] = (str(type_), *_tensor(type_))
        return found

    def from_sdy(self, attr: Any) -> Sharding:
        text = str(attr)
        if text not in self.sdy:
            self.sdy[text] = shardings.from_sdy(attr, self.meshes, self.maximal)
        return self.sdy[text]

    def from_hlo(self, text: str, rank: int) -> Sharding:
        if (text, rank) not in self.hlo:
            self.hlo[text, rank] = shardings.from_hlo_text(
                text, rank, self.mesh_hint, self.device_ids
            )
        return self.hlo[text, rank]

    def value(self, index: int, type_: Any, attrs: dict[str, Any], name: str | None) -> MainValue:
        type_text, shape, dtype = self.typed(type_)
        if not attrs:  # most values of a large program: nothing more to read
            return MainValue(index, type_text, shape, dtype, name, None)
        sharding: Sharding | None = None
        if "sdy.sharding" in attrs:
            sharding = self.from_sdy(attrs["sdy.sharding"])
        elif "mhlo.sharding" in attrs:
            sharding = self.from_hlo(string_value(attrs["mhlo.sharding"]), len(shape or ()))
        jax_kind: ExtraKind | None = None
        if "jax.token" in attrs:  # a token of JAX's (effects); a user's own has no mark
            jax_kind = "token"
        elif "jax.const" in attrs:
            jax_kind = "constant"
        elif "jax.global_constant" in attrs:
            jax_kind = "dimension"
        alias = attrs.get("tf.aliasing_output")
        memory = attrs.get("mhlo.memory_kind")
        return MainValue(
            index=index,
            type=type_text,
            shape=shape,
            dtype=dtype,
            name=name,
            sharding=sharding,
            aliasing_output=int(str(alias).split(":")[0]) if alias is not None else None,
            buffer_donor="jax.buffer_donor" in attrs and str(attrs["jax.buffer_donor"]) == "true",
            memory_kind=string_value(memory) if memory is not None else None,
            jax_kind=jax_kind,
        )


def _mesh_ops(module: Any) -> list[Any]:
    return [op for op in module.body.operations if op.operation.name == "sdy.mesh"]


def declared_meshes(module: Any, abstract: bool = False) -> dict[str, Mesh]:
    """The meshes a module declares (``sdy.mesh @name = <...>``), by symbol name."""
    return {
        string_value(op.attributes["sym_name"]): shardings.mesh_from_sdy(
            op.attributes["mesh"], abstract
        )
        for op in _mesh_ops(module)
    }


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
        meshes = declared_meshes(module, bool(mesh_hint and mesh_hint.abstract))
        maximal = frozenset(
            string_value(op.attributes["sym_name"])
            for op in _mesh_ops(module)
            if shardings.is_maximal_mesh(op.attributes["mesh"])
        )
        main = find_main(module)
        attrs = main.attributes
        arg_attrs = attrs["arg_attrs"] if "arg_attrs" in attrs else None
        res_attrs = attrs["res_attrs"] if "res_attrs" in attrs else None
        function_type = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
        block = main.regions[0].blocks[0]
        names = seam.block_argument_names(main)
        reader = _ModuleReader(meshes, mesh_hint, device_ids, maximal)
        arguments, types = list(block.arguments), list(function_type.results)
        args = tuple(
            reader.value(i, arg.type, attrs, names[i])
            for i, (arg, attrs) in enumerate(zip(arguments, attr_dicts(arg_attrs, len(arguments))))
        )
        results = tuple(
            reader.value(i, type_, attrs, _result_name(attrs))
            for i, (type_, attrs) in enumerate(zip(types, attr_dicts(res_attrs, len(types))))
        )
        partitions = _count(module, "mhlo.num_partitions")
        if meshes or partitions > 1:  # else no shard_map can be in it
            args, results = _with_manual_specs(block, args, results, reader)
        devices = partitions * _count(module, "mhlo.num_replicas")
    return MainSignature(args, results, meshes, devices)


def _count(module: Any, key: str) -> int:
    """``mhlo.num_partitions`` or ``mhlo.num_replicas`` of the module (1 where it says
    none). A shard_map is in a module only over a mesh Shardy declares (``sdy.mesh``) or
    over more than one partition (GSPMD writes none for a mesh of one device, measured on
    0.4.35)."""
    ir = seam.ir()
    attrs = module.operation.attributes
    if key not in attrs or not isinstance(attrs[key], ir.IntegerAttr):
        return 1
    return int(ir.IntegerAttr(attrs[key]).value)


def _result_name(attrs: dict[str, Any]) -> str | None:
    return string_value(attrs["jax.result_info"]) if "jax.result_info" in attrs else None


def _with_manual_specs(
    block: Any,
    args: tuple[MainValue, ...],
    results: tuple[MainValue, ...],
    reader: _ModuleReader,
) -> tuple[tuple[MainValue, ...], tuple[MainValue, ...]]:
    """Give the arguments and results of a top-level shard_map its in/out specs when
    ``@main`` itself declares none: Shardy's ``sdy.manual_computation``, or GSPMD's
    ``@Sharding`` (into the shard_map) and ``@SPMDShardToFullShape`` (out of it). They
    are the shard_map's, not ``@main``'s, and say so (``source="shard_map"``)."""
    if all(value.sharding is not None for value in (*args, *results)):
        return args, results  # nothing left to fill in: skip reading every operation
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
        return reader.from_hlo(string_value(op.attributes["mhlo.sharding"]), len(shape or ()))

    found = _sharding_operations(operations)
    # GSPMD enters a shard_map as @Sharding then @SPMDFullToShardShape on its result
    entering = [op.operands[0] for op, target in found if target == "SPMDFullToShardShape"]
    for op, target in found:
        if target is None:
            ins, outs = seam.manual_computation_shardings(op)
            for operand, attr in zip(op.operands, ins):
                feeds_in(operand, reader.from_sdy(attr))
            for result, attr in zip(op.results, outs):
                comes_out(result, reader.from_sdy(attr))
        elif target == "Sharding" and any(op.results[0] == v for v in entering):
            feeds_in(op.operands[0], gspmd(op, op.operands[0]))
        elif target == "SPMDShardToFullShape":
            comes_out(op.results[0], gspmd(op, op.results[0]))
    return _filled(args, arg_specs), _filled(results, result_specs)


def _sharding_operations(operations: list[Any]) -> list[tuple[Any, str | None]]:
    """``(operation, custom call target)`` of each shard_map (target ``None``) and GSPMD
    sharding custom call, in order. Each operation's name is read once: among the many
    operations of a large program, only these matter."""
    found: list[tuple[Any, str | None]] = []
    for op in operations:
        name = op.operation.name
        if name == "sdy.manual_computation":
            found.append((op, None))
        elif name == "stablehlo.custom_call" and "mhlo.sharding" in op.attributes:
            found.append((op, string_value(op.attributes["call_target_name"])))
    return found


def _filled(values: tuple[MainValue, ...], specs: dict[int, Sharding]) -> tuple[MainValue, ...]:
    """``values`` with each one that has no sharding given its spec from ``specs``."""
    from dataclasses import replace

    if not specs:
        return values
    return tuple(
        replace(v, sharding=replace(specs[v.index], source="shard_map"))
        if v.sharding is None and v.index in specs
        else v
        for v in values
    )
