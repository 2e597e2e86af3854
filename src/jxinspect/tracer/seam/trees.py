"""Pytrees and the leaves a program receives (arrays, abstract values, stand-ins)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from jxinspect.tracer.seam.objects import KeyPath, Leaf, PyTree, ShapeDtypeStruct, Sharding, TreeDef


def tree_leaves(tree: PyTree, none_is_leaf: bool = False) -> list[Leaf]:
    import jax

    if none_is_leaf:
        return list(jax.tree_util.tree_leaves(tree, is_leaf=lambda x: x is None))
    return list(jax.tree_util.tree_leaves(tree))


def holds_cycle(tree: PyTree) -> bool:
    """Whether a pytree holds a node inside itself (an NNX module whose attribute is the
    module, ``m.ref = m``). JAX's own flattening of such a tree recurses until Python's
    limit and leaves the thread's recursion budget spent (jaxlib 0.10: every later deep
    call of the run raises ``RecursionError``), so this walks it one level at a time,
    each node flattened with its children as leaves, never deeper than one call."""
    import jax

    flatten = jax.tree_util.tree_flatten
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        if id(node) in done:
            continue
        first = [True]

        def children_only(x: Any, first: list[bool] = first) -> bool:
            if first[0]:  # the node itself (asked first) is flattened, what it holds not
                first[0] = False
                return False
            return True

        children, treedef = flatten(node, is_leaf=children_only)
        if treedef.num_nodes == 1:  # a leaf, or a node that holds nothing
            continue
        if id(node) in on_path:
            return True
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children)
    return False


def tree_leaves_with_path(
    tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[KeyPath, Leaf]]:
    import jax

    return list(jax.tree_util.tree_flatten_with_path(tree, is_leaf=is_leaf)[0])


def tree_map(
    fun: Callable[[Leaf], Any], tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
) -> PyTree:
    import jax

    return jax.tree_util.tree_map(fun, tree, is_leaf=is_leaf)


def map_over_prefix(
    fun: Callable[[Any, PyTree], Any], prefix: PyTree, tree: PyTree,
    is_leaf: Callable[[Any], bool],
) -> PyTree:  # fmt: skip
    """``fun(prefix_leaf, subtree)`` for each leaf of ``prefix`` (a prefix of ``tree``);
    ``ValueError`` where it is not one."""
    import jax

    return jax.tree_util.tree_map(fun, prefix, tree, is_leaf=is_leaf)


def keystr(path: KeyPath) -> str:
    """``['w'][0].b``; a flat-index key (a node without key paths) prints as ``[i]``."""
    import jax

    parts = []
    for key in path:
        if isinstance(key, jax.tree_util.FlattenedIndexKey):
            parts.append(f"[{key.key}]")
        else:
            parts.append(jax.tree_util.keystr((key,)))
    return "".join(parts)


def shape_dtype_struct(
    shape: tuple[int, ...], dtype: str, sharding: Sharding | None = None
) -> ShapeDtypeStruct:
    import jax
    import jax.numpy as jnp

    if sharding is None:
        return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype), sharding=sharding)


def laid_out(leaf: Leaf, sharding: Sharding) -> Leaf:
    """A ``ShapeDtypeStruct`` that declares no layout, laid out by ``sharding``; any
    other leaf as it is."""
    import jax

    if not isinstance(leaf, jax.ShapeDtypeStruct) or leaf.sharding is not None:
        return leaf
    return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding)


def prng_key_struct(shape: tuple[int, ...], sharding: Sharding | None = None) -> ShapeDtypeStruct:
    """An abstract array of typed PRNG keys of the default implementation, as
    ``jax.random.key`` makes them (``key<fry>``); nothing is allocated."""
    import jax

    dtype = jax.eval_shape(lambda: jax.random.key(0)).dtype
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)


def traced_values(tree: Any) -> Any:
    """``tree`` with each ``ShapeDtypeStruct`` a value of its shape and dtype, for code
    traced abstractly (under ``eval_shape``: zeros there allocate nothing), and the
    PRNG key ``jax.random.key(0)`` for each key one."""
    import jax
    import jax.numpy as jnp

    def value(leaf: Any) -> Any:
        if not isinstance(leaf, jax.ShapeDtypeStruct):
            return leaf
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            keys = jax.random.split(jax.random.key(0), max(1, math.prod(leaf.shape)))
            return keys.reshape(leaf.shape)
        return jnp.zeros(leaf.shape, leaf.dtype)

    return jax.tree_util.tree_map(value, tree)


def eval_shape(fun: Callable[..., Any], *args: Any) -> Any:
    """``jax.eval_shape(fun, *args)``: what ``fun`` returns, abstractly (nothing
    allocated)."""
    import jax

    return jax.eval_shape(fun, *args)


def random_key() -> Any:
    """``jax.random.key(0)``: a model constructor's key, drawn under ``eval_shape``."""
    import jax

    return jax.random.key(0)


def staged_dtype(value: Leaf) -> str:
    """The dtype JAX stages an array value as: NumPy's 64-bit types become 32-bit ones
    unless ``jax_enable_x64`` is on (``np.ones(5)`` is lowered as ``f32[5]``); an
    extended dtype (a PRNG key's ``key<fry>``) is its own."""
    import jax

    if jax.dtypes.issubdtype(value.dtype, jax.dtypes.extended):
        return str(value.dtype)
    return str(jax.dtypes.canonicalize_dtype(value.dtype))


def is_array_leaf(leaf: Leaf) -> bool:
    """An array the program receives: a JAX or NumPy array, a NumPy scalar, or a
    ``ShapeDtypeStruct`` standing for one (what ``eqx.is_array`` accepts, plus the
    abstract values jxinspect builds)."""
    import jax
    import numpy as np

    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct))


def is_jax_value(leaf: Leaf) -> bool:
    """A leaf plain ``jax.jit`` accepts: an array (:func:`is_array_leaf`), a Python number,
    or an object that converts itself (``__jax_array__``)."""
    return (
        is_array_leaf(leaf)
        or isinstance(leaf, (bool, int, float, complex))
        or hasattr(leaf, "__jax_array__")
    )


def stand_in_array(leaf: Leaf) -> Leaf:
    """A NumPy array of a ``ShapeDtypeStruct``'s shape and dtype that allocates nothing
    (one zero, broadcast with zero strides): for wrappers that stage only real arrays
    (``eqx.filter_jit`` treats any other leaf as static). Other leaves are returned as
    they are."""
    import jax
    import numpy as np

    if not isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf
    return np.broadcast_to(np.zeros((), dtype=leaf.dtype), tuple(leaf.shape))


def tree_flatten(tree: PyTree) -> tuple[list[Leaf], TreeDef]:
    import jax

    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return list(leaves), treedef


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Leaf]) -> PyTree:
    import jax

    return jax.tree_util.tree_unflatten(treedef, list(leaves))


def is_pytree_node(value: Any) -> bool:
    """Whether JAX takes ``value`` apart (a registered node), rather than a leaf."""
    import jax

    return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(value))
