"""One process of a multi-process JAX run whose step spans every process's devices, to
guard with `jxinspect record --guard --processes 2 -- python many_hosts.py`.

Each process has 2 simulated CPU devices; the step's batch is one global array over the
4 devices of both (CPU collectives over gloo), so its sum is an all-reduce across the
processes. `--diverge` gives process 1 a batch of another size: unguarded, both processes
wait in that all-reduce forever; guarded, both stop before the step compiles, naming the
difference.
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec  # noqa: E402


def loss_of(w, x):
    return jnp.mean(jnp.tanh(x * w) ** 2)


@jax.jit
def train_step(w, x):
    loss, grad = jax.value_and_grad(loss_of)(w, x)
    return w - 0.1 * grad, loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--diverge", action="store_true", help="process 1: another batch")
    args = parser.parse_args()
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
        process_id=int(os.environ["JAX_PROCESS_ID"]),
        initialization_timeout=120,
    )
    mesh = jax.make_mesh((jax.device_count(),), ("data",))
    rows = 6 if args.diverge and jax.process_index() == 1 else 4
    local = np.ones((rows, 8), np.float32)
    batch = jax.make_array_from_process_local_data(
        NamedSharding(mesh, PartitionSpec("data")), local, (rows * jax.process_count(), 8)
    )
    w = jnp.full((8,), 0.5)
    w, loss = train_step(w, batch)
    print(f"process {jax.process_index()} of {jax.process_count()}: loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
