"""Aborts its process (SIGABRT) while tracing, as a failed assertion in native code does."""

import os

JXINSPECT = {"f": {"args": "f32[4]"}}


def f(x):
    os.abort()
