"""Runs out of memory while tracing (MemoryError, as a huge allocation raises)."""

JXINSPECT = {"f": {"args": "f32[4]"}}


def f(x):
    raise MemoryError("cannot allocate 1 PiB")
