"""A list doubled sixty times: 2**60 items."""

raise ImportError("a fault of the corpus: folded from source only, never imported")
A = [0]
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
A = A + A
JXINSPECT = {"f": {"args": A}}


def f(x):
    return x
