"""Recurses without end while tracing."""

JXINSPECT = {"f": {"args": "f32[4]"}}


def f(x):
    return f(x)
