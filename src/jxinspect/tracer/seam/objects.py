"""Names for the JAX objects that the seam hands out and takes back without reading them.

Their classes differ between releases (``JaxprDebugInfo`` and ``DebugInfo``, a
``PmapFunction`` and a plain function), and importing them would import JAX, so they are
``Any`` to the type checker; the names say in signatures what each value is. What callers
read is handed out as jxinspect's own values instead (:class:`~.jaxprs.DebugInfo`,
:class:`~.jaxprs.Equation`, :class:`~.locations.Loc`, ``(shape, dtype)`` tuples).
"""

from __future__ import annotations

from typing import Any, TypeAlias

Jaxpr: TypeAlias = Any
"""An open ``jax.extend.core.Jaxpr``: what the readers walk, through :mod:`~.jaxprs`."""
Aval: TypeAlias = Any
"""An abstract value (``ShapedArray``; a token or a reference in some programs)."""
Wrapped: TypeAlias = Any
"""A function wrapped by ``jit``, ``pjit``, ``pmap`` or ``shard_map`` (or a library's
wrapper around them), with ``.lower`` and, on most, ``.trace``."""
Traced: TypeAlias = Any
"""A ``jax.stages.Traced`` (or a library's object that keeps one in ``.traced``)."""
Lowered: TypeAlias = Any
"""A ``jax.stages.Lowered``."""
Compiled: TypeAlias = Any
"""A ``jax.stages.Compiled``."""
Computation: TypeAlias = Any
"""JAX's internal lowering of one computation (``pxla.MeshComputation`` and kin)."""
OutInfo: TypeAlias = Any
"""The pytree of ``ShapeDtypeStruct``s a staged function returns."""

PyTree: TypeAlias = Any
"""Any pytree: a leaf, or a container of pytrees."""
Leaf: TypeAlias = Any
"""One leaf of a pytree (an array, an abstract value, a Python value)."""
TreeDef: TypeAlias = Any
"""A ``jax.tree_util.PyTreeDef``."""
KeyPath: TypeAlias = tuple[Any, ...]
"""The keys from a pytree's root to a leaf (``DictKey``, ``SequenceKey``, …)."""
ShapeDtypeStruct: TypeAlias = Any
"""A ``jax.ShapeDtypeStruct``: an argument that allocates nothing."""

Device: TypeAlias = Any
"""A ``jax.Device``."""
JaxMesh: TypeAlias = Any
"""A ``jax.sharding.Mesh`` or ``AbstractMesh``."""
DeviceIds: TypeAlias = Any
"""A mesh's device ids: a NumPy array of the mesh's shape."""
AxisType: TypeAlias = Any
"""A ``jax.sharding.AxisType`` (``Auto``, ``Explicit``, ``Manual``)."""
Sharding: TypeAlias = Any
"""A ``jax.sharding.Sharding`` (``NamedSharding`` and kin)."""
PartitionSpec: TypeAlias = Any
"""A ``jax.sharding.PartitionSpec``."""
HloSharding: TypeAlias = Any
"""XLA's ``HloSharding``."""

MlirModule: TypeAlias = Any
"""A ``jaxlib.mlir.ir.Module``."""
MlirOperation: TypeAlias = Any
"""An MLIR operation (a ``func.func``, …)."""
MlirBlock: TypeAlias = Any
"""An MLIR block."""
MlirValue: TypeAlias = Any
"""An MLIR value (a block argument, an operation's result)."""
MlirLocation: TypeAlias = Any
"""An MLIR location, as this release's bindings hand it out."""
HloModule: TypeAlias = Any
"""XLA's ``HloModule``."""
