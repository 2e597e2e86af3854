"""Flax Linen with optax under plain ``jax.jit``: parameters are a dict, so the names are
the paths (``state['params']['Dense_0']['kernel']``). ``make`` uses ``jax.eval_shape``."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(2)(nn.relu(nn.Dense(16)(x)))


model = MLP()
tx = optax.adam(1e-3)


@jax.jit
def train_step(params, opt_state, x, y):
    def loss(p):
        return jnp.mean((model.apply(p, x) - y) ** 2)

    grads = jax.grad(loss)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def make():
    x = jax.ShapeDtypeStruct((8, 4), jnp.float32)
    params = jax.eval_shape(lambda: model.init(jax.random.PRNGKey(0), jnp.zeros((8, 4))))
    opt_state = jax.eval_shape(tx.init, params)
    return params, opt_state, x, jax.ShapeDtypeStruct((8, 2), jnp.float32)
