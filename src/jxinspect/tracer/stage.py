"""Wrap the user's function with the staging API, trace it, and lower it.

Options are the staging API's own keyword arguments, passed through as given. A
function the user already wrapped (``jax.jit(f)``, ``jax.pmap(f)``) is staged as it is.
"""

from __future__ import annotations

import inspect
import traceback
from dataclasses import dataclass
from typing import Any

from jxinspect.errors import UsageError, UserCodeError
from jxinspect.interrupts import reraise_if_stopping
from jxinspect.targets import describe_exception
from jxinspect.tracer import seam
from jxinspect.vocabulary import STAGES, Stage

SHARD_MAP_KEYS = ("mesh", "in_specs", "out_specs", "axis_names", "check_vma")


@dataclass
class Staged:
    """What staging produced; ``lowered`` is ``None`` when lowering failed."""

    stage: Stage
    jaxpr: Any
    """The top-level ``core.Jaxpr``."""
    names_jaxpr: Any
    """The jaxpr whose debug info names the arguments (pmap's inner one)."""
    donated: tuple[bool, ...]
    out_info: Any
    lowered: Any | None
    lower_error: str | None
    wrapped: bool
    """The target was already a staged function; options were not applied."""
    lower_traceback: str | None = None
    """The lowering error's formatted traceback, for ``--traceback``."""


def call_problem(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], options: dict[str, Any], stage: str
) -> UsageError | None:
    """An arity, static-argument or unhashable-value mistake in the example inputs, said
    better than JAX says it. Only a hint: JAX judges the call, and this is raised only
    when JAX refuses it too (a wrapper or an advertised signature may be narrower than
    what the function accepts)."""
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as err:
            return UsageError(
                f"the example inputs do not fit {getattr(fun, '__name__', 'the function')}"
                f"{signature}: {err}; fix --args/--kwargs"
            )
    key = "static_broadcasted_argnums" if stage == "pmap" else "static_argnums"
    nums = options.get(key) or ()
    for num in (nums,) if isinstance(nums, int) else nums:
        if not -len(args) <= num < len(args):
            return UsageError(
                f"{key.replace('_', '-')} {num} is out of range: {len(args)} positional "
                f"argument{'s' if len(args) != 1 else ''} given"
            )
        problem = _unhashable(args[num], f"static argument {num}")
        if problem is not None:
            return problem
    names = options.get("static_argnames") or ()
    for name in (names,) if isinstance(names, str) else names:
        if name in kwargs:
            problem = _unhashable(kwargs[name], f"static argument {name!r}")
            if problem is not None:
                return problem
    return None


def _unhashable(value: Any, what: str) -> UsageError | None:
    try:
        hash(value)
    except TypeError:
        return UsageError(
            f"{what} is {type(value).__name__} {value!r}, which is not hashable; static "
            "values must be hashable (use a tuple instead of a list)"
        )
    return None


def _wrap(fun: Any, stage: Stage, options: dict[str, Any]) -> Any:
    if stage == "jit":
        return seam.jit(fun, options)
    if stage == "pjit":
        return seam.pjit(fun, options)
    if stage == "shard_map":
        shard_opts = {k: v for k, v in options.items() if k in SHARD_MAP_KEYS}
        jit_opts = {k: v for k, v in options.items() if k not in SHARD_MAP_KEYS}
        if "out_specs" not in shard_opts:
            raise UsageError("shard_map needs --out-specs, e.g. --out-specs \"P('data')\"")
        return seam.jit(seam.shard_map(fun, shard_opts), jit_opts)
    if stage == "pmap":
        return seam.pmap(fun, options)
    raise UsageError(f"unknown stage {stage!r}: use one of {', '.join(STAGES)}")


def stage_function(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    stage: Stage,
    options: dict[str, Any],
    platform: str | None,
) -> Staged:
    """Trace and lower ``fun``; a tracing error is the user's, a lowering error is reported."""
    wrapped = seam.is_jit_wrapped(fun) or seam.is_pmap_wrapped(fun)
    if seam.is_pmap_wrapped(fun):
        stage = "pmap"
    problem = None if wrapped else call_problem(fun, args, kwargs, options, stage)
    shapes: Any = None
    try:
        staged = fun if wrapped else _wrap(fun, stage, options)
        if stage == "pmap" and not seam.is_jit_wrapped(staged):
            statics = options.get("static_broadcasted_argnums", ())
            closed, shapes = seam.make_jaxpr(staged, args, kwargs, statics)
            jaxpr = closed.jaxpr
            names_jaxpr = _pmap_inner(jaxpr)
            traced = None
        else:
            traced = staged.trace(*args, **kwargs)
            jaxpr = seam.jaxpr_of(traced)
            names_jaxpr = jaxpr
    except UsageError:
        raise
    except BaseException as err:  # the user's code may raise anything while tracing
        reraise_if_stopping(err)
        if problem is not None and isinstance(err, Exception):
            raise problem from None  # JAX refused the call too: say what to fix
        raise UserCodeError(f"tracing failed: {describe_exception(err)}") from err
    lowered, error, lower_traceback = None, None, None
    try:
        if traced is not None:
            lowered = seam.lower(traced, None, None, platform)
        else:
            lowered = seam.lower(staged, args, kwargs, platform)
    except Exception as err:
        error = describe_exception(err)
        lower_traceback = "".join(traceback.format_exception(err))
    if traced is not None:
        donated = seam.donated_flags(traced, args, kwargs, options.get("donate_argnums"))
        out_info = seam.out_info(traced)
    elif lowered is not None:
        donated = seam.donated_flags(lowered, args, kwargs, options.get("donate_argnums"))
        out_info = seam.out_info(lowered)
    else:
        donated = tuple(False for _ in names_jaxpr.invars)
        out_info = None
    if out_info is None:
        out_info = shapes
    return Staged(
        stage, jaxpr, names_jaxpr, donated, out_info, lowered, error, wrapped, lower_traceback
    )


def _pmap_inner(jaxpr: Any) -> Any:
    """pmap stages one jit of an internal ``_fun``: its jaxpr carries the names JAX kept."""
    if len(jaxpr.eqns) == 1 and "jaxpr" in jaxpr.eqns[0].params:
        inner = jaxpr.eqns[0].params["jaxpr"]
        return getattr(inner, "jaxpr", inner)
    return jaxpr
