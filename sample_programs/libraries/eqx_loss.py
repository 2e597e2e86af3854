"""A plain ``loss(model, x)`` over an ``eqx.nn.MLP``, not decorated: the MLP's
activations are leaves, so jxinspect stages it as ``eqx.filter_jit`` does (arrays traced,
the rest static) and keeps every weight's path."""

import equinox as eqx
import jax
import jax.numpy as jnp


def loss(model, x):
    return jnp.mean(jax.vmap(model)(x) ** 2)


def make():
    model = eqx.filter_eval_shape(lambda: eqx.nn.MLP(4, 2, 16, 2, key=jax.random.PRNGKey(0)))
    return model, jax.ShapeDtypeStruct((32, 4), jnp.float32)
