"""Control flow and transformations that produce nested jaxprs.

``model`` uses ``lax.scan``, ``lax.cond``, ``lax.while_loop``,
``jax.checkpoint`` (remat), a ``custom_jvp`` function, a ``custom_vjp``
function and an inner ``jax.jit`` call, so the staged program contains a
sub-jaxpr of each kind.
"""

import jax
import jax.numpy as jnp
from jax import lax


@jax.custom_jvp
def softplus(x):
    return jnp.logaddexp(x, 0.0)


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), jax.nn.sigmoid(x) * t


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@jax.jit
def _dense(w, h):
    return h @ w


@jax.checkpoint
def _block(w, h):
    return softplus(_dense(w, h))


def _trunk(ws, x, threshold):
    """Scan the checkpointed blocks over stacked weights, then rescale via cond."""

    def body(h, w):
        h = clip_gradient(_block(w, h))
        return h, jnp.mean(h)

    h, means = lax.scan(body, x, ws)
    h = lax.cond(jnp.max(h) > threshold, lambda v: v / jnp.max(v), lambda v: v, h)
    return h, means


def model(ws, x, threshold):
    """Forward pass: the trunk, then halve the output until its norm is <= 1."""
    h, means = _trunk(ws, x, threshold)

    def cond_fun(carry):
        i, v = carry
        return (i < 10) & (jnp.linalg.norm(v) > 1.0)

    def body_fun(carry):
        i, v = carry
        return i + 1, v * 0.5

    steps, h = lax.while_loop(cond_fun, body_fun, (0, h))
    return {"out": h, "layer_means": means, "halvings": steps}


def model_grad(ws, x, threshold):
    """Gradient of a squared-output loss of the trunk w.r.t. the weights.

    ``while_loop`` is not reverse-differentiable, so only the trunk (scan,
    cond, remat, custom_jvp, custom_vjp, inner jit) is differentiated; the
    custom rules are applied and the rematerialised block appears inside the
    transposed scan.
    """

    def loss(w):
        h, _ = _trunk(w, x, threshold)
        return jnp.sum(h**2)

    return jax.grad(loss)(ws)


JXINSPECT = {
    "model": {"args": "f32[6,32,32], f32[4,32], f32[]"},
    "model_grad": {"args": "f32[6,32,32], f32[4,32], f32[]"},
}
