"""Compiled programs: the shardings XLA chose, the devices its partitions run on, its cost.

The optimized HLO is read from its text (``Compiled.as_text()``, public in every
release) by :mod:`jxinspect.tracer.read.hlo_text`; no conversion to StableHLO (which
failed on attributes a newer XLA writes: ``replica_group_mesh_axes`` in 0.10's
``all-to-all``).

* **Devices**: partition *p* runs on ``sharding._device_assignment[p]``
  (:func:`partition_assignment`).
* **Cost analysis**: ``Compiled.cost_analysis()`` is a list of one dict per program up
  to 0.4.38, a dict from 0.5.0 on (jaxlib's change; the changelog dates it 0.4.38)
  (:func:`cost_analysis`); ``None`` or an error on a backend without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jxinspect.tracer.seam.meshes import slice_of
from jxinspect.tracer.seam.objects import Compiled, Sharding


def compiled_shardings(compiled: Compiled) -> tuple[list[Sharding | None], list[Sharding | None]]:
    """Flat (input, output) shardings XLA chose, ``None`` where it gave none; none at all
    from the pmap of JAX 0.4.x to 0.7, whose compiled executable keeps no shardings (it
    raises ``NotImplementedError``, or from 0.5 an ``AttributeError``)."""
    import jax

    def flat(attribute: str, structure: str) -> list[Sharding | None]:
        try:
            tree = getattr(compiled, attribute)
        except (NotImplementedError, AttributeError):  # 0.4.x's pmap; 0.5 to 0.7's
            return []
        treedef = getattr(compiled, structure, None)
        if treedef is not None:  # one per flat value: a wrapper's output nodes (NNX's
            try:  # metadata=None) are no values
                return list(treedef.flatten_up_to(tree))
            except (ValueError, TypeError):
                pass
        return list(jax.tree_util.tree_leaves(tree, is_leaf=lambda x: x is None))

    return flat("input_shardings", "in_tree"), flat("output_shardings", "out_tree")


def cost_analysis(compiled: Compiled) -> dict[str, float] | None:
    """XLA's cost analysis of the compiled program (``flops``, ``bytes accessed``, …) as
    one dict, whatever this release returns (a list of one dict up to 0.4.38, a dict from
    0.5.0 on); ``None`` where the backend gives none."""
    try:
        costs = compiled.cost_analysis()
    except Exception:  # a backend without the analysis (NotImplementedError, XlaRuntimeError)
        return None
    if isinstance(costs, (list, tuple)):  # up to 0.4.38: one dict per program
        costs = costs[0] if costs else None
    if not isinstance(costs, dict):
        return None
    return {str(key): float(value) for key, value in costs.items()}


def _assigned(compiled: Compiled) -> list[Any] | None:
    """The devices the compiled program runs on, in partition order: its shardings'
    ``_device_assignment`` (every process's devices), else the executable's
    ``local_devices()`` (one process's); ``None`` where neither says."""
    import jax

    try:
        for tree in (compiled.input_shardings, compiled.output_shardings):
            for sharding in jax.tree_util.tree_leaves(tree):
                assignment = getattr(sharding, "_device_assignment", None)
                if assignment:
                    return list(assignment)
    except (NotImplementedError, AttributeError):  # 0.4.x to 0.7's pmap keeps none
        pass
    try:
        return list(compiled.runtime_executable().local_devices())
    except Exception:  # an executable that cannot say: the ids stand for themselves
        return None


def partition_assignment(compiled: Compiled) -> tuple[list[int], list[int]] | None:
    """The id of the device each partition of the compiled program runs on (of each
    slice's, where it spans several), in partition order, and the slice of each
    (:func:`~jxinspect.tracer.seam.meshes.slice_of`); ``None`` where it cannot say."""
    assigned = _assigned(compiled)
    if assigned is None:
        return None
    return [int(device.id) for device in assigned], [slice_of(device) for device in assigned]


def compiled_platforms(compiled: Compiled) -> set[str] | None:
    """The platforms of the devices the compiled program runs on (``{"tpu"}``); ``None``
    where it cannot say."""
    assigned = _assigned(compiled)
    if assigned is None:
        return None
    return {str(device.platform) for device in assigned}


def memory_analysis(compiled: Compiled) -> Any:
    """``compiled.memory_analysis()`` (XLA's ``CompiledMemoryStats``), read once per
    compile: from 0.6 on it serializes the buffer assignment each time it is called;
    ``None`` on a backend without it."""
    try:
        return compiled.memory_analysis()
    except Exception:  # a backend without the analysis
        return None


def peak_memory_bytes(stats: Any) -> int | None:
    """XLA's own peak of a program whose buffer assignment is not kept (a TPU's:
    ``peak_memory_in_bytes`` of its :func:`memory_analysis` ``stats``, 0.5 on); ``None``
    where the analysis has none. The CPU compiler's leaves temporaries out: read the
    buffer assignment there."""
    value = getattr(stats, "peak_memory_in_bytes", None)
    return int(value) if isinstance(value, int) and value > 0 else None


def assignment_dump_options(folder: str) -> dict[str, Any]:
    """Compile options that make XLA write the optimized module with its buffer assignment
    into ``folder`` (``*after_optimizations.hlo.pb``, an ``HloProto``; no pass's dump): what
    a compiler that keeps no assignment in its executable (a TPU's) still writes, measured
    with libtpu 0.0.42.1 and 0.0.50.1 (tests/tracer/test_topology.py)."""
    return {"xla_dump_to": folder, "xla_dump_hlo_as_proto": True,
            "xla_dump_hlo_as_text": False, "xla_dump_hlo_pass_re": "^$"}  # fmt: skip


def dumped_assignment(folder: str) -> bytes | None:
    """The ``HloProto`` that :func:`assignment_dump_options` made XLA write in ``folder``
    (a folder of jxinspect's own, for one compile); ``None`` where it wrote none."""
    found = sorted(Path(folder).glob("*after_optimizations.hlo.pb"))
    return found[0].read_bytes() if found else None


def buffer_assignment(
    compiled: Compiled, stats: Any, dumped: bytes | None = None
) -> tuple[str, bytes, bytes | None] | None:
    """XLA's buffer assignment of the compiled program, serialized, with the protobuf
    message it is, from its :func:`memory_analysis` ``stats``: ``("BufferAssignment",
    proto, module)`` where they have ``serialized_buffer_assignment_proto`` (0.6 on;
    ``module``: the optimized module's ``HloModuleProto``, which names the instructions
    the assignment gives by id), or ``("HloProto", proto, None)`` where they have
    ``serialized_hlo_proto`` (up to 0.5: module and assignment in one), else the same from
    the compile's ``dumped`` proto (:func:`dumped_assignment`); ``None`` where the backend
    keeps neither and nothing was dumped."""
    if stats is None:
        return None
    assignment = getattr(stats, "serialized_buffer_assignment_proto", None)
    if assignment:
        try:
            module = compiled.runtime_executable().hlo_modules()[0]
            return "BufferAssignment", bytes(assignment), module.as_serialized_hlo_module_proto()
        except Exception:  # an executable that keeps no module
            return None
    whole = getattr(stats, "serialized_hlo_proto", None) or dumped
    return ("HloProto", bytes(whole), None) if whole else None


def partitioner_dump_options(folder: str) -> dict[str, Any]:
    """Compile options that make XLA write Shardy's record of where each sharding came
    from (``sdy.sharding_origins``, ``sdy.propagation_edges``) into ``folder``, and no
    other dump: ``shardy-verbose`` in the dump's pass filter (0.7.1 to 0.12.0.1 write
    ``folder/shardy/module_N.NAME/02.after_propagation.mlir``: tests/tracer/
    test_provenance.py's oracle compiles with the same options on every CI leg from 0.7).
    Options of the compile, not ``XLA_FLAGS``: the user's module may set those itself.
    A compile the persistent cache answers writes nothing (:func:`persistent_cache_off`)."""
    return {"xla_dump_to": folder, "xla_dump_hlo_pass_re": "shardy-verbose",
            "xla_dump_hlo_module_re": "^$"}  # fmt: skip


def after_propagation(folder: str, module_name: str) -> str | None:
    """The module after Shardy's propagation that a compile of ``module_name``
    (``jit_step``) under :func:`partitioner_dump_options` wrote into ``folder`` (the last,
    where the process compiled that module more than once); ``None`` where there is none."""
    import glob
    import os

    found = sorted(glob.glob(os.path.join(glob.escape(folder), "shardy", "module_*")))
    named = [d for d in found if d.split(".", 1)[-1] == module_name]
    for folder_of_module in reversed(named):
        path = os.path.join(folder_of_module, "02.after_propagation.mlir")
        if os.path.isfile(path) and not os.path.islink(path):
            return path
    return None


MEMORY_SPACES = {0: "HBM", 1: "VMEM", 2: "SMEM", 5: "host"}
"""The memory spaces a TPU's layouts name (``{1,0:T(8,128)S(1)}``) and its buffer
assignment colours, by number: 0 the chip's HBM (a CPU's memory: every buffer there is
0), 1 the cores' VMEM, 2 the scalar SMEM, 5 the host's memory (XLA's
``Layout::kHostMemorySpace``). Measured with libtpu 0.0.42.1 (v5e, v4): a Pallas
kernel's output and the compiler's prefetch copies of the arguments in 1, a copy's sync
flags in 2."""


def memory_space_name(number: int) -> str:
    """``VMEM`` for 1 (:data:`MEMORY_SPACES`); ``space N`` for a number not named there."""
    return MEMORY_SPACES.get(number, f"space {number}")


def code_in_device_memory(platform: str | None) -> bool:
    """Whether the device loads the executable's code into the memory its buffers use (a
    TPU: HBM, 111 MB for a 12-layer transformer's step on a v5e; measured on the chip, a
    run with less HBM free fails allocating it); a CPU's code is in the host's memory."""
    return platform == "tpu"


def mosaic_kernel_name(body: str) -> str | None:
    """The kernel's name in a Mosaic custom call's ``body`` (``tpu_custom_call``'s
    ``backend_config``: base64 of the kernel's MLIR bytecode): the function that carries
    ``dimension_semantics`` (a Pallas kernel's, beside its index maps ``transform_N``),
    else the first; ``None`` where the body cannot be read (a jaxlib without the TPU
    dialect, a format it does not know)."""
    import base64

    try:
        from jax._src.lib import tpu
        from jaxlib.mlir import ir

        data = base64.b64decode(body, validate=True)
        with ir.Context() as context, ir.Location.unknown():
            tpu.register_dialect(context)
            context.allow_unregistered_dialects = True
            module = ir.Module.parse(data)
            functions = [op for op in module.body.operations if "sym_name" in op.attributes]
            chosen = [op for op in functions if "dimension_semantics" in op.attributes]
            found = (chosen or functions)[:1]
            return ir.StringAttr(found[0].attributes["sym_name"]).value if found else None
    except Exception:  # no TPU dialect here, a body of another format: unnamed
        return None
