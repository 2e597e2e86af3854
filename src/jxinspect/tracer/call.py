"""The staging API's call, as JAX takes it: its keywords, and the mesh and the inputs laid
out on it.

A target's options and example inputs (plain data from :mod:`jxinspect.project`) become
JAX objects here: the devices are prepared before the user's module is imported, the
mesh is built once (:func:`target_mesh`) and handed down, the declared layouts become
``NamedSharding`` trees (``PartitionSpec`` trees for ``shard_map``) under the keyword the
stage takes them by, and the report says each axis's type of the mesh it was staged over
(:func:`jxinspect.tracer.mesh_facts.with_mesh_facts`, in the one report builder's step).
The user's path of each
input is worked out where the call is split (:func:`jxinspect.tracer.stage.stage_function`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from jxinspect.core.errors import UsageError, UserCodeError
from jxinspect.core.model import Mesh, Topology
from jxinspect.project.options import TargetOptions
from jxinspect.project.plan import api_keywords, role_option
from jxinspect.project.resolve import mesh_axes
from jxinspect.project.spec import parse_flag
from jxinspect.tracer import devices, inputs, seam


def prepare_devices(options: TargetOptions) -> tuple[Mesh | None, list[str]]:
    """The mesh the options ask for, and the devices prepared for it (``--devices``;
    before the backend starts), with what was said doing so. A TPU topology's devices
    are libtpu's (:func:`topology`): none is simulated for its mesh."""
    axes = mesh_axes(options.mesh) if options.mesh else None
    mesh = Mesh(axes, abstract=bool(options.abstract)) if axes else None
    if options.topology is not None or options.slices is not None:
        topology(options)
        unused = options.devices is not None
        return mesh, [f"{options.devices} CPU devices were not simulated: compiled over the "
                      f"devices of {options.topology}"] if unused else []  # fmt: skip
    needed = mesh.size if mesh and not mesh.abstract else None
    return mesh, devices.prepare_devices(options.devices, needed)


def topology(options: TargetOptions) -> seam.TopologyDevices | None:
    """The devices of the TPU topology the options compile for (``--topology``), once
    checked against the options it cannot go with; ``None``: none asked for."""
    name = options.topology
    if name is None:
        if options.slices is not None:
            raise UsageError(f"--slices {options.slices} needs --topology: the TPU topology "
                             "of each slice, e.g. --topology v5e:2x2 --slices 2")  # fmt: skip
        return None
    clash = ("--abstract (lowering without devices)" if options.abstract
             else f"--platform {options.platform}" if options.platform not in (None, "tpu")
             else None)  # fmt: skip
    if clash is not None:
        raise UsageError(
            f"--topology {name} compiles over that TPU topology's devices; {clash} cannot go "
            "with it: leave one out"
        )
    return seam.topology_devices(name, options.slices or 1)


def check_compiled_for(topology: Topology, compiled: Any) -> None:
    """Refuse (:class:`UsageError`) a program compiled for ``topology`` whose executable
    runs on other devices: the inputs were laid out over devices the module made itself
    (simulated CPU devices), and its memory would be the CPU's under a TPU's name."""
    platforms = seam.compiled_platforms(compiled)
    if platforms is None or platforms == {"tpu"}:
        return
    other = ", ".join(sorted(platforms - {"tpu"})) or "other"
    raise UsageError(
        f"--topology {topology.name}: the program was compiled for {other.upper()} devices, "
        "not the topology's (its inputs or its jit are laid out over a mesh the module "
        "made of its own devices): give the mesh with --mesh NAME=SIZE,... and the layouts "
        "in --args or a declaration, which jxinspect lays over the topology's devices"
    )


def placed_on(on: seam.TopologyDevices | None) -> AbstractContextManager[object]:
    """Staging on the topology's first chip what no mesh places (``jax.default_device``)."""
    return seam.placed_on(on.devices[0]) if on is not None else contextlib.nullcontext()


def target_mesh(mesh: Mesh | None, explicit: bool | None, on: seam.TopologyDevices | None) -> Any:
    """The JAX mesh of ``mesh`` (``None``: none asked for; over the topology's devices
    ``on``), built once for the inputs, the staging options and the staging."""
    if mesh is None:
        return None
    chips = on.devices if on is not None else None
    return inputs.build_mesh(mesh, abstract=mesh.abstract, explicit=explicit, devices=chips)


def building_under(jax_mesh: Any) -> AbstractContextManager[object]:
    """The target's mesh made ambient (``jax.set_mesh``) while its inputs are made (an
    ``args_from`` maker runs, a model is built from its annotations), as a real run makes
    them under it: ``nnx.with_partitioning`` lays each variable out on it, and
    ``jax.sharding.get_abstract_mesh()`` returns it."""
    return seam.use_mesh(jax_mesh) if jax_mesh is not None else contextlib.nullcontext()


def abstract_inputs(
    args: tuple[Any, ...], kwargs: dict[str, Any], jax_mesh: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The example inputs as abstract values laid out on ``jax_mesh`` (if any)."""
    args = tuple(inputs.to_abstract(a, jax_mesh) for a in args)
    kwargs = {k: inputs.to_abstract(v, jax_mesh) for k, v in kwargs.items()}
    return args, kwargs


def _single_or_tuple(values: tuple[Any, ...]) -> Any:
    return values[0] if len(values) == 1 else values


def staging_options(options: TargetOptions, jax_mesh: Any) -> dict[str, Any]:
    """The staging API's keyword arguments: the options it takes as written, and the
    declared layouts as JAX objects under the keyword the stage takes them by
    (``PartitionSpec`` trees for shard_map, ``NamedSharding`` trees for jit/pjit)."""
    stage = options.stage_name
    result = api_keywords(options)
    layouts = [
        (option, parse_flag(option.flag, option.parse, value))
        for role in ("in_layout", "out_layout")
        if (option := role_option(stage, role)) and option.parse
        if (value := getattr(options, option.name))
    ]
    if layouts and jax_mesh is None:
        flags = "/".join(option.flag for option, _ in layouts)
        raise UsageError(f"{flags} need a mesh: add --mesh, e.g. --mesh data=8")
    if stage == "shard_map":
        if jax_mesh is None:
            raise UsageError("shard_map needs a mesh: add --mesh, e.g. --mesh data=2,model=4")
        result["mesh"] = jax_mesh
    for option, tree in layouts:
        value = inputs.layout_tree(tree, jax_mesh, option.flag, specs_only=stage == "shard_map")
        single = option.role == "out_layout"
        result[option.keyword_for(stage)] = _single_or_tuple(value) if single else value
    return result


def under_the_mesh(
    options: TargetOptions,
    stage_options: dict[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    jax_mesh: Any,
) -> tuple[tuple[Any, ...], AbstractContextManager[object]]:
    """Staged as a real run over the mesh stages: under it (``jax.set_mesh``) where its
    axes are all ``Explicit``, or where an input is laid out on its abstract mesh (a
    model built under it, which JAX stages only under a concrete mesh); over
    ``Explicit`` axes, the stage's inputs that declare no layout laid out as its input
    specs say (``shard_map`` requires the types to match them)."""
    if jax_mesh is None:
        return args, contextlib.nullcontext()
    if not seam.all_explicit(jax_mesh):
        leaves = seam.tree_leaves((args, kwargs))
        built = not seam.is_abstract_mesh(jax_mesh) and any(map(seam.on_abstract_mesh, leaves))
        return args, seam.use_mesh(jax_mesh) if built else contextlib.nullcontext()
    layout = role_option(options.stage_name, "in_layout")
    given = stage_options.get(layout.keyword_for(options.stage_name)) if layout else None
    if options.stage_name == "shard_map" and given is not None:
        args = inputs.laid_out_as_specs(args, given, jax_mesh)
    return args, seam.use_mesh(jax_mesh)


@contextlib.contextmanager
def auto_axes_said(jax_mesh: Any, explicit: bool | None) -> Iterator[None]:
    """The user's code failing inside says how to stage over ``Auto`` axes where tracing
    failed on JAX's check of an operation's sharding, which it makes only over the
    ``Explicit`` axes of the mesh it was given (``jax.make_mesh``'s from JAX 0.9): a
    program written for ``Auto`` axes fails so under ``--mesh``."""
    try:
        yield
    except UserCodeError as err:
        cause = err.__cause__
        if jax_mesh is None or explicit is False or not seam.all_explicit(jax_mesh):
            raise
        if cause is None or not seam.sharding_type_error(cause):
            raise
        why = "asked for by explicit" if explicit else "as jax.make_mesh makes them from JAX 0.9"
        raise UserCodeError(
            f"{err}; the mesh's axes are Explicit ({why}), over which JAX checks each "
            "operation's sharding as it traces: a program written for Auto axes stages with "
            "--auto (or explicit: false in the configuration)"
        ) from cause


ALREADY_STAGED = "the target is already staged; staging options were not applied"


def warned(caught: list[warnings.WarningMessage]) -> tuple[str, ...]:
    """Each warning staging gave, once, as a note (``JAX warned: …``, its first line)."""
    lines = (str(w.message).strip().splitlines() for w in caught)
    return tuple(dict.fromkeys(f"JAX warned: {line[0]}" for line in lines if line))
