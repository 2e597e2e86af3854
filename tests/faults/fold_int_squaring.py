"""An integer squared forty times: 2**40 digits."""

raise ImportError("a fault of the corpus: folded from source only, never imported")
A = 9
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
A = A * A
JXINSPECT = {"f": {"args": f"f32[{A}]"}}


def f(x):
    return x
