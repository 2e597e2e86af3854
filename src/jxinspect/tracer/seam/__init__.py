"""The JAX seam: the one package that touches JAX's internals and release differences.

Everything else in jxinspect calls the small typed functions here, as ``seam.f()``.
Nothing outside this package imports ``jax._src``, reads a config option by name, or
relies on a detail of jaxlib's MLIR bindings that changed between releases. JAX is
imported inside functions only, so ``jxinspect --help`` never loads it (importing this
package loads none of JAX). Supported: JAX 0.4.35 to the newest.

One module per concern, each stating the release differences it handles (detected by
feature, not by version number; the releases named are the ones where they were
observed, and 0.4.35, 0.7.2 and 0.10.2 are tested in CI):

* :mod:`~.objects` — names for the JAX objects handed out unread (``Lowered``, …);
* :mod:`~.release` — the version, the configuration, the error for a missing feature;
* :mod:`~.devices` — simulated CPU devices, the backend, the partitioner;
* :mod:`~.meshes` — concrete and abstract meshes, shardings and partition specs;
* :mod:`~.trees` — pytrees and the leaves a program receives;
* :mod:`~.staging` — ``jit``, ``pjit``, ``pmap``, ``shard_map`` and tracing;
* :mod:`~.lowering` — lowering, and what ``Traced``/``Lowered`` record;
* :mod:`~.jaxprs` — debug info, equations, nested jaxprs, abstract values;
* :mod:`~.spelling` — names and result paths in the newer releases' spelling;
* :mod:`~.mlir` and :mod:`~.locations` — modules, entry-block arguments, locations;
* :mod:`~.compiled` — compiled programs and their optimized HLO;
* :mod:`~.hooks` — recording the lowerings of a real run.

The modules import one another only downwards (``release`` at the bottom, ``hooks`` at
the top), so the package has no import cycle.
"""

from __future__ import annotations

from jxinspect.tracer.seam.compiled import (
    compiled_shardings,
    module_from_hlo_text,
    optimized_module,
)
from jxinspect.tracer.seam.devices import (
    backend_started,
    default_backend,
    device_count,
    devices,
    partitioner,
    platforms_setting,
    shardy_default,
    simulate_cpu_devices,
)
from jxinspect.tracer.seam.hooks import Call, Lowering, install_lowering_hook, when_jax_imported
from jxinspect.tracer.seam.jaxprs import (
    DebugInfo,
    Equation,
    SourceLine,
    arity,
    debug_info,
    equations,
    first_user_line,
    in_avals,
    jaxpr_text,
    out_avals,
    pmap_body,
    sub_jaxprs,
)
from jxinspect.tracer.seam.locations import Loc, location_name, read_location
from jxinspect.tracer.seam.lowering import (
    donated_flags,
    kept_inputs,
    lower,
    lowered_text,
    lowering_platform,
    out_info,
    stablehlo_module,
)
from jxinspect.tracer.seam.meshes import (
    MAX_SHARDING_DEVICES,
    abstract_meshes_lower,
    hlo_sharding_text,
    is_abstract_mesh,
    is_mesh,
    make_abstract_mesh,
    make_mesh,
    mesh_axes,
    mesh_device_ids,
    named_sharding,
    parse_hlo_sharding,
    partition_spec,
    sharding_of_leaf,
    use_mesh,
)
from jxinspect.tracer.seam.mlir import (
    block_argument_names,
    block_argument_number,
    ir,
    manual_computation_shardings,
    parse_module,
    printed_argument_names,
    sdy,
    stablehlo,
)
from jxinspect.tracer.seam.objects import (
    Aval,
    AxisType,
    Compiled,
    Computation,
    Device,
    DeviceIds,
    HloModule,
    HloSharding,
    JaxMesh,
    Jaxpr,
    KeyPath,
    Leaf,
    Lowered,
    MlirBlock,
    MlirLocation,
    MlirModule,
    MlirOperation,
    MlirValue,
    OutInfo,
    PartitionSpec,
    PyTree,
    ShapeDtypeStruct,
    Sharding,
    Traced,
    TreeDef,
    Wrapped,
)
from jxinspect.tracer.seam.release import (
    config_values,
    import_jax,
    jax_version,
    restore_config,
    unsupported,
    warm_up,
)
from jxinspect.tracer.seam.spelling import (
    UNNAMED_AXIS,
    mesh_axis_name,
    newer_spelling,
    normalize_result_path,
    prefixes_results,
    result_paths_prefixed,
)
from jxinspect.tracer.seam.staging import (
    inner_traced,
    is_jit_wrapped,
    is_pmap_wrapped,
    jaxpr_of,
    jit,
    make_jaxpr,
    needs_concrete_value,
    pjit,
    pmap,
    pmap_axis_default,
    pmap_global_shapes,
    shard_map,
    shard_map_in_jit,
    wrapper_keywords,
)
from jxinspect.tracer.seam.trees import (
    is_array_leaf,
    is_jax_value,
    keystr,
    shape_dtype_struct,
    stand_in_array,
    tree_flatten,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_unflatten,
)

__all__ = [
    "UNNAMED_AXIS",
    "Aval",
    "AxisType",
    "Call",
    "Compiled",
    "Computation",
    "DebugInfo",
    "Device",
    "DeviceIds",
    "Equation",
    "HloModule",
    "HloSharding",
    "JaxMesh",
    "Jaxpr",
    "KeyPath",
    "Leaf",
    "Loc",
    "Lowered",
    "Lowering",
    "MAX_SHARDING_DEVICES",
    "MlirBlock",
    "MlirLocation",
    "MlirModule",
    "MlirOperation",
    "MlirValue",
    "OutInfo",
    "PartitionSpec",
    "PyTree",
    "ShapeDtypeStruct",
    "Sharding",
    "SourceLine",
    "Traced",
    "TreeDef",
    "Wrapped",
    "abstract_meshes_lower",
    "arity",
    "backend_started",
    "block_argument_names",
    "block_argument_number",
    "compiled_shardings",
    "config_values",
    "debug_info",
    "default_backend",
    "device_count",
    "devices",
    "donated_flags",
    "equations",
    "first_user_line",
    "hlo_sharding_text",
    "import_jax",
    "in_avals",
    "inner_traced",
    "install_lowering_hook",
    "ir",
    "is_abstract_mesh",
    "is_array_leaf",
    "is_jax_value",
    "is_jit_wrapped",
    "is_mesh",
    "is_pmap_wrapped",
    "jax_version",
    "jaxpr_of",
    "jaxpr_text",
    "jit",
    "kept_inputs",
    "keystr",
    "location_name",
    "lower",
    "lowered_text",
    "lowering_platform",
    "make_abstract_mesh",
    "manual_computation_shardings",
    "make_jaxpr",
    "make_mesh",
    "mesh_axes",
    "mesh_device_ids",
    "module_from_hlo_text",
    "named_sharding",
    "mesh_axis_name",
    "needs_concrete_value",
    "newer_spelling",
    "normalize_result_path",
    "optimized_module",
    "out_avals",
    "out_info",
    "parse_hlo_sharding",
    "parse_module",
    "partition_spec",
    "partitioner",
    "pjit",
    "platforms_setting",
    "pmap",
    "pmap_axis_default",
    "pmap_body",
    "pmap_global_shapes",
    "prefixes_results",
    "printed_argument_names",
    "read_location",
    "restore_config",
    "result_paths_prefixed",
    "sdy",
    "shape_dtype_struct",
    "shard_map",
    "shard_map_in_jit",
    "sharding_of_leaf",
    "shardy_default",
    "simulate_cpu_devices",
    "stablehlo",
    "stablehlo_module",
    "stand_in_array",
    "sub_jaxprs",
    "tree_flatten",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_unflatten",
    "unsupported",
    "use_mesh",
    "wrapper_keywords",
    "warm_up",
    "when_jax_imported",
]
