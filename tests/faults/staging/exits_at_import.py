"""Ends its process at import, skipping every handler (os._exit(0))."""

import os

JXINSPECT = {"f": {"args": "f32[4]"}}

os._exit(0)


def f(x):
    return x
