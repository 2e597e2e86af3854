"""A static argument moved, after: ``n`` is keyword-only and static by name.

The diff shows ``n`` moving from position 1 to a keyword, and nothing else: ``x`` keeps
its name. Neutral, so ``diff-debug`` exits 0.
"""

import jax.numpy as jnp


def smooth(x, *, n):
    """Apply ``tanh`` ``n`` times (unrolled)."""
    for _ in range(n):
        x = jnp.tanh(x)
    return x


JXINSPECT = {"smooth": {"args": "f32[8,128]", "kwargs": "n=3", "static_argnames": ("n",)}}
