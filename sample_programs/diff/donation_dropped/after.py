"""Donation dropped, after: the declaration lost ``donate_argnums``, so the state is
copied, not updated in place (twice the memory). ``diff-debug`` exits 1."""

import jax


def update(state, grads):
    """Plain SGD on every leaf of the state."""
    return jax.tree.map(lambda p, g: p - 0.01 * g, state, grads)


JXINSPECT = {
    "update": {
        "args": "{'w': f32[512,256], 'b': f32[256]}, {'w': f32[512,256], 'b': f32[256]}",
    },
}
