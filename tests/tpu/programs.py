"""The chip's programs: a large and a small matmul on lines of their own, a block of two
Pallas kernels (JAX's matmul with no cost estimate, an add with one), a transformer's bf16
AdamW step; their makers ``make_NAME``. tests/fixtures/tpu_chip holds these lines: add below."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas.ops.tpu import matmul as pallas_matmul


def two_matmuls(a, b, c, d):
    large = jnp.tanh(a @ b)
    small = jnp.tanh(c @ d)
    return large.sum() + small.sum()


def make_two_matmuls():
    keys = jax.random.split(jax.random.key(0), 4)
    sizes = (4096, 4096, 512, 512)
    return tuple(jax.random.normal(k, (n, n), jnp.float32) for k, n in zip(keys, sizes))


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def estimated_add(x, y):
    return pl.pallas_call(
        add_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        cost_estimate=pl.CostEstimate(flops=1234567, transcendentals=0, bytes_accessed=7654321),
    )(x, y)


def block(x, y):
    z = pallas_matmul.matmul(x, y, block_shape=(256, 256))
    return jnp.tanh(z @ y) + estimated_add(x, y)


def make_block():
    kx, ky = jax.random.split(jax.random.key(1))
    return (jax.random.normal(kx, (1024, 1024), jnp.float32),
            jax.random.normal(ky, (1024, 1024), jnp.float32))  # fmt: skip


def make_estimated_add():
    return make_block()


VOCAB, WIDTH, HEADS, LAYERS, SEQ, BATCH = 8192, 1024, 8, 4, 512, 8


def _dense(key, shape):
    return (jax.random.normal(key, shape, jnp.float32) * 0.02).astype(jnp.bfloat16)


def _layer_params(key):
    k = jax.random.split(key, 4)
    return {
        "qkv": _dense(k[0], (WIDTH, 3 * WIDTH)),
        "out": _dense(k[1], (WIDTH, WIDTH)),
        "up": _dense(k[2], (WIDTH, 4 * WIDTH)),
        "down": _dense(k[3], (4 * WIDTH, WIDTH)),
    }


def _norm(x):
    x32 = x.astype(jnp.float32)
    return (x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, -1, keepdims=True) + 1e-6)).astype(x.dtype)


def _attention(p, x):
    q, k, v = jnp.split(_norm(x) @ p["qkv"], 3, axis=-1)

    def heads(t):
        return t.reshape(BATCH, SEQ, HEADS, WIDTH // HEADS)

    scores = jnp.einsum("bqhd,bkhd->bhqk", heads(q), heads(k)) / (WIDTH // HEADS) ** 0.5
    mask = jnp.tril(jnp.ones((SEQ, SEQ), bool))
    weights = jax.nn.softmax(jnp.where(mask, scores, -1e9).astype(jnp.float32), -1)
    mixed = jnp.einsum("bhqk,bkhd->bqhd", weights.astype(x.dtype), heads(v))
    return x + mixed.reshape(BATCH, SEQ, WIDTH) @ p["out"]


def _mlp(p, x):
    return x + jax.nn.gelu(_norm(x) @ p["up"]) @ p["down"]


def loss(params, tokens):
    x = params["embed"][tokens]
    for p in params["layers"]:
        x = _mlp(p, _attention(p, x))
    logits = (_norm(x) @ params["embed"].T).astype(jnp.float32)
    labels = jax.nn.one_hot(jnp.roll(tokens, -1, axis=1), VOCAB)
    return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), -1))


def train_step(params, opt, tokens):
    value, grads = jax.value_and_grad(loss)(params, tokens)
    count = opt["count"] + 1
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g.astype(jnp.float32), opt["mu"], grads)
    nu = jax.tree.map(lambda n, g: 0.999 * n + 0.001 * jnp.square(g.astype(jnp.float32)),
                      opt["nu"], grads)  # fmt: skip

    def step(p, m, n):
        m_hat, n_hat = m / (1 - 0.9**count), n / (1 - 0.999**count)
        return (
            p.astype(jnp.float32) * (1 - 1e-4) - 1e-3 * m_hat / (jnp.sqrt(n_hat) + 1e-8)
        ).astype(p.dtype)

    params = jax.tree.map(step, params, mu, nu)
    return params, {"count": count, "mu": mu, "nu": nu}, value


def make_train_step():
    keys = jax.random.split(jax.random.key(2), LAYERS + 2)
    params = {"embed": (jax.random.normal(keys[0], (VOCAB, WIDTH)) * 0.02).astype(jnp.bfloat16),
              "layers": [_layer_params(k) for k in keys[2:]]}  # fmt: skip

    def zeros(p):
        return jnp.zeros(p.shape, jnp.float32)

    opt = {"count": jnp.zeros((), jnp.int32), "mu": jax.tree.map(zeros, params),
           "nu": jax.tree.map(zeros, params)}  # fmt: skip
    tokens = jax.random.randint(keys[1], (BATCH, SEQ), 0, VOCAB)
    return params, opt, tokens
