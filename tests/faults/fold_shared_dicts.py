"""Sixty levels of {a: A, b: A}: 2**60 entries written out."""

raise ImportError("a fault of the corpus: folded from source only, never imported")
A = {}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
A = {"a": A, "b": A}
JXINSPECT = {"f": {"args": f"{A}"}}


def f(x):
    return x
