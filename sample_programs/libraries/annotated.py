"""Functions whose jaxtyping annotations say every input's shape: staged with no example
inputs, only the sizes of their dimensions (the README's zero-config examples).

    jxinspect lower sample_programs/libraries/annotated.py:attention \\
        --dims batch=8,seq=128,heads=4,dim=32
    jxinspect lower sample_programs/libraries/annotated.py:train_step \\
        --dims din=784,dout=10,batch=32 --dtype bf16

``train_step``'s state is a NamedTuple of NamedTuples, built as its fields say; its
``schedule`` is static (the function's own ``jax.jit``) and takes the first value of its
``Literal``.
"""

from __future__ import annotations

from functools import partial
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int


def attention(
    q: Float[Array, "batch seq heads dim"],
    k: Float[Array, "batch seq heads dim"],
    mask: Bool[Array, "batch seq seq"],
) -> Float[Array, "batch seq heads dim"]:
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k)
    scores = jnp.where(mask[:, None], scores, -1e9)
    return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores), k)


class Params(NamedTuple):
    w: Float[Array, "din dout"]
    b: Float[Array, " dout"]


class AdamState(NamedTuple):
    count: Int[Array, ""]
    mu: Params
    nu: Params


class TrainState(NamedTuple):
    params: Params
    opt: AdamState


def _loss(params: Params, x: Float[Array, "batch din"], y: Float[Array, "batch dout"]):
    return jnp.mean((x @ params.w + params.b - y) ** 2)


@partial(jax.jit, static_argnames="schedule")
def train_step(
    state: TrainState,
    x: Float[Array, "batch din"],
    y: Float[Array, "batch dout"],
    schedule: Literal["constant", "cosine"],
    lr: float = 1e-3,
) -> tuple[TrainState, Float[Array, ""]]:
    """An Adam step written by hand over a NamedTuple state."""
    loss, grads = jax.value_and_grad(_loss)(state.params, x, y)
    opt = state.opt
    count = opt.count + 1
    mu = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, opt.mu, grads)
    nu = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, opt.nu, grads)
    rate = lr if schedule == "constant" else lr * jnp.cos(count / 100.0)
    params = jax.tree_util.tree_map(
        lambda p, m, v: p - rate * m / (jnp.sqrt(v) + 1e-8), state.params, mu, nu
    )
    return TrainState(Params(*params), AdamState(count, Params(*mu), Params(*nu))), loss
