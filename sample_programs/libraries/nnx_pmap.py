"""Data-parallel training with ``@nnx.pmap``, small: the model is broadcast
(``in_axes=None``), the batch split over the devices, the gradients averaged with
``pmean`` and applied in place; the loss comes back once per device. ``make`` builds the
inputs with ``nnx.eval_shape`` for two devices (``--devices 2``)."""

import jax
import jax.numpy as jnp
from flax import nnx

JXINSPECT = {"train_step": {"args_from": "make", "devices": 2}}


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(4, 8, rngs=rngs)
        self.linear2 = nnx.Linear(8, 2, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))


def loss_fn(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


@nnx.pmap(axis_name="devices", in_axes=(None, 0, 0), out_axes=0)
def train_step(model, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    grads = jax.lax.pmean(grads, "devices")
    params = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads))
    return {"loss": loss}


def make():
    model = nnx.eval_shape(lambda: MLP(nnx.Rngs(0)))
    x = jax.ShapeDtypeStruct((2, 16, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((2, 16, 2), jnp.float32)
    return model, x, y
