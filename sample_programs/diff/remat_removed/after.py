"""A remat removed, after: the same MLP without ``jax.checkpoint``, so the backward pass
keeps every block's intermediates: `jxinspect diff-debug before.py after.py --compile`
shows the temporaries per device grown past `memory_growth` (10%) and exits 1, and
`jxinspect lint` against a baseline written before fails with JX305.
"""

import jax
import jax.numpy as jnp


def block(x, w):
    h = x @ w
    return jnp.sin(h) * jnp.cos(h) + jnp.tanh(h) * jnp.exp(-h * h)


def loss(params, x):
    for w in params:
        x = block(x, w)
    return jnp.sum(x**2)


def grads(params, x):
    return jax.grad(loss)(params, x)


JXINSPECT = {
    "grads": {"args": "[f32[256,256], f32[256,256], f32[256,256], f32[256,256]], f32[512,256]"},
}
