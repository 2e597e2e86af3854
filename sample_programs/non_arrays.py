"""Pytrees with leaves that are not arrays, a side-effect-only function, and a ``pmap`` of a
``functools.partial`` (no model library needed).

``loss`` receives a model whose activation is a leaf (as in every ``eqx.nn.MLP``): plain
``jax.jit`` refuses a function leaf, so jxinspect stages it as ``eqx.filter_jit`` does
(arrays traced, the rest static) and says so in a note. ``accumulate`` updates its
buffers in place and returns nothing: under ``jit`` every argument is pruned and the
program has no results (JX112), which is what happens to a Flax NNX step under plain
``jax.jit``. ``train`` is ``jax.pmap(partial(step, 0.1), out_axes=(None, 0))``: the
header names ``step``, not ``<unknown>``.
"""

from functools import partial

import jax
import jax.numpy as jnp


def make_model():
    """A two-layer model whose activations are leaves of the pytree."""
    model = {
        "layers": [
            {"w": jax.ShapeDtypeStruct((3, 8), jnp.float32), "act": jnp.tanh},
            {"w": jax.ShapeDtypeStruct((8, 2), jnp.float32), "act": jax.nn.relu},
        ],
        "name": "mlp",
    }
    return model, jax.ShapeDtypeStruct((16, 3), jnp.float32)


def loss(model, x):
    """Mean square of the model's output."""
    for layer in model["layers"]:
        x = layer["act"](x @ layer["w"])
    return jnp.mean(x**2)


def accumulate(buffers, x):
    """Adds ``x`` to the running sum in place; returns nothing."""
    buffers["sum"] = buffers["sum"] + x


def step(lr, params, x):
    """One data-parallel step: the mean gradient over the 'batch' axis."""
    grad = jax.lax.pmean(jnp.sum(params * x, axis=0), "batch")
    return params - lr * grad, jnp.mean(x)


train = jax.pmap(partial(step, 0.1), axis_name="batch", in_axes=(None, 0), out_axes=(None, 0))

JXINSPECT = {
    "loss": {"args_from": "make_model"},
    "accumulate": {"args": "{'sum': f32[4]}, f32[4]"},
    "train": {"args": "f32[3], f32[2,4,3]", "devices": 2},
}
