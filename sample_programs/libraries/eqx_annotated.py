"""An Equinox model annotated with jaxtyping on every argument and every Module field:
staged with no example inputs, only the sizes of its dimensions.

    jxinspect lower sample_programs/libraries/eqx_annotated.py:loss \\
        --dims batch=8,seq=16,vocab=100,width=32,classes=10

The model is built from the field annotations (``object.__new__`` and every field set,
as Equinox's own unflattening does), so ``Model.__init__``, which takes sizes and a key,
never runs; ``scale`` is a static field and takes its default.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, Key


class Block(eqx.Module):
    weight: Float[Array, "width width"]
    bias: Float[Array, " width"]
    scale: float = eqx.field(static=True, default=0.5)

    def __init__(self, width: int, key: Key[Array, ""]) -> None:
        self.weight = jax.random.normal(key, (width, width)) / width
        self.bias = jnp.zeros(width)

    def __call__(self, x: Float[Array, "seq width"]) -> Float[Array, "seq width"]:
        return jax.nn.relu(x @ self.weight + self.bias) * self.scale


class Model(eqx.Module):
    embed: Float[Array, "vocab width"]
    blocks: tuple[Block, Block]
    head: Float[Array, "width classes"]

    def __init__(self, vocab: int, width: int, classes: int, key: Key[Array, ""]) -> None:
        keys = jax.random.split(key, 4)
        self.embed = jax.random.normal(keys[0], (vocab, width))
        self.blocks = (Block(width, keys[1]), Block(width, keys[2]))
        self.head = jax.random.normal(keys[3], (width, classes)) / width


def loss(
    model: Model,
    tokens: Int[Array, "batch seq"],
    labels: Int[Array, " batch"],
    key: Key[Array, ""],
) -> Float[Array, ""]:
    x = model.embed[tokens]
    for block in model.blocks:
        x = jax.vmap(block)(x)
    logits = x.mean(axis=1) @ model.head
    logits = logits + 0.01 * jax.random.normal(key, logits.shape)
    picked = jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1)
    return -jnp.mean(picked)
