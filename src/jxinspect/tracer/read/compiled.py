"""Read what XLA made of the program: chosen shardings, memory, cost, aliasing, collectives.

The optimized HLO's text (``compiled.as_text()``, what XLA prints of the program it runs)
is read directly (:mod:`.hlo_text`): each collective instruction is one collective, its
devices decoded from whichever spelling the release writes (:mod:`.replica_groups`) and
mapped to the user's mesh axes, its source line from the metadata or the stack-frame
tables, what it moves and how often it runs from the data flow (:mod:`.hlo_flow`); the
aliasing is the module's ``input_output_alias``; the parameters' names are their
metadata. Fail closed: where the text holds what this reader does not know, the
collectives and aliases are unknown (``None``) with a one-line reason, never empty.
Memory is XLA's ``memory_analysis()``; FLOPs and bytes accessed its ``cost_analysis()``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from jxinspect.core.dtypes import element_bytes, from_hlo
from jxinspect.core.errors import UsageError
from jxinspect.core.model import (
    Collective,
    CompiledInfo,
    Input,
    MemoryPeak,
    MemoryStats,
    Mesh,
    Operand,
    Output,
    Report,
    Sharding,
    known_sum,
    per_device,
    shard_bytes,
)
from jxinspect.core.units import type_text
from jxinspect.tracer import seam
from jxinspect.tracer.read import hlo_flow, hlo_text, kernels, replica_groups, shardings
from jxinspect.tracer.read.hlo_text import HloText, Instruction, UnreadHlo
from jxinspect.tracer.read.kernels import read_kernels
from jxinspect.tracer.read.peak import read_peak
from jxinspect.tracer.read.replica_groups import Groups


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


def memory_from_stats(stats: Any, estimate: tuple[int | None, int | None]) -> MemoryStats:
    """XLA's ``CompiledMemoryStats`` as :class:`MemoryStats`; where the backend gave none
    (``None``, zeros or -1 while the program has arguments or outputs), say so and use
    ``estimate``: our own (argument, output) bytes per device (``None``: a leaf's layout
    is unknown)."""
    fields = ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes",
              "generated_code_size_in_bytes", "alias_size_in_bytes")  # fmt: skip
    values = [int(getattr(stats, f, -1)) for f in fields] if stats is not None else [-1] * 5
    arguments, outputs = estimate
    if values[0] <= 0 and values[1] <= 0 and (arguments != 0 or outputs != 0):
        return MemoryStats(arguments, outputs, None, None, None, source="estimate",
                           note="the backend reported no memory analysis; arguments and "
                                "outputs are jxinspect's own per-device counts")  # fmt: skip
    temps, code, aliased = (v if v >= 0 else None for v in values[2:])
    host_fields = ("host_argument_size_in_bytes", "host_output_size_in_bytes",
                   "host_temp_size_in_bytes")  # fmt: skip
    host = [int(getattr(stats, f, -1)) for f in host_fields]
    return MemoryStats(values[0], values[1], temps, code, aliased, source="xla",
                       host=sum(host) if min(host) >= 0 else None)  # fmt: skip


def _operands(module: HloText, instruction: Instruction) -> tuple[Operand, ...]:
    """Each array its operands hold (a tuple operand: each element), per device."""
    found = []
    for operand in instruction.operands:
        value = module.instructions.get(operand)
        if value is None:
            raise UnreadHlo(f"%{instruction.name} reads %{operand}, which the module lacks")
        for dtype, dims in _ARRAY.findall(value.shape):
            if dtype == "token":  # a send's ordering token: no data
                continue
            shape = tuple(int(d) for d in re.findall(r"\d+", dims))
            found.append(Operand(shape, from_hlo(dtype)))
    return tuple(found)


_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")
"""An array type in an HLO shape (``f32[8,16]{1,0}``; a tuple holds several)."""

GLOBAL_IDS = frozenset(("all-reduce", "all-gather", "reduce-scatter"))
"""The collectives that say ``use_global_device_ids``; the others' groups, with a channel,
number partitions."""


def logical_groups(module: HloText, instruction: Instruction, kind: str) -> tuple[str, Groups]:
    """A collective's groups (or a permute's pairs) as logical device ids (replica ×
    partitions + partition), in XLA's group modes: no channel, replica ids; a channel
    and ``use_global_device_ids=true``, flattened ids; a channel without it, partition
    ids (``all-to-all``, a permute) or, where the op could say it, all partitions of the
    replicas named."""
    devices, partitions = module.devices, module.partitions
    replicas = devices // partitions
    decoded = replica_groups.decode(instruction.attributes, devices, instruction.name)
    channel = instruction.channel is not None
    flattened = "use_global_device_ids=true" in instruction.attributes
    if decoded is None:  # none named: every device
        by_replica = not channel or (kind in GLOBAL_IDS and not flattened)
        decoded = ("groups", [list(range(replicas if by_replica else partitions))])
    form, rows = decoded
    if form == "pairs" or flattened or (replicas == 1 and channel and kind not in GLOBAL_IDS):
        return form, rows
    if not channel:  # replica ids, within each partition
        return form, [[r * partitions + p for r in g] for p in range(partitions) for g in rows]
    if kind in GLOBAL_IDS:  # all partitions of the replicas named
        return form, [[r * partitions + p for r in g for p in range(partitions)] for g in rows]
    return form, [[r * partitions + p for p in g] for r in range(replicas) for g in rows]


def _slice_positions(
    module: HloText, device_ids: list[int] | None, slice_of: list[int] | None
) -> list[list[int]] | None:
    """Where there are several slices, each slice's devices' places in the assignment (the
    whole program's logical ids), in slice order; ``None`` for one slice."""
    indices = sorted(set(slice_of or ()))
    if len(indices) < 2 or slice_of is None or device_ids is None:
        return None
    places = [[i for i, s in enumerate(slice_of) if s == index] for index in indices]
    if len(device_ids) != len(slice_of) or any(len(p) != module.devices for p in places):
        raise UnreadHlo(f"{len(indices)} slices of {module.devices} partitions do not make "
                        f"the {len(device_ids)} devices assigned")  # fmt: skip
    return places


def _positions(instruction: Instruction, device_ids: list[int]) -> Groups:
    """A transfer across slices' groups as logical ids (places in the assignment)."""
    place = {device: i for i, device in enumerate(device_ids)}
    groups = replica_groups.across_slices(instruction.attributes, instruction.name)
    if any(device not in place for group in groups for device in group):
        raise UnreadHlo(f"%{instruction.name} names a device not assigned to the program")
    return [[place[device] for device in group] for group in groups]


def _check(rows: Groups, devices: int, name: str) -> None:
    if any(not 0 <= d < devices for row in rows for d in row):
        raise UnreadHlo(f"%{name} names a device outside the module's {devices}")


def read_collectives(
    module: HloText,
    mesh: Mesh | None,
    device_ids: list[int] | None = None,
    paths: tuple[dict[int, str], list[str]] = ({}, []),
    slice_of: list[int] | None = None,
) -> tuple[Collective, ...]:
    """Every collective instruction of the optimized HLO, once (an asynchronous pair:
    its ``-start``), with its devices, mesh axes, source line, the paths it moves and
    its loops (:mod:`.hlo_flow`). ``device_ids``: the device of each logical id (the
    compiled program's device assignment; ``None``: the ids themselves); ``paths``: the
    program's inputs' paths by parameter number and its outputs' paths by index;
    ``slice_of``: each assigned device's slice, where the program spans several (each
    slice runs the module over its own devices, in assignment order, and its transfers
    across slices name devices by id)."""
    inputs, outputs = paths
    slices = _slice_positions(module, device_ids, slice_of)
    total = module.devices * (len(slices) if slices else 1)
    ids = device_ids if device_ids is not None and len(device_ids) == total else None
    found = []
    for flow in hlo_flow.flows(module):
        instruction = flow.instruction
        operands = _operands(module, instruction)
        if instruction.opcode == "send":  # across slices: their devices by id
            form, rows = "groups", _positions(instruction, ids or [])
        else:
            form, rows = logical_groups(module, instruction, flow.kind)
            _check(rows, module.devices, instruction.name)
            rows = [[at[d] for d in row] for at in slices for row in rows] if slices else rows
        if form == "pairs":
            axes = replica_groups.axes_of_pairs(rows, mesh) if mesh else None
        else:
            axes = replica_groups.axes_of_groups(rows, mesh) if mesh else None
        devices = tuple(tuple(ids[d] if ids else d for d in row) for row in rows)
        moved = [inputs[p] for p in flow.parameters if p in inputs]
        moved += [outputs[i] for i in flow.outputs if i < len(outputs)]
        at = module.located(instruction)
        found.append(
            Collective(
                kind=flow.kind,
                operands=operands,
                bytes=int(sum(shard_bytes(o.shape, o.dtype) or 0 for o in operands)),
                axes=axes,
                groups=devices if form == "groups" else None,
                pairs=devices if form == "pairs" else (),
                instruction=instruction.name,
                op_name=instruction.op_name,
                file=at.file,
                line=at.line,
                library_file=at.library_file,
                library_line=at.library_line,
                computation=instruction.computation,
                operand_paths=tuple(dict.fromkeys(moved)),
                loops=flow.loops,
                trip_count=flow.trip_count,
            )
        )
    return tuple(found)


def names_read(report: Report) -> bool:
    """Whether the compiled program's parameter names were read (``compiled_name``)."""
    compiled = report.compiled
    return compiled is not None and compiled.unread is None


def _unread(err: BaseException) -> tuple[str, str]:
    """One line saying what failed and under which JAX, and the whole error."""
    first = (str(err).strip().splitlines() or [""])[0]
    first = first if len(first) <= 160 else first[:157] + "..."
    what = first if isinstance(err, UnreadHlo) else f"{type(err).__name__}: {first}"
    line = f"optimized HLO not read ({what}; JAX {seam.jax_version()})"
    return line, f"{type(err).__name__}: {err}"


def read_compiled(
    compiled: Any,
    mesh: Mesh | None,
    estimate: tuple[int | None, int | None],
    paths: tuple[dict[int, str], list[str]] = ({}, []),
    *,
    memory: bool = False,
    dumped: bytes | None = None,
    platform: str | None = None,
    lowered_calls: frozenset[str] | None = None,
) -> tuple[CompiledInfo, tuple[str | None, ...]]:
    """Memory, cost, aliasing and collectives of a compiled program, and the name each of
    its parameters carries (XLA keeps ``@main``'s argument names as their op metadata),
    all read from the optimized HLO's text. Where that text cannot be read, its
    collectives, aliases and names are unknown (``None``) and ``unread`` says why.
    ``paths``: the program's inputs' paths by parameter number, and its outputs' paths,
    which the collectives name where they move them. ``memory``: also the peak and the
    buffers live there (:mod:`.peak`; from the ``dumped`` assignment where the executable
    keeps none), counting the code where the ``platform``'s device loads it into its
    memory. Each kernel (custom call of the lowered program: ``lowered_calls``' targets,
    where known) is read (:mod:`.kernels`); one of unknown cost makes the FLOPs unknown,
    XLA's figure the part known."""
    costs = seam.cost_analysis(compiled) or {}
    analysis = seam.memory_analysis(compiled)
    stats = memory_from_stats(analysis, estimate)
    if seam.code_in_device_memory(platform) and stats.generated_code:
        stats = replace(stats, loaded_code=stats.generated_code)
    try:
        module = hlo_text.parse(compiled.as_text())
        assigned, slices = seam.partition_assignment(compiled) or (None, None)
        collectives = read_collectives(module, mesh, assigned, paths, slices)
    except Exception as err:  # a text this reader does not know: unknown, never empty
        unread, error = _unread(err)
        peak = MemoryPeak(None, buffers=None, unread=unread) if memory else None
        info = CompiledInfo(memory=stats, collectives=None, aliases=None, kernels=None,
                            unread=unread,
                            unread_error=error, flops=costs.get("flops"), peak=peak,
                            bytes_accessed=costs.get("bytes accessed"))  # fmt: skip
        return info, ()
    found = read_kernels(module, lowered_calls)
    flops, known_part = kernels.flops(found, costs.get("flops"))
    info = CompiledInfo(
        memory=stats,
        collectives=collectives,
        aliases=tuple(sorted(module.aliases.items())),
        flops=flops,
        flops_known_part=known_part,
        kernels=found,
        bytes_accessed=costs.get("bytes accessed"),
        peak=_allocated(
            read_peak(compiled, analysis, module, paths, dumped, stats.loaded_code), stats
        )
        if memory
        else None,
    )
    return info, tuple(hlo_text.parameter_names(module))


def _allocated(peak: MemoryPeak, stats: MemoryStats) -> MemoryPeak:
    """``peak`` with what XLA allocates to run the program, as ``memory_analysis()`` says
    it: arguments, outputs (less those aliased to arguments), temporaries, and the code
    where the device loads it into the same memory (a TPU, whose temporaries are its HBM's
    alone). On a CPU this is the buffer assignment's sum (a test holds them equal on every
    release); on a v5e chip, filled until the step no longer ran (tests/tpu/probe.py), it
    was within 0.1 % of what the chip needed on a transformer's train step, where the
    buffers live at the peak came to 1.8 % less (XLA packs the temporaries into one
    allocation larger than their live set) and the assignment's allocations 0.9 % less.
    Where the analysis lacks a part, the assignment's sum stays."""
    parts = (stats.arguments, stats.outputs, stats.temporaries, stats.aliased)
    if stats.source != "xla" or any(part is None for part in parts):
        return peak
    arguments, outputs, temporaries, aliased = (int(part or 0) for part in parts)
    needed = arguments + outputs - aliased + temporaries + (stats.loaded_code or 0)
    return replace(peak, allocated=needed)


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


def attach(
    report: Report,
    compiled: Any,
    *,
    memory: bool = False,
    dumped: bytes | None = None,
    lowered_calls: frozenset[str] | None = None,
) -> Report:
    """The report with what compilation chose: per-leaf shardings, aliasing, memory,
    collectives (``memory``: and the peak's live set; ``dumped``: the buffer assignment
    the compile wrote, where the executable keeps none; ``lowered_calls``: the lowered
    program's custom-call targets); ``reached`` becomes ``compiled``."""
    mesh = report.mesh
    chosen_in, chosen_out = seam.compiled_shardings(compiled)

    def chosen(chosen_shardings: list[Any], i: int, rank: int) -> Sharding | None:
        value = chosen_shardings[i] if i < len(chosen_shardings) else None
        return sharding_of(value, rank, mesh)

    shardings_in = [chosen(chosen_in, i, len(leaf.shape)) for i, leaf in enumerate(report.inputs)]
    outputs = tuple(
        replace(leaf, compiled_sharding=chosen(chosen_out, i, len(leaf.shape)))
        for i, leaf in enumerate(report.outputs)
    )
    estimate = (
        known_sum(
            per_device(leaf.shape, leaf.dtype, laid or leaf.sharding, leaf.one_device)[1]
            for leaf, laid in zip(report.inputs, shardings_in)
            if leaf.status != "pruned"
        ),
        known_sum(leaf.bytes_per_device for leaf in outputs),
    )
    paths = (
        {leaf.main_index: leaf.path for leaf in report.inputs if leaf.main_index is not None},
        [leaf.path for leaf in report.outputs],
    )
    info, names = read_compiled(
        compiled, mesh, estimate, paths, memory=memory, dumped=dumped,
        platform=report.platform, lowered_calls=lowered_calls,
    )  # fmt: skip
    aliases = dict(info.aliases or ())
    inputs = []
    for leaf, laid in zip(report.inputs, shardings_in):
        at = leaf.main_index  # the compiled program's parameter number; None: pruned
        inputs.append(
            replace(
                leaf,
                compiled_sharding=laid,
                compiled_alias=aliases.get(at) if at is not None else None,
                compiled_name=names[at] if at is not None and at < len(names) else None,
            )
        )
    return replace(report, reached="compiled", inputs=tuple(inputs), outputs=outputs, compiled=info)
