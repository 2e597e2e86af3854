"""Read what XLA made of the program: chosen shardings, memory, cost, aliasing, collectives.

The optimized HLO is converted back to StableHLO (``hlo_to_stablehlo``) and walked with
jaxlib's MLIR bindings, like ``@main`` before compilation: collectives are ops, replica
groups are dense attributes (or ``#stablehlo.replica_group_mesh_axes``), and source
lines are locations. Replica groups list partition ids; they are mapped back to the
user's mesh axis names by trying each set of axes. The HLO text (``as_text()``) is read
beside it (:mod:`.hlo_text`, :mod:`.hlo_flow`): the parameters' names, and what each
collective moves and how many times it runs. FLOPs and bytes accessed are XLA's
``cost_analysis()``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from jxinspect.core.dtypes import element_bytes, from_mlir
from jxinspect.core.errors import UsageError
from jxinspect.core.model import (
    Collective,
    CompiledInfo,
    Input,
    MemoryStats,
    Mesh,
    Operand,
    Output,
    Report,
    Sharding,
)
from jxinspect.core.units import type_text
from jxinspect.core.vocabulary import COLLECTIVE_KINDS
from jxinspect.tracer import seam
from jxinspect.tracer.read import hlo_flow, hlo_text, mlir, shardings
from jxinspect.tracer.read.hlo_text import HloText

COLLECTIVES = tuple(kind.replace("-", "_") for kind in COLLECTIVE_KINDS)
"""The collectives, as StableHLO spells them."""


def sharding_of(value: Any, rank: int, mesh: Mesh | None) -> Sharding | None:
    """A JAX ``Sharding`` object (what ``Compiled.input_shardings`` holds) → Sharding."""
    if value is None:
        return None
    spec = getattr(value, "spec", None)
    jax_mesh = getattr(value, "mesh", None)
    if spec is not None and jax_mesh is not None:
        own = Mesh(seam.mesh_axes(jax_mesh), abstract=mesh.abstract if mesh else False)
        return shardings.from_partition_spec(spec, rank, own, "compiled")
    text = seam.hlo_sharding_text(value, rank)
    if text is None:
        return None
    read = shardings.from_hlo_text(text, rank, mesh)
    return Sharding(
        read.kind,
        spec=read.spec,
        mesh=read.mesh,
        tiles=read.tiles,
        replicas=read.replicas,
        source="compiled",
        raw=text,
    )


def memory_stats(compiled: Any, estimate: tuple[int, int]) -> MemoryStats:
    """``memory_analysis()`` per device, with the fallback of :func:`memory_from_stats`."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # a backend without the analysis
        stats = None
    return memory_from_stats(stats, estimate)


def memory_from_stats(stats: Any, estimate: tuple[int, int]) -> MemoryStats:
    """XLA's ``CompiledMemoryStats`` as :class:`MemoryStats`; where the backend gave none
    (``None``, zeros or -1 while the program has arguments or outputs), say so and use
    ``estimate``: our own (argument, output) bytes per device."""
    fields = ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes",
              "generated_code_size_in_bytes", "alias_size_in_bytes")  # fmt: skip
    values = [int(getattr(stats, f, -1)) for f in fields] if stats is not None else [-1] * 5
    arguments, outputs = estimate
    if values[0] <= 0 and values[1] <= 0 and (arguments or outputs):
        return MemoryStats(arguments, outputs, None, None, None, source="estimate",
                           note="the backend reported no memory analysis; arguments and "
                                "outputs are jxinspect's own per-device counts")  # fmt: skip
    temps, code, aliased = (v if v >= 0 else None for v in values[2:])
    return MemoryStats(values[0], values[1], temps, code, aliased, source="xla")


def _groups(attr: Any, mlir_mesh: dict[str, int]) -> list[list[int]] | None:
    """Replica groups as lists of partition ids, from either attribute form."""
    import numpy as np

    ir = seam.ir()
    stablehlo = seam.stablehlo()

    if isinstance(attr, ir.DenseIntElementsAttr):
        array = np.array(attr)
        return [[int(d) for d in row if d >= 0] for row in array.reshape(array.shape[0], -1)]
    try:
        mesh_axes = stablehlo.ReplicaGroupMeshAxesAttr(attr)
    except (ValueError, TypeError):
        return None
    names = list(mlir_mesh)
    sizes = [mlir_mesh[n] for n in names]
    chosen = [names.index(stablehlo.AxisRefAttr(a).name) for a in mesh_axes.axes]
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    rest = [i for i in range(len(sizes)) if i not in chosen]
    grouped = ids.transpose(rest + chosen).reshape(-1, math.prod(sizes[i] for i in chosen))
    return [[int(d) for d in row] for row in grouped]


def axes_of_groups(groups: list[list[int]], mesh: Mesh) -> tuple[str, ...] | None:
    """The mesh axes whose devices each group spans (partition ids in mesh order)."""
    import numpy as np

    sizes = [size for _, size in mesh.axes]
    if math.prod(sizes) != sum(len(g) for g in groups):
        return None
    want = sorted(sorted(g) for g in groups)
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    for count in range(len(sizes) + 1):
        for chosen in itertools.combinations(range(len(sizes)), count):
            rest = [i for i in range(len(sizes)) if i not in chosen]
            size = math.prod(sizes[i] for i in chosen)
            got = ids.transpose(rest + list(chosen)).reshape(-1, size)
            if sorted(sorted(int(d) for d in row) for row in got) == want:
                return tuple(mesh.axes[i][0] for i in chosen)
    return None


def _pair_axes(pairs: list[list[int]], mesh: Mesh) -> tuple[str, ...] | None:
    """Axes along which ``collective_permute`` moves data: the coordinates that differ."""
    import numpy as np

    sizes = [size for _, size in mesh.axes]
    total = math.prod(sizes)
    moved: set[int] = set()
    for source, target in pairs:
        if not (0 <= source < total and 0 <= target < total):
            return None
        a, b = np.unravel_index(source, sizes), np.unravel_index(target, sizes)
        moved |= {i for i in range(len(sizes)) if a[i] != b[i]}
    return tuple(mesh.axes[i][0] for i in sorted(moved))


def _source(location: Any) -> tuple[str | None, str | None, int | None]:
    """(op name, file, line) from a location: the outer name, the innermost file:line."""
    op_name: str | None = None
    stack = [location]
    while stack:
        loc = seam.read_location(stack.pop())
        if loc.kind == "name":
            if op_name is None and loc.name and "/" in loc.name:
                op_name = loc.name
            stack += [c for c in loc.children]
        elif loc.kind == "callsite":
            callee, caller = loc.children
            stack += [caller, callee]  # callee (innermost) is visited first
        elif loc.kind == "file":
            return op_name, loc.filename, loc.line
        elif loc.kind == "fused":
            stack += list(reversed(loc.children))
    return op_name, None, None


def _walk(operation: Any, function: str) -> Iterator[tuple[Any, str]]:
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                name = op.operation.name
                inner = function
                if name == "func.func":
                    inner = mlir.string_value(op.attributes["sym_name"])
                yield op, inner
                yield from _walk(op.operation, inner)


def _kind(op_name: str) -> str | None:
    base = op_name.split(".", 1)[-1]
    if base.endswith("_done"):
        return None
    base = base.removesuffix("_start")
    return base.replace("_", "-") if base in COLLECTIVES else None


def read_collectives(module: Any, mesh: Mesh | None) -> tuple[Collective, ...]:
    """Every collective instruction of the optimized module once (:func:`collectives_read`)."""
    return tuple(collective for collective, _ in collectives_read(module, mesh))


def collectives_read(module: Any, mesh: Mesh | None) -> list[tuple[Collective, int | None]]:
    """Every collective instruction of the optimized module once, inside fusions and
    called computations too, with its channel; async start/done pairs count once. The
    module converted from HLO keeps a while loop's body twice (its own function, and
    inlined in the ``while``): the two copies of one instruction share its channel, and
    the one reached from ``main`` is kept."""
    found: list[tuple[Collective, int | None]] = []
    seen: dict[tuple[str, int], int] = {}
    with module.context:
        mlir_mesh = _mlir_mesh(module)
        for op, function in _walk(module.operation, ""):
            kind = _kind(op.operation.name)
            if kind is None:
                continue
            channel = _channel(op.attributes)
            if channel is not None and (kind, channel) in seen:
                if function == "main":  # the copy main reaches
                    at = seen[kind, channel]
                    found[at] = (replace(found[at][0], computation=function), channel)
                continue
            if channel is not None:
                seen[kind, channel] = len(found)
            operand_types, total = _operands(op)
            axes, groups_text = _participants(op.attributes, mlir_mesh, mesh)
            op_name, file, line = _source(op.location)
            collective = Collective(
                kind=kind,
                operands=operand_types,
                bytes=int(total),
                axes=axes,
                groups=groups_text,
                op_name=op_name,
                file=file,
                line=line,
                computation=function,
            )
            found.append((collective, channel))
    return found


def _channel(attrs: Any) -> int | None:
    """A collective's channel id (``channel_handle``), unique to its instruction."""
    if "channel_handle" not in attrs:
        return None
    found = re.search(r"handle = (\d+)", str(attrs["channel_handle"]))
    return int(found.group(1)) if found else None


def _mlir_mesh(module: Any) -> dict[str, int]:
    """The axes of the module's ``sdy.mesh`` (the last one), by name: their sizes."""
    sdy = seam.sdy()
    mlir_mesh: dict[str, int] = {}
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            read = sdy.MeshAttr(op.attributes["mesh"])
            mlir_mesh = {sdy.MeshAxisAttr(a).name: sdy.MeshAxisAttr(a).size for a in read.axes}
    return mlir_mesh


def _operands(op: Any) -> tuple[tuple[Operand, ...], float]:
    """Each ranked tensor operand's shape and dtype, and their bytes in all."""
    ir = seam.ir()
    operand_types = []
    total = 0.0
    for operand in op.operands:
        try:
            tensor = ir.RankedTensorType(operand.type)
        except (ValueError, TypeError):
            continue
        dtype = from_mlir(str(tensor.element_type))
        operand_types.append(Operand(tuple(int(d) for d in tensor.shape), dtype))
        total += math.prod(tensor.shape) * element_bytes(dtype)
    return tuple(operand_types), total


def _participants(
    attrs: Any, mlir_mesh: dict[str, int], mesh: Mesh | None
) -> tuple[tuple[str, ...] | None, str]:
    """The mesh axes a collective runs over (``None``: not known) and its groups, said
    briefly: from ``replica_groups`` or ``source_target_pairs``."""
    if "replica_groups" in attrs:
        groups = _groups(attrs["replica_groups"], mlir_mesh)
        if groups is None:
            return None, ""
        text = str(groups) if len(groups) <= 4 else f"{len(groups)} groups of {len(groups[0])}"
        return (axes_of_groups(groups, mesh) if mesh else None), text
    if "source_target_pairs" in attrs:
        import numpy as np

        ir = seam.ir()
        pairs = np.array(ir.DenseIntElementsAttr(attrs["source_target_pairs"])).tolist()
        return (_pair_axes(pairs, mesh) if mesh else None), f"{len(pairs)} pairs"
    return None, ""


def read_aliases(module: Any) -> dict[int, int]:
    """``mhlo.input_output_alias``: parameter number → output index."""
    ir = seam.ir()

    with module.context:
        attrs = module.operation.attributes
        if "mhlo.input_output_alias" not in attrs:
            return {}
        result = {}
        for entry in ir.ArrayAttr(attrs["mhlo.input_output_alias"]):
            item = ir.DictAttr(entry)
            alias = ir.DictAttr(item["alias"])
            parameter = ir.IntegerAttr(alias["parameter_number"]).value
            output = list(ir.DenseI64ArrayAttr(item["output_index"]))
            result[int(parameter)] = int(output[0]) if output else 0
        return result


HLO_UNREADABLE = "optimized HLO unreadable"
"""How a compiled report's note begins where its collectives and aliases could not be read."""
NAMES_UNREADABLE = "parameter names unreadable"
"""How it begins where its parameters' names could not be read: unknown, not lost."""


def names_read(report: Report) -> bool:
    """Whether the compiled program's parameter names were read (``compiled_name``)."""
    notes = report.compiled.notes if report.compiled is not None else ()
    return report.compiled is not None and not any(
        note.startswith(NAMES_UNREADABLE) for note in notes
    )


def read_compiled(
    compiled: Any,
    mesh: Mesh | None,
    estimate: tuple[int, int],
    paths: tuple[dict[int, str], list[str]] = ({}, []),
) -> tuple[CompiledInfo, tuple[str | None, ...]]:
    """Memory, cost, aliasing and collectives of a compiled program, and the name each of
    its parameters carries (XLA keeps ``@main``'s argument names as their op metadata).
    ``paths``: the program's inputs' paths by parameter number, and its outputs' paths,
    which the collectives name where they move them."""
    notes: list[str] = []
    try:
        module = seam.optimized_module(compiled)
    except Exception as err:  # no converter in this jaxlib, or an unreadable module
        module = None
        notes.append(f"{HLO_UNREADABLE} ({type(err).__name__}: {err})")
    text: HloText | None = None
    try:
        text = hlo_text.parse(compiled.as_text())
    except Exception as err:  # a text this reader does not know
        notes.append(f"{NAMES_UNREADABLE} ({type(err).__name__}: {err})")
    read = collectives_read(module, mesh) if module is not None else []
    flows = hlo_flow.flows(text) if text is not None else []
    costs = seam.cost_analysis(compiled) or {}
    info = CompiledInfo(
        memory=memory_stats(compiled, estimate),
        collectives=hlo_flow.with_flows(read, flows, *paths),
        aliases=tuple(sorted(read_aliases(module).items())) if module is not None else (),
        notes=tuple(notes),
        flops=costs.get("flops"),
        bytes_accessed=costs.get("bytes accessed"),
    )
    names = tuple(hlo_text.parameter_names(text)) if text is not None else ()
    return info, names


XLA_MAX_BYTES = 2**63 - 1
"""The largest array XLA can compile, in bytes: it sizes a shape in signed 64 bits and
aborts the process (``overflow in static extent product``) past it. Measured with jax
0.10.2 on CPU: ``f32[2305843009213693951]`` (2**63 - 4 bytes) and ``i8[2**31,2**31]``
compile, ``f32[2**31,2**30]`` (2**63 bytes) aborts, and so does a global shape past it
whose shards fit (XLA partitions the global shape)."""


def check_compilable(report: Report) -> None:
    """Refuse (:class:`UsageError`) to compile a program with an argument or result larger
    than XLA can size (:data:`XLA_MAX_BYTES`), before XLA aborts the process. Pure: the
    shapes come from the report; lowering such a program is fine (it allocates nothing)."""
    leaves: list[tuple[str, Input | Output]] = [
        ("input", leaf) for leaf in report.inputs if leaf.status != "pruned"
    ]
    leaves += [("output", leaf) for leaf in report.outputs]
    for kind, leaf in leaves:
        if any(d < 0 for d in leaf.shape):
            continue
        elements = math.prod(leaf.shape)
        size = -(-elements * round(element_bytes(leaf.dtype) * 8) // 8)
        if max(elements, size) > XLA_MAX_BYTES:
            raise UsageError(
                f"--compile: {kind} {leaf.path} is {type_text(leaf.shape, leaf.dtype)}, "
                f"{size:.3g} bytes; XLA cannot compile an array over 2**63-1 bytes "
                "(lower it without --compile: lowering allocates nothing)"
            )


def attach(report: Report, compiled: Any) -> Report:
    """The report with what compilation chose: per-leaf shardings, aliasing, memory,
    collectives; ``reached`` becomes ``compiled``."""
    mesh = report.mesh
    chosen_in, chosen_out = seam.compiled_shardings(compiled)
    estimate = (
        sum(leaf.bytes_per_device or 0 for leaf in report.inputs if leaf.status != "pruned"),
        sum(leaf.bytes_per_device or 0 for leaf in report.outputs),
    )
    paths = (
        {leaf.main_index: leaf.path for leaf in report.inputs if leaf.main_index is not None},
        [leaf.path for leaf in report.outputs],
    )
    info, names = read_compiled(compiled, mesh, estimate, paths)
    aliases = dict(info.aliases)

    def chosen(chosen_shardings: list[Any], i: int, rank: int) -> Sharding | None:
        value = chosen_shardings[i] if i < len(chosen_shardings) else None
        return sharding_of(value, rank, mesh)

    inputs = []
    for i, leaf in enumerate(report.inputs):
        at = leaf.main_index  # the compiled program's parameter number; None: pruned
        inputs.append(
            replace(
                leaf,
                compiled_sharding=chosen(chosen_in, i, len(leaf.shape)),
                compiled_alias=aliases.get(at) if at is not None else None,
                compiled_name=names[at] if at is not None and at < len(names) else None,
            )
        )
    outputs = tuple(
        replace(leaf, compiled_sharding=chosen(chosen_out, i, len(leaf.shape)))
        for i, leaf in enumerate(report.outputs)
    )
    return replace(report, reached="compiled", inputs=tuple(inputs), outputs=outputs, compiled=info)
