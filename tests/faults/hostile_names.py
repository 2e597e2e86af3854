"""Fault corpus: a module whose names are hostile to the formats jxinspect writes.

Pytree keys (custom node attribute names and dict keys), a static argument's repr, a
function's name and an exception message hold newlines, ESC, BEL, NUL, pipes and
markup. Nothing here may reach a terminal, a Markdown table, a workflow command or an
XML file as it is.
"""

import jax
import jax.numpy as jnp
from jax.tree_util import GetAttrKey, register_pytree_with_keys

FORGED = "a\nverdict: improvement"
"""A name that would start a line of its own: a forged verdict."""
COLOURED = "\x1b[31mred\x07bell\x00nul|pipe <script>alert(1)</script> [b]bold[/b]"
"""ESC (colour), BEL, NUL, a table pipe, HTML and rich markup."""


class Box:
    """A pytree node whose children JAX names by these attribute keys, as they are."""

    def __init__(self, first, second):
        self.first, self.second = first, second


register_pytree_with_keys(
    Box,
    lambda box: (((GetAttrKey(FORGED), box.first), (GetAttrKey(COLOURED), box.second)), None),
    lambda _, children: Box(*children),
)


class Mode:
    """A static argument whose repr is hostile."""

    def __repr__(self):
        return "Mode(\x1b[2J\nverdict: improvement)"

    def __hash__(self):
        return 0

    def __eq__(self, other):
        return isinstance(other, Mode)


def make_args():
    leaf = jax.ShapeDtypeStruct((2,), jnp.float32)
    table = {"k\nverdict: improvement": leaf, "\x1b[31mred": leaf}
    return Box(leaf, leaf), table, Mode()


def step(box, table, mode):
    # the box is unused: its leaves are pruned from @main, and the findings quote their paths
    total = table["k\nverdict: improvement"] + table["\x1b[31mred"]
    return Box(total, total * 2)


step.__name__ = "step\n\x1b[31mverdict: improvement"


def fails(x):
    raise ValueError("\x1b[31mboom\x07 |pipe| ::error::forged")


JXINSPECT = {
    "step": {"args_from": "make_args", "static_argnums": 2},
    "fails": {"args": "f32[2]"},
}
