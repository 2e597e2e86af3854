"""A result dict key renamed, after: ``probs`` → ``probabilities``.

The result path ``result['probs']`` is matched to ``result['probabilities']`` by
position and type and reported as renamed (neutral); ``diff-debug`` exits 0.
"""

import jax


def predict(w, x):
    logits = x @ w
    return {"logits": logits, "probabilities": jax.nn.softmax(logits, axis=-1)}


JXINSPECT = {"predict": {"args": "f32[784,10], f32[32,784]"}}
