"""A healthy target: it must be reported whatever its neighbours do."""

JXINSPECT = {"double": {"args": "f32[4]"}}


def double(x):
    return x * 2
