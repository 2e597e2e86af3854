"""Self-attention, batch split over ``data`` and heads over ``model``."""

import jax
import jax.numpy as jnp


def attention(params, x):
    """Multi-head self-attention over ``x`` [batch, seq, dim] with 8 heads."""
    q = jnp.einsum("bsd,dhk->bshk", x, params["wq"])
    k = jnp.einsum("bsd,dhk->bshk", x, params["wk"])
    v = jnp.einsum("bsd,dhk->bshk", x, params["wv"])
    weights = jax.nn.softmax(jnp.einsum("bshk,bthk->bhst", q, k) / 8.0, axis=-1)
    return jnp.einsum("bhst,bthk,hkd->bsd", weights, v, params["wo"])


_W = "f32[256,8@model,32]"
JXINSPECT = {
    "attention": {
        "mesh": "data=2,model=4",
        "args": f"{{'wq': {_W}, 'wk': {_W}, 'wv': {_W}, 'wo': f32[8@model,32,256]}}, "
        "f32[16@data,64,256]",
        "out_specs": "P('data', None, None)",
    },
}
