"""jit → pmap, before: the step staged with ``jax.jit``.

Every argument carries its parameter name (``params['w']``, ``batch['x']``) and no
sharding is declared. ``after.py`` stages the same code with ``jax.pmap``.
"""

import jax.numpy as jnp


def step(params, batch):
    """Per-example squared error of a one-layer elementwise model."""
    pred = jnp.tanh(batch["x"] * params["w"] + params["b"])
    return {"loss": jnp.mean((pred - batch["y"]) ** 2, axis=-1)}


JXINSPECT = {
    "step": {
        "stage": "jit",
        "args": "{'w': f32[8,16], 'b': f32[8,16]}, {'x': f32[8,16], 'y': f32[8,16]}",
    },
}
