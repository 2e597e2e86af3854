"""A collective added, before: an FSDP layer on an fsdp=8 mesh.

``w`` is stored split over ``fsdp`` and all-gathered for the matmul; ``v`` is added to
the result where it lies (its rows split as the result's are): no collective moves it.
"""

import jax.numpy as jnp


def layer(x, w, v):
    return jnp.tanh(x @ w) + v


JXINSPECT = {
    "layer": {
        "devices": 8,
        "explicit": False,  # Auto axes: XLA propagates the layouts
        "mesh": "fsdp=8",
        "args": "f32[256,256], f32[256,256], f32[256,256]",
        "in_specs": "P('fsdp', None), P('fsdp', None), P('fsdp', None)",
        "out_specs": "P('fsdp', None)",
    },
}
