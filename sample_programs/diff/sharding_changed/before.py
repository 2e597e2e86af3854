"""A sharding changed, before: a tensor-parallel layer on a data=4, model=2 mesh.

``w`` is split by columns over ``model``, the result over ``data`` and ``model``.
"""

import jax


def layer(x, w):
    return jax.nn.relu(x @ w)


JXINSPECT = {
    "layer": {
        "devices": 8,
        "mesh": "data=4,model=2",
        "args": "f32[64,256], f32[256,512]",
        "in_specs": "P('data', None), P(None, 'model')",
        "out_specs": "P('data', 'model')",
    },
}
