"""An unused argument, and a target that is already ``jax.jit``-wrapped.

``f`` never reads ``unused``; with jit's default ``keep_unused=False`` it is
pruned from the lowered module's inputs (``f_keep`` runs the same function
with ``keep_unused=True`` for comparison).  ``grad_step`` is wrapped at
module level with ``jax.jit(jax.grad(...))``, so the tool must inspect a
pre-wrapped callable rather than a plain Python function.
"""

import jax
import jax.numpy as jnp


def f(x, unused, y):
    """Uses ``x`` and ``y`` only."""
    return jnp.dot(x, y)


f_keep = f


def loss_fn(w, x, y):
    """Least-squares loss of a linear model."""
    return jnp.mean((x @ w - y) ** 2)


grad_step = jax.jit(jax.grad(loss_fn))

JXINSPECT = {
    "f": {"args": "f32[4,8], f32[100], f32[8,2]"},
    "f_keep": {"args": "f32[4,8], f32[100], f32[8,2]", "keep_unused": True},
    "grad_step": {"args": "f32[8,1], f32[32,8], f32[32,1]"},
}
