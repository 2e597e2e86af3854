"""``jax.jit`` with explicit in/out shardings and buffer donation.

``update`` applies SGD with momentum to a training state on a data=4,
model=2 mesh.  The state is donated (``donate_argnums=(0,)``), so its
buffers can be reused for the output, and every leaf carries a sharding.
``normalize`` shows the ``@axis`` shorthand: the argument sharding is
written into the spec (``f32[8@data,128]``) rather than as ``in_specs``.
"""

import jax
import jax.numpy as jnp

LEARNING_RATE = 1e-3
MOMENTUM = 0.9


def update(state, grads):
    """SGD with momentum; returns the new state and the gradient norm."""
    momentum = jax.tree.map(lambda m, g: MOMENTUM * m + g, state["momentum"], grads)
    params = jax.tree.map(lambda p, m: p - LEARNING_RATE * m, state["params"], momentum)
    gnorm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    return {"params": params, "momentum": momentum, "step": state["step"] + 1}, gnorm


def normalize(x):
    """Row-wise layer normalisation (no learned scale)."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-6)


_STATE = (
    "{'params': {'w': f32[512,256], 'b': f32[256]}, "
    "'momentum': {'w': f32[512,256], 'b': f32[256]}, "
    "'step': i32[]}"
)
_GRADS = "{'w': f32[512,256], 'b': f32[256]}"

# One spec per positional argument; a PartitionSpec is a pytree prefix, so
# the 'w'/'b' dicts get per-leaf specs and 'step' is replicated.
_STATE_SPECS = (
    "{'params': {'w': P('data', 'model'), 'b': P('model')}, "
    "'momentum': {'w': P('data', 'model'), 'b': P('model')}, "
    "'step': P()}"
)
_GRADS_SPECS = "{'w': P('data', 'model'), 'b': P('model')}"

JXINSPECT = {
    "update": {
        "stage": "jit",
        "devices": 8,
        "mesh": "data=4,model=2",
        "args": _STATE + ", " + _GRADS,
        "in_specs": _STATE_SPECS + ", " + _GRADS_SPECS,
        "out_specs": _STATE_SPECS + ", P()",
        "donate_argnums": (0,),
    },
    "normalize": {
        "stage": "jit",
        "devices": 8,
        "mesh": "data=4,model=2",
        "args": "f32[8@data,128]",
        "out_specs": "P('data', None)",
    },
}
