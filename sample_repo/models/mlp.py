"""A two-layer perceptron; ``loss``'s example inputs are in jxinspect.yaml."""

import jax
import jax.numpy as jnp


def predict(params, x):
    """Class logits for a batch ``x``."""
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return {"logits": h @ params["w2"] + params["b2"]}


def loss(params, x, labels):
    """Mean softmax cross-entropy."""
    logp = jax.nn.log_softmax(predict(params, x)["logits"])
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


_PARAMS = "{'w1': f32[784,512], 'b1': f32[512], 'w2': f32[512,10], 'b2': f32[10]}"

JXINSPECT = {"predict": {"args": f"{_PARAMS}, f32[32,784]"}}
