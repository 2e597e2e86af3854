"""Tensor-parallel matmuls with ``jax.shard_map`` on a data=2, model=4 mesh.

The function bodies are per-shard computations.

* ``layer``: column-parallel; ``x`` is split over ``data``, ``w`` over its
  output columns on ``model``; the result stays sharded on both axes and
  no collective is needed.
* ``layer_rs``: row-parallel; the contraction dimension is split over
  ``model`` so each shard holds a partial sum, combined with ``lax.psum``.
"""

import jax


def layer(x, w):
    """Per-shard column-parallel matmul: [B/2, D] @ [D, F/4] -> [B/2, F/4]."""
    return x @ w


def layer_rs(x, w):
    """Per-shard row-parallel matmul, partial sums reduced over ``model``."""
    return jax.lax.psum(x @ w, "model")


JXINSPECT = {
    "layer": {
        "stage": "shard_map",
        "devices": 8,
        "mesh": "data=2,model=4",
        "args": "f32[16,256], f32[256,1024]",
        "in_specs": "P('data', None), P(None, 'model')",
        "out_specs": "P('data', 'model')",
    },
    "layer_rs": {
        "stage": "shard_map",
        "devices": 8,
        "mesh": "data=2,model=4",
        "args": "f32[16,1024], f32[1024,256]",
        "in_specs": "P('data', 'model'), P('model', None)",
        "out_specs": "P('data', None)",
    },
}
