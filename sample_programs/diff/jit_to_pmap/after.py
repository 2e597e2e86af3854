"""jit → pmap, after: the same step staged with ``jax.pmap`` over 8 devices.

Current JAX builds pmap on shard_map and names the lowered arguments by position:
``params['w']`` degrades to ``flat_args[1]``, and every argument gains a sharding over
the ``batch`` axis. ``jxinspect diff-debug before.py after.py`` exits 1.
"""

import jax.numpy as jnp


def step(params, batch):
    """Per-example squared error of a one-layer elementwise model."""
    pred = jnp.tanh(batch["x"] * params["w"] + params["b"])
    return {"loss": jnp.mean((pred - batch["y"]) ** 2, axis=-1)}


JXINSPECT = {
    "step": {
        "stage": "pmap",
        "devices": 8,
        "axis_name": "batch",
        "args": "{'w': f32[8,16], 'b': f32[8,16]}, {'x': f32[8,16], 'y': f32[8,16]}",
    },
}
