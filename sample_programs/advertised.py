"""A wrapper that advertises other parameter names than the function it wraps.

``advertised_as`` sets the wrapper's ``__signature__`` (as some libraries do), so JAX
names the arguments after the advertised ``(params, inputs)`` while the function's own
parameters are ``(w, x)``: each argument's status is ``mismatch`` (JX109), the name the
program carries is not the user's.
"""

import functools
import inspect


def advertised_as(template):
    """A decorator whose wrapper advertises ``template``'s signature."""

    def wrap(fun):
        @functools.wraps(fun)
        def wrapper(*args, **kwargs):
            return fun(*args, **kwargs)

        wrapper.__signature__ = inspect.signature(template)
        return wrapper

    return wrap


def _template(params, inputs):
    """Only its signature is used."""


@advertised_as(_template)
def apply(w, x):
    """A linear layer; the program calls its arguments ``params`` and ``inputs``."""
    return {"y": x @ w}


JXINSPECT = {"apply": {"args": "f32[3,2], f32[4,3]"}}
