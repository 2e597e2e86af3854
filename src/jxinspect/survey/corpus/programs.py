"""The survey's corpus: one small program per transformation whose debug info JAX's own
tests check, each staged by ``jxinspect survey`` as any target is (the ``JXINSPECT``
declaration below gives its inputs and staging options).

A user's program in every respect: it imports JAX and is imported by the pipeline,
never by jxinspect's own modules. Every transformation wraps a jitted inner function (or
builds a body of its own) so that its nested jaxprs show what it kept. It imports on
every supported release; a program whose public API a release lacks (``custom_transpose``
from JAX 0.10 on) is named in ``jxinspect.survey.run.NEEDS`` and graded there as not
available.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import custom_batching, lax
from jax.experimental import checkify as _checkify
from jax.sharding import Mesh, PartitionSpec

try:  # JAX 0.7 and later
    from jax import shard_map as _shard_map
except ImportError:  # pragma: no cover - older releases
    from jax.experimental.shard_map import shard_map as _shard_map

try:  # JAX 0.4.35 to 0.9.x; JAX 0.10 removed it (the survey grades it "not available")
    from jax.custom_transpose import custom_transpose as _custom_transpose
except ImportError:  # pragma: no cover - newer releases
    _custom_transpose = None

MESH = Mesh(np.array(jax.devices()[:2]), ("x",))


@jax.jit
def _scaled_sum(w, x):
    return jnp.sum(jnp.tanh(w * x))


def _sharded(fun, in_specs, out_specs):
    return _shard_map(fun, mesh=MESH, in_specs=in_specs, out_specs=out_specs)


# ---- arguments and results of jit ---------------------------------------------------------


def plain(x, y):
    return {"sum": x + y, "prod": x * y}


def nested_jit(w, x):
    return {"loss": _scaled_sum(w, x)}


def named_call(w, x):
    return {"loss": jax.named_call(_scaled_sum, name="scaled_sum")(w, x)}


def static_arg(x, n):
    return x * n


def donated(state, grad):
    return state - 0.1 * grad


def keywords(x, *, beta, alpha):
    return x * beta + alpha


def star_args(x, *rest):
    return x + sum(rest)


def pytree(params, batch):
    hidden = jnp.tanh(batch["x"] @ params["w"] + params["b"])
    return {"logits": hidden, "mean": jnp.mean(hidden)}


def with_shardings(x, bias):
    return x + bias


# ---- differentiation ----------------------------------------------------------------------


def grad(w, x):
    return jax.grad(_scaled_sum)(w, x)


def value_and_grad(w, x):
    value, dw = jax.value_and_grad(_scaled_sum)(w, x)
    return {"value": value, "dw": dw}


def vjp(w, x):
    _, pullback = jax.vjp(_scaled_sum, w, x)
    dw, dx = pullback(jnp.ones(()))
    return dw, dx


def jvp(w, x, dw):
    value, tangent = jax.jvp(lambda w: _scaled_sum(w, x), (w,), (dw,))
    return value, tangent


def linearize(w, x, dw):
    value, tangent_of = jax.linearize(lambda w: _scaled_sum(w, x), w)
    return value, tangent_of(dw)


def jit_of_grad_of_jit(w, x):
    return jax.grad(jax.jit(_scaled_sum))(w, x)


# ---- batching and control flow ------------------------------------------------------------


def vmap(w, xs):
    return jax.vmap(_scaled_sum, in_axes=(None, 0))(w, xs)


def scan(carry, xs):
    def step(total, x):
        total = total + x
        return total, jnp.sin(total)

    return lax.scan(step, carry, xs)


def lax_map(w, xs):
    return lax.map(lambda x: _scaled_sum(w, x), xs)


@jax.jit
def _add(a, b):
    return a + b


def associative_scan(xs):
    return lax.associative_scan(_add, xs)


def fori_loop(x, n):
    return lax.fori_loop(0, n, lambda i, acc: acc * 0.5 + i, x)


def while_loop(x):
    return lax.while_loop(lambda v: jnp.sum(v) < 100.0, lambda v: v * 2.0 + 1.0, x)


def cond(flag, x):
    return lax.cond(flag, lambda x: jnp.sin(x), lambda x: jnp.cos(x), x)


def switch(index, x):
    branches = [lambda x: jnp.sin(x), lambda x: jnp.cos(x), lambda x: jnp.tanh(x)]
    return lax.switch(index, branches, x)


def checkpoint(w, x):
    return jax.checkpoint(lambda w, x: jnp.sin(jnp.sin(w * x)))(w, x)


@jax.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * jax.nn.sigmoid(x)


def custom_jvp(x):
    return _softplus(x)


@jax.custom_vjp
def _clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


_clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def custom_vjp(x):
    return jnp.sum(_clip_gradient(x) ** 2)


def grad_of_custom_vjp(x):
    return jax.grad(custom_vjp)(x)


if _custom_transpose is not None:

    @_custom_transpose
    def _scale(res, x):
        return res * x

    @_scale.def_transpose
    def _scale_transpose(res, cotangent):
        return res * cotangent


def custom_transpose(w, x):
    if _custom_transpose is None:  # pragma: no cover - newer releases
        raise NotImplementedError("jax.custom_transpose is not in this JAX (removed in 0.10)")
    return _scale(jax.ShapeDtypeStruct(x.shape, x.dtype), w, x)


@custom_batching.custom_vmap
def _sine(x):
    return jnp.sin(x)


@_sine.def_vmap
def _sine_rule(axis_size, in_batched, x):
    return jnp.sin(x), in_batched[0]


def custom_vmap(x):
    return _sine(x)


# ---- callbacks and checks -----------------------------------------------------------------


def pure_callback(x):
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return {"sin": jax.pure_callback(np.sin, shape, x, vmap_method="sequential")}


@jax.jit
def _checked_log(x):
    _checkify.check(jnp.all(x > 0), "x must be positive")
    return jnp.log(x)


def checkify(x):
    _, out = _checkify.checkify(_checked_log)(x)
    return out


# ---- devices ------------------------------------------------------------------------------


def shard_map(x, w):
    inner = _sharded(lambda x, w: x @ w, (PartitionSpec("x"), PartitionSpec()), PartitionSpec("x"))
    return inner(x, w)


def remat_of_shard_map(x, w):
    inner = _sharded(lambda x, w: jnp.sin(x @ w), (PartitionSpec("x"), PartitionSpec()),
                     PartitionSpec("x"))  # fmt: skip
    return jax.checkpoint(inner)(x, w)


def pmap(params, batch):
    return {"out": batch["x"] * params["scale"], "total": jnp.sum(batch["x"])}


# A literal declaration, read from the source before the module is imported (the
# simulated devices must be set first); `jxinspect survey` simulates 4 devices for every
# program, and the ones that need several say so, for `jxinspect lower` of one alone.
JXINSPECT = {
    "plain": {"args": "f32[3], f32[3]"},
    "nested_jit": {"args": "f32[4], f32[4]"},
    "named_call": {"args": "f32[4], f32[4]"},
    "static_arg": {"args": "f32[3], 2", "static_argnums": 1},
    "donated": {"args": "f32[3], f32[3]", "donate_argnums": 0},
    "keywords": {"args": "f32[3]", "kwargs": "beta=f32[3], alpha=f32[]"},
    "star_args": {"args": "f32[3], f32[3], f32[3]"},
    "pytree": {"args": "{'w': f32[4,2], 'b': f32[2]}, {'x': f32[8,4]}"},
    "with_shardings": {"args": "f32[4,3], f32[3]", "devices": 4, "mesh": "x=2",
                       "in_specs": "P('x'), P()", "out_specs": "P('x')"},
    "grad": {"args": "f32[4], f32[4]"},
    "value_and_grad": {"args": "f32[4], f32[4]"},
    "vjp": {"args": "f32[4], f32[4]"},
    "jvp": {"args": "f32[4], f32[4], f32[4]"},
    "linearize": {"args": "f32[4], f32[4], f32[4]"},
    "jit_of_grad_of_jit": {"args": "f32[4], f32[4]"},
    "vmap": {"args": "f32[4], f32[8,4]"},
    "scan": {"args": "f32[], f32[5]"},
    "lax_map": {"args": "f32[4], f32[5,4]"},
    "associative_scan": {"args": "f32[8]"},
    "fori_loop": {"args": "f32[3], 4", "static_argnums": 1},
    "while_loop": {"args": "f32[3]"},
    "cond": {"args": "bool[], f32[3]"},
    "switch": {"args": "i32[], f32[3]"},
    "checkpoint": {"args": "f32[4], f32[4]"},
    "custom_jvp": {"args": "f32[3]"},
    "custom_vjp": {"args": "f32[3]"},
    "grad_of_custom_vjp": {"args": "f32[3]"},
    "custom_transpose": {"args": "f32[4], f32[4]"},
    "custom_vmap": {"args": "f32[3]"},
    "pure_callback": {"args": "f32[3]"},
    "checkify": {"args": "f32[3]"},
    "shard_map": {"args": "f32[4,3], f32[3,2]", "devices": 4},
    "remat_of_shard_map": {"args": "f32[4,3], f32[3,2]", "devices": 4},
    "pmap": {"args": "{'scale': f32[4,3]}, {'x': f32[4,3]}", "devices": 4, "stage": "pmap",
             "axis_name": "batch"},
}  # fmt: skip
"""Each program's inputs and staging, in the survey's order."""
