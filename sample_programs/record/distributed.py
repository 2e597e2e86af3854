"""One process of a multi-process JAX run, to record with
`jxinspect record --processes 2 -o runs/procs -- python distributed.py`.

`record --processes N` starts N processes with `JAX_COORDINATOR_ADDRESS` (read by JAX
itself), `JAX_NUM_PROCESSES` and `JAX_PROCESS_ID` set; the program passes the last two to
`jax.distributed.initialize`, as it would pass its launcher's (SLURM's are found by JAX).
Each process has 2 simulated CPU devices. `--diverge` gives process 1 a batch of another
size: its programs differ from the others' (what `jxinspect show` calls JX403).
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@jax.jit
def train_step(params, batch):
    loss = jnp.mean((batch["x"] @ params["w"] - batch["y"]) ** 2)
    return {"w": params["w"] - 0.1 * loss}, loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--diverge", action="store_true", help="process 1: another batch")
    args = parser.parse_args()
    jax.distributed.initialize(
        num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
        process_id=int(os.environ["JAX_PROCESS_ID"]),
        initialization_timeout=120,
    )
    rows = 17 if args.diverge and jax.process_index() == 1 else 16
    params = {"w": jnp.ones((8, 4))}
    batch = {"x": jnp.ones((rows, 8)), "y": jnp.zeros((rows, 4))}
    params, loss = train_step(params, batch)
    print(f"process {jax.process_index()} of {jax.process_count()}: loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
