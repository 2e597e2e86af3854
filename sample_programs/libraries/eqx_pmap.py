"""Data-parallel training with ``eqx.filter_pmap``, small: the model is broadcast, the
batch split over the devices, the gradients averaged with ``pmean``; the new model comes
back once (``out_axes=None``), the loss once per device. ``make`` builds the inputs with
``eqx.filter_eval_shape`` for two devices (``--devices 2``)."""

import equinox as eqx
import jax
import jax.numpy as jnp

JXINSPECT = {"train_step": {"args_from": "make", "devices": 2}}


def compute_loss(model, x, y):
    return jnp.mean((y - jax.vmap(model)(x)) ** 2)


@eqx.filter_pmap(axis_name="devices", in_axes=(None, 0, 0), out_axes=(None, 0))
def train_step(model, x, y):
    loss, grads = eqx.filter_value_and_grad(compute_loss)(model, x, y)
    grads = jax.lax.pmean(grads, "devices")
    model = eqx.apply_updates(model, jax.tree_util.tree_map(lambda g: -0.1 * g, grads))
    return model, {"loss": loss}


def make():
    model = eqx.filter_eval_shape(lambda: eqx.nn.MLP(4, 2, 8, 1, key=jax.random.PRNGKey(0)))
    x = jax.ShapeDtypeStruct((2, 16, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((2, 16, 2), jnp.float32)
    return model, x, y
