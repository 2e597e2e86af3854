"""A string doubled sixty times: 2**60 characters."""

raise ImportError("a fault of the corpus: folded from source only, never imported")
A = "x"
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
