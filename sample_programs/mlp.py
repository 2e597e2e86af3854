"""A small multi-layer perceptron with nested parameters.

Demonstrates parameter paths through a nested pytree (a dict holding a list
of dicts), so argument names look like ``params['layers'][0]['w']``, and a
dict-valued result so result paths look like ``result['logits']``.
``loss`` shows a scalar result and an integer label argument.
"""

import jax
import jax.numpy as jnp


def predict(params, x):
    """Return logits and class probabilities for a batch ``x``."""
    h = x
    *hidden, last = params["layers"]
    for layer in hidden:
        h = jax.nn.relu(h @ layer["w"] + layer["b"])
    logits = h @ last["w"] + last["b"]
    return {"logits": logits, "probs": jax.nn.softmax(logits, axis=-1)}


def loss(params, x, y):
    """Mean softmax cross-entropy against integer labels ``y``."""
    logits = predict(params, x)["logits"]
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, y[:, None], axis=-1)[:, 0]
    return jnp.mean(nll)


_PARAMS = (
    "{'layers': ["
    "{'w': f32[784,512], 'b': f32[512]}, "
    "{'w': f32[512,256], 'b': f32[256]}, "
    "{'w': f32[256,10], 'b': f32[10]}"
    "]}"
)

JXINSPECT = {
    "predict": {"args": _PARAMS + ", f32[32,784]"},
    "loss": {"args": _PARAMS + ", f32[32,784], i32[32]"},
}
