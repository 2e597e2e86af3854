# -*- coding: latin-1 -*-
"""A module saved as latin-1: café, naïve."""

JXINSPECT = {"f": {"args": "f32[3]"}}
LABEL = "été"


def f(x):
    return x * 2
