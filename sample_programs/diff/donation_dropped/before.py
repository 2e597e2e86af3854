"""Donation dropped, before: the optimizer state is donated (``donate_argnums=0``), so
XLA reuses its buffers for the new state."""

import jax


def update(state, grads):
    """Plain SGD on every leaf of the state."""
    return jax.tree.map(lambda p, g: p - 0.01 * g, state, grads)


JXINSPECT = {
    "update": {
        "args": "{'w': f32[512,256], 'b': f32[256]}, {'w': f32[512,256], 'b': f32[256]}",
        "donate_argnums": (0,),
    },
}
