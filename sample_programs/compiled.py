"""Programs whose compiled form is worth a look: `jxinspect lower ... --compile`.

Each stages on 8 simulated CPU devices and shows one thing XLA decides at compile time:
the collectives it inserts (and over which mesh axes), the output sharding it chooses
when none is declared, and whether a donated buffer can really be reused. Their meshes'
axes are Auto (``"explicit": False``): XLA's sharding propagation decides, as in a program
over ``jax.make_mesh(..., axis_types=(AxisType.Auto,) * n)`` (the axes ``jax.make_mesh``
makes by default are Explicit from JAX 0.9 on, where the arrays' types decide).
"""

import jax
import jax.numpy as jnp


def dp_step(params, batch):
    """Data parallel: the batch is split over `data`, the gradient all-reduced over it."""

    def loss(p):
        pred = batch["x"] @ p["w"] + p["b"]
        return jnp.mean((pred - batch["y"]) ** 2)

    grads = jax.grad(loss)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def tp_mlp(x, w_in, w_out):
    """Tensor parallel (Megatron style): the hidden dim is split over `model`; the second
    matmul contracts over it, so partial sums are reduced over `model`."""
    h = jax.nn.relu(x @ w_in)
    return h @ w_out


def fsdp_layer(x, w):
    """FSDP style: the weight is stored split over `fsdp` and all-gathered to compute."""
    return jnp.tanh(x @ w)


def chosen_output(x, w):
    """Input shardings declared, output sharding left to the compiler."""
    return (x @ w).T


def bad_donation(x, scratch):
    """`scratch` is donated but no output has its shape, so XLA cannot reuse it."""
    return x * 2.0 + scratch.sum()


def reshard_donation(x):
    """`x` is donated and the result has its shape, but not its layout: per device the
    shapes differ, so the buffer cannot be reused."""
    return x * 2.0


JXINSPECT = {
    "dp_step": {
        "devices": 8,
        "explicit": False,
        "mesh": "data=8",
        "args": "{'w': f32[64,16], 'b': f32[16]}, {'x': f32[256,64], 'y': f32[256,16]}",
        "in_specs": "{'w': P(), 'b': P()}, {'x': P('data', None), 'y': P('data', None)}",
    },
    "tp_mlp": {
        "devices": 8,
        "explicit": False,
        "mesh": "data=2,model=4",
        "args": "f32[32,128], f32[128,512], f32[512,128]",
        "in_specs": "P('data', None), P(None, 'model'), P('model', None)",
        "out_specs": "P('data', None)",
    },
    "fsdp_layer": {
        "devices": 8,
        "explicit": False,
        "mesh": "fsdp=8",
        "args": "f32[64,256], f32[256,256]",
        "in_specs": "P('fsdp', None), P('fsdp', None)",
        "out_specs": "P('fsdp', None)",
    },
    "chosen_output": {
        "devices": 8,
        "explicit": False,
        "mesh": "data=4,model=2",
        "args": "f32[64,32], f32[32,16]",
        "in_specs": "P('data', None), P(None, 'model')",
    },
    "bad_donation": {
        "devices": 8,
        "explicit": False,
        "mesh": "data=8",
        "args": "f32[64,32], f32[8]",
        "in_specs": "P('data', None), P()",
        "donate_argnums": (1,),
    },
    "reshard_donation": {
        "devices": 8,
        "explicit": False,
        "mesh": "data=8",
        "args": "f32[64,32]",
        "in_specs": "P('data', None)",
        "out_specs": "P(None, 'data')",
        "donate_argnums": (0,),
    },
}
