"""A sharding changed, after: ``w`` is now split by rows, the result only over ``data``.

Names are untouched; ``diff-debug`` reports two sharding changes, each judged by the
bytes a device holds: ``w``'s the same (neutral), the result's twice as many (an error:
exit 1, unless ``--allow sharding``).
"""

import jax


def layer(x, w):
    return jax.nn.relu(x @ w)


JXINSPECT = {
    "layer": {
        "devices": 8,
        "mesh": "data=4,model=2",
        "args": "f32[64,256], f32[256,512]",
        "in_specs": "P('data', None), P('model', None)",
        "out_specs": "P('data', None)",
    },
}
