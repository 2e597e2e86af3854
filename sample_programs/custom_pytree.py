"""Custom pytree node classes as parameters.

``Linear`` is a ``register_dataclass`` dataclass (its fields become
``GetAttrKey`` entries, so paths read ``layer.w``); ``Sequential`` is
registered with ``register_pytree_with_keys`` and supplies its own key path
entries, so leaves read ``model.layers[1].b``.  The spec language cannot
build these classes, so arguments come from ``make_args`` via
``"args_from"``.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp


@functools.partial(  # the explicit fields every JAX release accepts
    jax.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["name"]
)
@dataclasses.dataclass
class Linear:
    w: jax.Array
    b: jax.Array
    # Static metadata: part of the treedef, not a leaf.
    name: str = dataclasses.field(default="linear", metadata={"static": True})


@jax.tree_util.register_pytree_with_keys_class
class Sequential:
    def __init__(self, layers):
        self.layers = list(layers)

    def tree_flatten_with_keys(self):
        # One child, the list itself, keyed as attribute ``layers``; the
        # list then contributes ``[i]`` entries to each leaf's path.
        return [(jax.tree_util.GetAttrKey("layers"), self.layers)], None

    @classmethod
    def tree_unflatten(cls, aux, children):
        (layers,) = children
        return cls(layers)


def apply(layer, x):
    """Affine map ``x @ w + b`` with a ``Linear`` parameter object."""
    return x @ layer.w + layer.b


def apply_seq(model, x):
    """Run a ``Sequential`` stack of ``Linear`` layers with tanh between them."""
    *hidden, last = model.layers
    for layer in hidden:
        x = jnp.tanh(apply(layer, x))
    return apply(last, x)


def make_args():
    """Arguments for ``apply``: ``(args, kwargs)``."""
    layer = Linear(
        w=jax.ShapeDtypeStruct((128, 64), jnp.float32),
        b=jax.ShapeDtypeStruct((64,), jnp.float32),
        name="proj",
    )
    x = jax.ShapeDtypeStruct((16, 128), jnp.float32)
    return (layer, x), {}


def make_seq_args():
    """Arguments for ``apply_seq``: ``(args, kwargs)``."""
    sizes = [(32, 64), (64, 64), (64, 8)]
    model = Sequential(
        Linear(
            w=jax.ShapeDtypeStruct((i, o), jnp.float32),
            b=jax.ShapeDtypeStruct((o,), jnp.float32),
            name=f"fc{n}",
        )
        for n, (i, o) in enumerate(sizes)
    )
    x = jax.ShapeDtypeStruct((4, 32), jnp.float32)
    return (model, x), {}


JXINSPECT = {
    "apply": {"args_from": "make_args"},
    "apply_seq": {"args_from": "make_seq_args"},
}
