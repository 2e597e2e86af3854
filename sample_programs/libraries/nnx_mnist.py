"""The Flax NNX MNIST example's ``train_step``, small: ``@nnx.jit`` over a model, an
``nnx.Optimizer`` and ``nnx.MultiMetric``, updated in place.

``make`` builds the inputs with ``nnx.eval_shape``: nothing is allocated. ``loss_step``
(inputs from ``make_loss``) returns the loss and logits while the batch statistics are
written back into the model.
"""

import inspect

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class CNN(nnx.Module):
    """A small MLP classifier with batch norm (the example's CNN, shrunk)."""

    def __init__(self, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(16, 32, rngs=rngs)
        self.bn = nnx.BatchNorm(32, rngs=rngs)
        self.linear2 = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.bn(self.linear1(x))))


def loss_fn(model, batch):
    logits = model(batch["image"])
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"]).mean()
    return loss, logits


def _optimizer(model):
    """``nnx.Optimizer`` of the installed flax (``wrt`` is required from 0.11 on)."""
    if "wrt" in inspect.signature(nnx.Optimizer.__init__).parameters:
        return nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    return nnx.Optimizer(model, optax.adamw(1e-3))


def _update(optimizer, model, grads):
    if "model" in inspect.signature(optimizer.update).parameters:
        optimizer.update(model, grads)
    else:
        optimizer.update(grads)


@nnx.jit
def train_step(model, optimizer, metrics, batch):
    """Train for a single step."""
    grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)
    (loss, logits), grads = grad_fn(model, batch)
    metrics.update(loss=loss, logits=logits, labels=batch["label"])
    _update(optimizer, model, grads)


@nnx.jit
def loss_step(model, batch):
    """A forward pass in training mode: returns ``{'loss', 'logits'}`` and updates the
    batch norm's running statistics in ``model``."""
    loss, logits = loss_fn(model, batch)
    return {"loss": loss, "logits": logits}


def make():
    model = nnx.eval_shape(lambda: CNN(nnx.Rngs(0)))
    optimizer = nnx.eval_shape(lambda: _optimizer(CNN(nnx.Rngs(0))))
    metrics = nnx.MultiMetric(accuracy=nnx.metrics.Accuracy(), loss=nnx.metrics.Average("loss"))
    batch = {
        "image": jax.ShapeDtypeStruct((8, 16), jnp.float32),
        "label": jax.ShapeDtypeStruct((8,), jnp.int32),
    }
    return model, optimizer, metrics, batch


def make_loss():
    model, _, _, batch = make()
    return model, batch
