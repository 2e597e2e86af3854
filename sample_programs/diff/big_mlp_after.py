"""The 256-layer MLP of ``sample_programs/big_mlp.py``, one small change later: the
result is a dict (``result`` → ``result['out']``), for ``bench/diff.py``.

``params`` is a list of 256 ``{'w', 'b'}`` dicts (512 argument leaves), built
by ``make_args`` as ShapeDtypeStructs.  Useful for checking that parameter
naming and reporting scale to large argument lists.
"""

import jax
import jax.numpy as jnp

DEPTH = 256
WIDTH = 64
BATCH = 8


def forward(params, x):
    """Residual tanh MLP, unrolled over all layers."""
    for layer in params:
        x = x + jnp.tanh(x @ layer["w"] + layer["b"])
    return {"out": x}


def make_args():
    """Arguments for ``forward``: ``(args, kwargs)``."""
    params = [
        {
            "w": jax.ShapeDtypeStruct((WIDTH, WIDTH), jnp.float32),
            "b": jax.ShapeDtypeStruct((WIDTH,), jnp.float32),
        }
        for _ in range(DEPTH)
    ]
    x = jax.ShapeDtypeStruct((BATCH, WIDTH), jnp.float32)
    return (params, x), {}


JXINSPECT = {
    "forward": {"args_from": "make_args"},
}
