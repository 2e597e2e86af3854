"""The optimized program's kernels: each ``custom-call`` (a Pallas/Mosaic kernel's
``tpu_custom_call``, a LAPACK routine, a callback), named, at the user's line, with its
cost estimate where it has one and the buffers it reads and writes.

A Pallas kernel's ``backend_config`` carries its Mosaic module (``custom_call_config.
body``, whose kernel function names it: :func:`~jxinspect.tracer.seam.mosaic_kernel_name`)
and, where the user gave ``pl.CostEstimate``, ``custom_call_config.cost_estimate``
(``{"flops": "1234567", ...}``), which XLA's ``cost_analysis()`` adds to the program's.
Without one XLA counts the kernel as nothing: the program's FLOPs are then unknown
(:func:`flops`), the known part beside them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jxinspect.core.dtypes import from_hlo
from jxinspect.core.model import Kernel, KernelBuffer, shard_bytes
from jxinspect.tracer import seam
from jxinspect.tracer.read.hlo_text import HloText, Instruction

_TARGET = re.compile(r'\bcustom_call_target="((?:[^"\\]|\\.)*)"')
_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^{}]*\})?")
_SPACE = re.compile(r"S\((\d+)\)")

COSTLESS = frozenset((
    "xla_python_cpu_callback", "xla_python_gpu_callback", "xla_ffi_python_cpu_callback",
    "xla_ffi_python_gpu_callback", "annotate_device_placement", "MoveToHost",
    "MoveToDevice", "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
    "LayoutConstraint", "AllocateBuffer", "SliceId", "ZeroCrop",
))  # fmt: skip
"""Custom-call targets that do no arithmetic on the device (a host callback, a placement
or sharding annotation, an allocation): 0 FLOPs, not unknown. A multi-slice TPU program
has two of its own (libtpu 0.0.42.1): ``SliceId``, no operands, the slice's index (a
``u32[]``, as ``partition-id`` is the partition's); ``ZeroCrop``, its operand's buffer
grown in place to the padded size a transfer across slices sends, the rest zeroed."""


def read_kernels(module: HloText, lowered: frozenset[str] | None) -> tuple[Kernel, ...]:
    """Every ``custom-call`` of the optimized module, in program order, but those the
    compiler inserted (a target absent from the ``lowered`` program's custom calls, where
    known: a TPU's ``ConcatBitcast``, ``AssumeGatherIndicesInBound``), which are XLA's own,
    costed by it as its fusions are."""
    return tuple(
        _kernel(module, instruction)
        for instruction in module.instructions.values()
        if instruction.opcode == "custom-call"
        and (lowered is None or _target(instruction) in lowered)
    )


def _target(instruction: Instruction) -> str:
    found = _TARGET.search(instruction.attributes)
    return found.group(1) if found else "?"


def flops(found: tuple[Kernel, ...], total: float | None) -> tuple[float | None, float | None]:
    """The program's FLOPs and, where a kernel's cost is unknown, ``(None, total)``: XLA's
    ``total`` counts such a kernel as nothing, so it is only the part known."""
    unknown = any(k.uncosted for k in found)
    return (None, total) if unknown and total is not None else (total, None)


def _kernel(module: HloText, instruction: Instruction) -> Kernel:
    target = _target(instruction)
    config = _backend_config(instruction.attributes)
    call = config.get("custom_call_config") if isinstance(config, dict) else None
    call = call if isinstance(call, dict) else {}
    estimate = call.get("cost_estimate")
    estimate = estimate if isinstance(estimate, dict) else {}
    body = call.get("body")
    name = seam.mosaic_kernel_name(body) if isinstance(body, str) and body else None
    where = module.located(instruction)
    costless = target in COSTLESS
    return Kernel(
        name=name or _op_name_tail(instruction) or target,
        target=target,
        instruction=instruction.name,
        file=where.file,
        line=where.line,
        library_file=where.library_file,
        library_line=where.library_line,
        flops=0.0 if costless else _number(estimate.get("flops")),
        transcendentals=_number(estimate.get("transcendentals")),
        bytes_accessed=_number(estimate.get("bytes_accessed")),
        costless=costless,
        buffers=_buffers(module, instruction),
    )


def _op_name_tail(instruction: Instruction) -> str | None:
    """The last part of the op name (``jit(f)/my_kernel`` → ``my_kernel``), unless it is
    the generic ``pallas_call``."""
    tail = (instruction.op_name or "").rsplit("/", 1)[-1]
    return tail if tail and tail != "pallas_call" else None


def _number(value: Any) -> float | None:
    """A cost estimate's figure (written as a string of digits, or a number)."""
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _backend_config(attributes: str) -> Any:
    """The ``backend_config={...}`` JSON object of an instruction's attributes (``{}``
    where it has none or it is no JSON: a string one, ``backend_config="..."``)."""
    start = attributes.find("backend_config={")
    if start < 0:
        return {}
    at = start + len("backend_config=")
    try:
        value, _ = json.JSONDecoder().raw_decode(attributes, at)
    except ValueError:
        return {}
    return value


def _buffers(module: HloText, instruction: Instruction) -> tuple[KernelBuffer, ...]:
    """Its operands' arrays, then its result's, each with its memory space."""
    found = []
    for operand in instruction.operands:
        value = module.instructions.get(operand)
        found += _arrays("operand", value.shape if value else "")
    return tuple(found + _arrays("result", instruction.shape))


def _arrays(role: Any, shape: str) -> list[KernelBuffer]:
    arrays = []
    for dtype, dims, layout in _ARRAY.findall(shape):
        if dtype == "token":
            continue
        dimensions = tuple(int(d) for d in re.findall(r"\d+", dims))
        space = _SPACE.search(layout or "")
        arrays.append(
            KernelBuffer(
                role,
                f"{dtype}[{','.join(map(str, dimensions))}]",
                int(shard_bytes(dimensions, from_hlo(dtype)) or 0),
                seam.memory_space_name(int(space.group(1)) if space else 0),
            )
        )
    return arrays
