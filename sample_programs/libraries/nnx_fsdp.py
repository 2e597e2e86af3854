"""Flax's NNX FSDP example (``examples/nnx_toy_examples/10_fsdp_and_optimizer.py``),
small and on one device: an SGD optimizer that holds the model's own ``Param`` objects
(``optimizer.params``), and ``@nnx.jit`` over both. ``nnx.jit`` hands the program each
shared variable once, and the optimizer's updates through ``optimizer.params`` are the
model's.

``make`` builds small real inputs; ``make_same`` passes one array as both ``x`` and ``y``.
"""

import jax
import jax.numpy as jnp
from flax import nnx

_Pytree = getattr(nnx, "Pytree", None) or nnx.Object
_data = getattr(nnx, "data", lambda value: value)


class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, rngs):
        self.w1 = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (din, dmid)))
        self.b1 = nnx.Param(jnp.zeros((dmid,)))
        self.w2 = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (dmid, dout)))

    def __call__(self, x):
        return nnx.relu(x @ self.w1 + self.b1) @ self.w2


class SGDState(nnx.Variable):
    pass


def _is_variable(x):
    return isinstance(x, nnx.Variable)


class SGD(_Pytree):
    """Momentum SGD over the very ``Param`` objects it is given."""

    def __init__(self, params, lr, decay=0.9):
        self.lr = lr
        self.params = _data(params)
        self.momentum = _data(
            jax.tree.map(lambda v: SGDState(jnp.zeros_like(v[...])), params, is_leaf=_is_variable)
        )
        self.decay = decay

    def update(self, grads):
        def update_fn(param, momentum, grad):
            momentum[...] = self.decay * momentum[...] + (1 - self.decay) * grad[...]
            param[...] -= self.lr * momentum[...]

        jax.tree.map(update_fn, self.params, self.momentum, grads, is_leaf=_is_variable)


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((y - model(x)) ** 2)

    loss, grad = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(grad)
    return loss


def make():
    model = MLP(1, 32, 1, rngs=nnx.Rngs(0))
    optimizer = SGD(nnx.state(model, nnx.Param), 0.01)
    return model, optimizer, jnp.ones((32, 1)), jnp.ones((32, 1))


def make_same():
    model, optimizer, x, _ = make()
    return model, optimizer, x, x
