"""Static arguments: one by position, one by name.

``n`` (how many times to apply the block) is static by position and
``activation`` is static by name, so neither appears as an input of the
lowered module; changing either would trigger a retrace.
"""

import jax
import jax.numpy as jnp

_ACTIVATIONS = {
    "relu": jax.nn.relu,
    "gelu": jax.nn.gelu,
    "tanh": jnp.tanh,
}


def f(x, n, activation="relu"):
    """Apply a normalise-then-activate block ``n`` times (unrolled)."""
    act = _ACTIVATIONS[activation]
    for _ in range(n):
        x = act(x - jnp.mean(x, axis=-1, keepdims=True))
    return x


JXINSPECT = {
    "f": {
        "args": "f32[8,128], 3",
        "kwargs": "activation='gelu'",
        "static_argnums": (1,),
        "static_argnames": ("activation",),
    },
}
