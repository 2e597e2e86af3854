"""Data-parallel training with ``@nnx.shard_map`` called on its own, as flax's docs write
it: the model is replicated (``P()``), the batch split over a two-device mesh, the
gradients averaged with ``pmean`` and applied in place. ``make`` builds the inputs with
``nnx.eval_shape`` (``--devices 2``: the mesh is made when the module is imported)."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P

JXINSPECT = {"train_step": {"args_from": "make", "devices": 2}}

mesh = jax.sharding.Mesh(jax.devices()[:2], ("data",))


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(4, 8, rngs=rngs)
        self.linear2 = nnx.Linear(8, 2, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))


def loss_fn(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


@nnx.shard_map(mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
def train_step(model, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    grads = jax.lax.pmean(grads, "data")
    params = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads))
    return {"loss": jax.lax.pmean(loss, "data")}


def make():
    model = nnx.eval_shape(lambda: MLP(nnx.Rngs(0)))
    x = jax.ShapeDtypeStruct((32, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((32, 2), jnp.float32)
    return model, x, y
