"""A target's example inputs, in the spec language's values, before any JAX object exists.

From ``args_from`` (a function of the user's that returns them), from ``args``/``kwargs``
(the spec language), or, where those leave a required argument out, from the target's
annotations (:mod:`jxinspect.project.annotations`), sized by the ``dims`` each
configuration layer gives. The tracer turns them into abstract values
(:func:`jxinspect.tracer.call.abstract_inputs`). Imports no JAX: what only JAX can tell
(the statics of a function ``jax.jit`` wrapped already) is handed in.
"""

from __future__ import annotations

import inspect as pyinspect
from collections.abc import Mapping
from typing import Any

from jxinspect.core.errors import UsageError, UserCodeError
from jxinspect.core.interrupts import reraise_if_stopping
from jxinspect.core.model import InputsFrom
from jxinspect.project import spec as specs
from jxinspect.project.annotations import infer_inputs
from jxinspect.project.function import bound_signature, real_function
from jxinspect.project.options import TargetOptions
from jxinspect.project.plan import StagingPlan, api_keywords
from jxinspect.project.resolve import Resolved
from jxinspect.project.spec import parse_flag
from jxinspect.project.targets import (
    Target,
    describe_exception,
    load_module,
    mesh_hint,
    parse_target,
    resolve_attribute,
)

Inputs = tuple[tuple[Any, ...], dict[str, Any], InputsFrom | None]
"""The call's positional and keyword inputs, and how they were built where the user gave
none (``None``: given)."""


def example_inputs(
    resolved: Resolved, module: Any, fun: Any, wrapper_keywords: Mapping[str, Any]
) -> Inputs:
    """The inputs of ``resolved``'s target ``fun`` (found in ``module``).
    ``wrapper_keywords``: the staging keywords ``fun`` was wrapped with already (its own
    ``jax.jit``'s statics), used where the options name none."""
    options = resolved.options
    shared_dims = _shared_dims(resolved)
    if options.args_from:
        return _made_inputs(options.args_from, module, resolved.target, options.topology)
    kwargs = parse_flag("--kwargs", specs.parse_kwargs, options.kwargs or "")
    if options.args is None and _needs_more(fun, kwargs):
        return _inferred_inputs(resolved, module, fun, kwargs, shared_dims, wrapper_keywords)
    if options.args is None:  # all given by name: in the signature's order, as inferred
        return (*_in_signature_order(fun, kwargs), None)
    args = parse_flag("--args", specs.parse_args, options.args or "")
    return args, kwargs, None


def _made_inputs(ref: str, module: Any, target: Target, topology: str | None) -> Inputs:
    """The inputs ``args_from``'s function ``ref`` returns: ``args`` or ``(args, kwargs)``
    (``topology``: the one ``--topology`` names, which its devices are)."""
    if ":" in ref:
        source = parse_target(ref)
        maker = resolve_attribute(load_module(source), source)
    else:
        maker = resolve_attribute(module, target.with_attribute(ref))
    try:
        made = maker()
    except BaseException as err:  # the user's code may raise anything, sys.exit too
        reraise_if_stopping(err)
        hint = mesh_hint(err, f"--args-from {ref}", topology)
        raise UserCodeError(f"--args-from {ref} failed: {describe_exception(err)}{hint}") from None
    if (
        isinstance(made, tuple)
        and len(made) == 2
        and isinstance(made[0], (tuple, list))
        and isinstance(made[1], dict)
    ):
        return tuple(made[0]), dict(made[1]), None
    if isinstance(made, (tuple, list)):
        return tuple(made), {}, None
    raise UsageError(
        f"--args-from {ref} returned {type(made).__name__}; return args or (args, kwargs)"
    )


def _in_signature_order(fun: Any, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``--kwargs`` passed as the inferred inputs are: each leading parameter that can
    be positional in its place, the rest by name (one rule for both: the program's
    arguments follow the signature, not the keywords' sorted order)."""
    try:
        parameters = list(pyinspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return (), kwargs
    args: list[Any] = []
    rest = dict(kwargs)
    for param in parameters:
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        if param.name not in rest:
            break
        args.append(rest.pop(param.name))
    return tuple(args), rest


def _owner_class(module: Any, target: Target) -> type | None:
    """The class a method target belongs to (``Model`` of ``file.py:Model.__call__``)."""
    parts = (target.attribute or "").split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner if len(parts) > 1 and isinstance(owner, type) else None


def _needs_more(fun: Any, given: dict[str, Any]) -> bool:
    """Whether a call with only ``given`` keyword arguments lacks one ``fun`` requires."""
    try:
        parameters = pyinspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        p.default is p.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and p.name not in given
        for p in parameters
    )


def _inferred_inputs(
    resolved: Resolved,
    module: Any,
    fun: Any,
    given: dict[str, Any],
    shared_dims: frozenset[str],
    wrapper_keywords: Mapping[str, Any],
) -> Inputs:
    """The inputs the target's annotations describe (``given``: those named by
    ``--kwargs``; ``shared_dims``: the dims only the configuration's ``defaults`` give),
    its static arguments as its staging options (or its own ``jax.jit``) say."""
    options = resolved.options
    plan = StagingPlan.of(options.stage_name, api_keywords(options) or wrapper_keywords)
    real = real_function(fun)
    inferred = infer_inputs(
        real if pyinspect.isfunction(real) else fun,
        given=given,
        dims=parse_flag("--dims", specs.parse_dims, options.dims or ""),
        float_dtype=options.dtype,
        statics=frozenset(plan.statics),
        static_names=plan.static_names,
        where=resolved.target.text,
        shared_dims=shared_dims,
        owner=_owner_class(module, resolved.target),
        bound=bound_signature(fun),
    )
    return inferred.args, inferred.kwargs, inferred.said


def _dim_names(options: TargetOptions | None) -> set[str]:
    if options is None or not options.dims:
        return set()
    return {name for name, _ in parse_flag("--dims", specs.parse_dims, options.dims)}


def _own_dims(resolved: Resolved) -> set[str]:
    """The dims a layer over the configuration's ``defaults`` gives (flags, the
    configuration's entry, the declaration)."""
    layers = (resolved.given, resolved.entry, resolved.declared)
    return set().union(*(_dim_names(layer) for layer in layers))


def _shared_dims(resolved: Resolved) -> frozenset[str]:
    """The dims only the configuration's ``defaults`` give: given to every target, so a
    target that does not use them is not told so."""
    return frozenset(_dim_names(resolved.defaults) - _own_dims(resolved))


def unused_dims_note(resolved: Resolved, said: InputsFrom | None) -> list[str]:
    """Dims given for a target whose inputs are given too: said, not silently ignored."""
    own = sorted(_own_dims(resolved))
    if said is not None or not own:
        return []
    return [
        f"dims unused ({', '.join(own)}): the inputs are given (args, kwargs or "
        "args_from), and dims only size inputs read from the annotations"
    ]
