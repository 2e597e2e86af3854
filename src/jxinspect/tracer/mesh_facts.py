"""The JAX mesh a program is staged over, found in its options, arguments or recorded
shardings, and what its report says of it: the mesh itself, each axis's type, and for a
multi-slice topology which axes cross slices. Steps of the one report builder
(:func:`jxinspect.pipeline.report_of`), for a program staged here or lowered by a
recorded run: nothing here reads the project's option table or specs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jxinspect.core.model import Mesh, Report
from jxinspect.tracer import seam


def mesh_of(jax_mesh: Any) -> Mesh:
    """A JAX ``Mesh`` or ``AbstractMesh`` as :class:`~jxinspect.core.model.Mesh`."""
    return Mesh(seam.mesh_axes(jax_mesh), abstract=seam.is_abstract_mesh(jax_mesh))


def find_jax_mesh(*trees: Any, built_over: Any = None) -> Any:
    """The mesh of the first ``NamedSharding`` (or mesh) found in options or arguments;
    for an ``AbstractMesh`` whose axes are those of the concrete mesh the inputs were
    ``built_over`` (a model built under it by ``nnx.eval_shape``), that mesh, which the
    program is staged over."""
    for tree in trees:
        for leaf in seam.tree_leaves(tree, none_is_leaf=True):
            found = leaf if seam.is_mesh(leaf) else (seam.sharding_of_leaf(leaf) or (0, None))[1]
            if found is None:
                continue
            if (
                seam.is_abstract_mesh(found)
                and built_over is not None
                and not seam.is_abstract_mesh(built_over)
                and seam.mesh_axes(found) == seam.mesh_axes(built_over)
            ):
                return built_over
            return found
    return None


def with_mesh_facts(report: Report, *jax_meshes: Any) -> Report:
    """``report`` saying each axis's type of the JAX mesh it was staged over (the first of
    ``jax_meshes`` that has types for as many axes as the report's mesh), and for a
    multi-slice topology which axes cross slices."""
    mesh = report.mesh
    if mesh is None:
        return report
    staged_over = [m for m in jax_meshes if m is not None]
    topology = report.topology
    if topology is not None and topology.slices > 1 and staged_over:
        across = seam.axes_across_slices(staged_over[0])
        report = replace(report, topology=replace(topology, across_slices=across))
    for jax_mesh in staged_over if report.axis_types is None else ():
        types = seam.axis_type_names(jax_mesh)
        if types is not None and len(types) == len(mesh.axes):
            return replace(report, axis_types=types)
    return report
