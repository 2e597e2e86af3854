"""A parameter renamed, before (``before/model.py`` and ``after/model.py`` share a name:
both load side by side in one process)."""

import jax
import jax.numpy as jnp


def loss(params, x, y):
    """Softmax cross-entropy of a linear model."""
    logits = x @ params["w"] + params["b"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=-1))


JXINSPECT = {"loss": {"args": "{'w': f32[784,10], 'b': f32[10]}, f32[32,784], i32[32]"}}
