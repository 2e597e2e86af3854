"""A function that traces but does not lower for the platform asked for (JX108).

Nonsymmetric eigendecomposition has a lowering for CPU only: lowered for TPU, the
report shows what tracing gave (names from the jaxpr, no shardings) and says why
lowering failed. Run it with:

    jxinspect lower sample_programs/lowering_fails.py:eig_on_tpu
"""

import jax.numpy as jnp

JXINSPECT = {"eig_on_tpu": {"args": "f32[4,4]", "platform": "tpu"}}


def eig_on_tpu(matrix):
    return jnp.linalg.eig(matrix)
