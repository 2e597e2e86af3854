"""A string repeated a thousand times, ten times over: 10**30 characters."""

raise ImportError("a fault of the corpus: folded from source only, never imported")
A = "x"
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
A = [A] * 1000
JXINSPECT = {"f": {"args": A}}


def f(x):
    return x
