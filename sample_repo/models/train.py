"""A training step on a data=2,model=4 mesh, with one deliberate regression.

The embedding table's in_spec was changed from ``P('model', None)`` to ``P()``: every
device now holds all 31 MiB of it. ``jxinspect lint`` reports JX201, an error under
this repository's jxinspect.yaml.
"""

import jax
import jax.numpy as jnp


def train_step(state, tokens):
    """One SGD step of a tiny language model; returns the new state and the loss."""

    def loss(params):
        h = jnp.tanh(params["embed"][tokens] @ params["w"])
        logits = h @ params["embed"].T
        return jnp.mean(jax.nn.logsumexp(logits, axis=-1))

    value, grads = jax.value_and_grad(loss)(state["params"])
    params = jax.tree.map(lambda p, g: p - 1e-3 * g, state["params"], grads)
    return {"params": params, "step": state["step"] + 1}, value


_STATE = "{'params': {'embed': f32[32000,256], 'w': f32[256,256]}, 'step': i32[]}"
_STATE_SPECS = "{'params': {'embed': P(), 'w': P(None, 'model')}, 'step': P()}"  # <-- regression

JXINSPECT = {
    "train_step": {
        "mesh": "data=2,model=4",
        "args": _STATE + ", i32[16,32]",
        "in_specs": _STATE_SPECS + ", P('data', None)",
        "out_specs": _STATE_SPECS + ", P()",
        "donate_argnums": 0,
    },
}
