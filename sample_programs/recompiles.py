"""A training loop that compiles more than it should: the last batch is smaller (8 rows
of 1000, in batches of 32), and a jit is made per call. Run it under
`jxinspect record --max-compiles 1 -o runs -- python sample_programs/recompiles.py`."""

import jax
import jax.numpy as jnp


@jax.jit
def step(params, batch):
    return params - 0.1 * (batch["x"].mean(axis=0) - params)


params = jnp.zeros(128)
data = jnp.ones((1000, 128))
for start in range(0, 1000, 32):  # the last batch has 8 rows
    params = step(params, {"x": data[start : start + 32]})
for lr in (0.1, 0.01):
    params = jax.jit(lambda p: p * lr)(params)  # a jit made per call
