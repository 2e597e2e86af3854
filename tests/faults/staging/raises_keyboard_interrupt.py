"""Raises KeyboardInterrupt from its own code while tracing (nobody pressed Ctrl-C)."""

JXINSPECT = {"f": {"args": "f32[4]"}}


def f(x):
    raise KeyboardInterrupt
