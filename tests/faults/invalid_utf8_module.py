"""A module that is not UTF-8 and declares no encoding."""

JXINSPECT = {"f": {"args": "f32[3]"}}
# café


def f(x):
    return x
