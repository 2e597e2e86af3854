"""A UTF-8 module that starts with a byte-order mark: é."""

JXINSPECT = {"f": {"args": "f32[3]"}}


def f(x):
    return x * 2
