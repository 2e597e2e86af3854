"""Equinox's parallelism example, small: ``eqx.filter_jit(donate="all")`` over an
``eqx.nn.MLP`` and its optax state. ``make`` builds the inputs with
``eqx.filter_eval_shape``."""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

optim = optax.adam(1e-3)


def compute_loss(model, x, y):
    pred_y = jax.vmap(model)(x)
    return jnp.mean((y - pred_y) ** 2)


@eqx.filter_jit(donate="all")
def train_step(model, opt_state, x, y):
    grads = eqx.filter_grad(compute_loss)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state


def make():
    model = eqx.filter_eval_shape(lambda: eqx.nn.MLP(4, 2, 16, 2, key=jax.random.PRNGKey(0)))
    opt_state = eqx.filter_eval_shape(lambda m: optim.init(eqx.filter(m, eqx.is_array)), model)
    x = jax.ShapeDtypeStruct((32, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((32, 2), jnp.float32)
    return model, opt_state, x, y
