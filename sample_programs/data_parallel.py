"""Data-parallel training step with ``jax.pmap``.

Every argument carries a leading device axis of size 8 (parameters are
replicated, the batch is split).  Gradients are averaged across devices with
``lax.pmean`` over the ``'batch'`` axis.  Under current JAX, pmap stages the
function on flattened arguments, so argument names degrade to
``flat_args[i]`` instead of ``params['w']``.
"""

import jax
import jax.numpy as jnp

LEARNING_RATE = 0.1


def _loss(params, batch):
    pred = batch["x"] @ params["w"] + params["b"]
    return jnp.mean((pred - batch["y"]) ** 2)


def step(params, batch):
    """One SGD step; returns new params and the device-averaged loss."""
    loss, grads = jax.value_and_grad(_loss)(params, batch)
    grads = jax.lax.pmean(grads, "batch")
    loss = jax.lax.pmean(loss, "batch")
    new_params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new_params, loss


JXINSPECT = {
    "step": {
        "stage": "pmap",
        "devices": 8,
        "axis_name": "batch",
        "args": "{'w': f32[8,16,4], 'b': f32[8,4]}, {'x': f32[8,32,16], 'y': f32[8,32,4]}",
    },
}
