"""A small training script to record: `jxinspect record -o runs/before -- python train.py`.

A data/model-parallel MLP on 8 simulated CPU devices: `train_step` (sharded parameters,
donated), `evaluate` (called with two batch sizes: two signatures), and a loss jitted
anew on every call (the same signature traced again each time).
"""

import argparse
import functools
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return {
        "layers": [
            {"w": jax.random.normal(k, (m, n)) / m**0.5, "b": jnp.zeros(n)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])
        ]
    }


def predict(params, x):
    for layer in params["layers"]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x


def loss_fn(params, batch, scale=1.0):
    return scale * jnp.mean((predict(params, batch["x"]) - batch["y"]) ** 2)


def train_step(params, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return {"params": params, "loss": loss}


@jax.jit
def evaluate(params, x):
    return {"prediction": predict(params, x)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    options = parser.parse_args()

    mesh = jax.make_mesh((4, 2), ("data", "model"))
    params = init(jax.random.PRNGKey(0), [16, 32, 8])
    layer = {"w": NamedSharding(mesh, P(None, "model")), "b": NamedSharding(mesh, P("model"))}
    param_sharding = {"layers": [layer, layer]}
    batch_sharding = NamedSharding(mesh, P("data", None))
    params = jax.device_put(params, param_sharding)
    step_fn = jax.jit(
        train_step,
        in_shardings=(param_sharding, {"x": batch_sharding, "y": batch_sharding}),
        out_shardings={"params": param_sharding, "loss": NamedSharding(mesh, P())},
        donate_argnums=0,
    )

    for step in range(options.steps):
        batch = {"x": jnp.ones((32, 16)), "y": jnp.zeros((32, 8))}
        out = step_fn(params, batch)
        params = out["params"]
        score = jax.jit(functools.partial(loss_fn, scale=1.0))(params, batch)  # traced anew
        print(f"step {step}: loss {float(out['loss']):.4f} ({float(score):.4f})")
    evaluate(params, jnp.ones((4, 16)))
    evaluate(params, jnp.ones((8, 16)))


if __name__ == "__main__":
    main()
