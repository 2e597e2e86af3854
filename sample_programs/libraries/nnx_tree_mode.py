"""Flax 0.12's other wrappers: ``nnx.jit`` and ``nnx.pmap`` in tree mode (``graph=False``:
modules are plain pytrees) and in graph mode without graph updates
(``graph_updates=False``). Their inner function returns the user's result and the
variables it changed (flax's ``Updates``), which the wrapper writes back. Needs flax
0.12.x (the releases with ``graph_updates=``).

``make`` builds the inputs with ``nnx.eval_shape`` (two devices for the pmap targets:
``--devices 2``); ``make_jit`` the inputs of the jit targets.
"""

import jax
import jax.numpy as jnp
from flax import nnx

JXINSPECT = {
    "pmap_graph_step": {"args_from": "make", "devices": 2},
    "pmap_tree_step": {"args_from": "make", "devices": 2},
    "jit_graph_step": {"args_from": "make_jit"},
    "jit_tree_step": {"args_from": "make_jit"},
}


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(4, 8, rngs=rngs)
        self.linear2 = nnx.Linear(8, 2, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))


def loss_fn(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


def _sgd(model, grads):
    params = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads))


def _pmap_step(model, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    _sgd(model, jax.lax.pmean(grads, "devices"))
    return {"loss": loss}


def _jit_step(model, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    _sgd(model, grads)
    return {"loss": loss}


_pmap = {"axis_name": "devices", "in_axes": (None, 0, 0), "out_axes": 0}
pmap_graph_step = nnx.pmap(_pmap_step, **_pmap, graph=True, graph_updates=False)
pmap_tree_step = nnx.pmap(_pmap_step, **_pmap, graph=False)
jit_graph_step = nnx.jit(_jit_step, graph=True, graph_updates=False)
jit_tree_step = nnx.jit(_jit_step, graph=False)


def make():
    model = nnx.eval_shape(lambda: MLP(nnx.Rngs(0)))
    x = jax.ShapeDtypeStruct((2, 16, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((2, 16, 2), jnp.float32)
    return model, x, y


def make_jit():
    model = nnx.eval_shape(lambda: MLP(nnx.Rngs(0)))
    x = jax.ShapeDtypeStruct((16, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((16, 2), jnp.float32)
    return model, x, y
