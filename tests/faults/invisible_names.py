"""Fault corpus: names that print like others. Zero-width, tag and bidirectional
characters in pytree attribute keys (JAX names a leaf by the key as it is), a result key
and the function's name: ``step`` and ``step\\u200b`` must never print the same.
(A dict key is no carrier: JAX names it by its ``repr``, which escapes them.)
"""

import jax
import jax.numpy as jnp
from jax.tree_util import GetAttrKey, register_pytree_with_keys

ZERO_WIDTH = "w\u200b"
"""A zero-width space: prints as ``w``."""
HIDDEN = "b\u2060\ufeff\U000e0041\U000e007f"
"""A word joiner, a byte-order mark and tag characters: print as ``b``."""
TURNED = "\u202ex\u2066y\u200e\u061c"
"""Bidirectional controls."""
KEYS = (ZERO_WIDTH, HIDDEN, TURNED)


class Params:
    """A pytree node whose children JAX names by these attribute keys, as they are."""

    def __init__(self, *leaves):
        self.leaves = leaves


register_pytree_with_keys(
    Params,
    lambda p: (tuple((GetAttrKey(key), leaf) for key, leaf in zip(KEYS, p.leaves)), None),
    lambda _, children: Params(*children),
)


def step(params, x):
    # the bidirectional leaf is unused: pruned from @main, and its finding quotes its path
    w, b, _ = params.leaves
    return Params(x @ w + b, x, x)


step.__name__ = step.__qualname__ = "step\u200b"


def make_args():
    leaf = jax.ShapeDtypeStruct
    return Params(
        leaf((3, 2), jnp.float32), leaf((2,), jnp.float32), leaf((2,), jnp.float32)
    ), leaf((4, 3), jnp.float32)


JXINSPECT = {"step": {"args_from": "make_args"}}


if __name__ == "__main__":  # record's run: the same step, jitted and called
    jax.jit(step)(Params(jnp.ones((3, 2)), jnp.ones(2), jnp.ones(2)), jnp.ones((4, 3)))
