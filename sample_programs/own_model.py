"""A program of one's own, for the guide docs/your-own-model.md: a Flax NNX feed-forward
block whose weights are sharded with ``nnx.with_partitioning`` over a ``data`` × ``model``
mesh of 8 simulated CPU devices, trained with optax's AdamW under ``@nnx.jit``.

``make`` builds what ``train_step`` takes (``jxinspect lower --args-from``); run as a
script, it trains a few steps (``jxinspect record -- python ...``).
"""

import argparse
import inspect
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

WIDTH, HIDDEN, BATCH = 256, 1024, 64


class FeedForward(nnx.Module):
    """A transformer's feed-forward block: its hidden units split over ``model``."""

    def __init__(self, rngs: nnx.Rngs) -> None:
        init = nnx.initializers.lecun_normal()
        self.norm = nnx.LayerNorm(WIDTH, rngs=rngs)
        self.up = nnx.Linear(
            WIDTH, HIDDEN, kernel_init=nnx.with_partitioning(init, (None, "model")), rngs=rngs
        )
        self.down = nnx.Linear(
            HIDDEN, WIDTH, kernel_init=nnx.with_partitioning(init, ("model", None)), rngs=rngs
        )

    def __call__(self, x: jax.Array) -> jax.Array:
        hidden = nnx.gelu(self.up(self.norm(x)))
        return x + self.down(hidden)


def _optimizer(model: FeedForward) -> nnx.Optimizer:
    """AdamW over the model's parameters (``wrt`` is required from flax 0.11 on)."""
    if "wrt" in inspect.signature(nnx.Optimizer.__init__).parameters:
        return nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    return nnx.Optimizer(model, optax.adamw(1e-3))


def _update(optimizer: nnx.Optimizer, model: FeedForward, grads: nnx.State) -> None:
    """``optimizer.update`` (it takes the model too from flax 0.11 on)."""
    if "model" in inspect.signature(optimizer.update).parameters:
        optimizer.update(model, grads)
    else:
        optimizer.update(grads)


@nnx.jit
def train_step(
    model: FeedForward, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array
) -> jax.Array:
    def loss_fn(model: FeedForward) -> jax.Array:
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    _update(optimizer, model, grads)
    return loss


def _using(mesh: jax.sharding.Mesh):
    """``mesh`` made ambient (``jax.set_mesh``; ``with mesh:`` on older JAX)."""
    return jax.set_mesh(mesh) if hasattr(jax, "set_mesh") else mesh


def _sharded(tree, mesh: jax.sharding.Mesh):
    """``tree`` with each array placed as its ``with_partitioning`` names (flax before
    0.11 leaves them on one device)."""
    state = nnx.state(tree)
    nnx.update(tree, jax.device_put(state, nnx.get_named_sharding(state, mesh)))
    return tree


def make() -> tuple[FeedForward, nnx.Optimizer, jax.Array, jax.Array]:
    """The model, its optimizer and a batch, laid out over a ``data=2, model=4`` mesh."""
    auto = getattr(jax.sharding, "AxisType", None)  # Auto axes: XLA places the sums
    kinds = {"axis_types": (auto.Auto, auto.Auto)} if auto else {}
    mesh = jax.make_mesh((2, 4), ("data", "model"), **kinds)
    with _using(mesh):  # recent flax lays each variable out on it as it is made
        model = _sharded(FeedForward(nnx.Rngs(0)), mesh)
        optimizer = _sharded(_optimizer(model), mesh)
    batch = NamedSharding(mesh, P("data", None))
    x = jax.device_put(jax.random.normal(jax.random.key(1), (BATCH, WIDTH)), batch)
    return model, optimizer, x, jax.device_put(jnp.sin(x), batch)


def make_abstract() -> tuple[FeedForward, nnx.Optimizer, jax.ShapeDtypeStruct, ...]:
    """The same, abstract (nothing allocated), over the mesh jxinspect makes ambient
    (``--mesh``, with ``--topology`` a TPU's): recent flax lays each variable out on it."""
    model = nnx.eval_shape(lambda: FeedForward(nnx.Rngs(0)))
    optimizer = nnx.eval_shape(lambda: _optimizer(FeedForward(nnx.Rngs(0))))
    batch = NamedSharding(jax.sharding.get_abstract_mesh(), P("data", None))
    x = jax.ShapeDtypeStruct((BATCH, WIDTH), jnp.float32, sharding=batch)
    return model, optimizer, x, x


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    steps = parser.parse_args().steps
    model, optimizer, x, y = make()
    for step in range(steps):
        print(f"step {step}: loss {float(train_step(model, optimizer, x, y)):.4f}")


if __name__ == "__main__":
    main()
