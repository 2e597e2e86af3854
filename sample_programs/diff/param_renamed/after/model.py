"""A parameter renamed, after: ``x`` → ``inputs`` and ``y`` → ``labels``.

The renamed arguments are matched to their counterparts by position and type and
reported as *renamed* (neutral), not as removed + added; ``diff-debug`` exits 0.
"""

import jax
import jax.numpy as jnp


def loss(params, inputs, labels):
    """Softmax cross-entropy of a linear model."""
    logits = inputs @ params["w"] + params["b"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


JXINSPECT = {"loss": {"args": "{'w': f32[784,10], 'b': f32[10]}, f32[32,784], i32[32]"}}
