"""A collective added, after: ``v`` became a second projection.

Multiplying by ``v`` needs all of it on every device, so XLA all-gathers ``v`` over
``fsdp`` too: `jxinspect diff-debug before.py after.py --compile` names that all-gather
(kind, axes, bytes per step, the parameter and its line) and exits 1.
"""

import jax.numpy as jnp


def layer(x, w, v):
    return jnp.tanh(x @ w) @ v


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
