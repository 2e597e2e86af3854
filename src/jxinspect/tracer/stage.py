"""Wrap the user's function with the staging API, trace it, and lower it.

Options are the staging API's own keyword arguments, passed through as given. A
function the user already wrapped (``jax.jit(f)``, ``jax.pmap(f)``) is staged as it is,
one a library wrapped through its adapter (:mod:`jxinspect.tracer.adapters`). What
staging gives is a frozen value of :mod:`jxinspect.tracer.staged`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import tempfile
import traceback
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from jxinspect.core import progress
from jxinspect.core.errors import UsageError, UserCodeError, raised_by_jxinspect
from jxinspect.core.interrupts import reraise_if_stopping
from jxinspect.core.model import StaticArg
from jxinspect.core.vocabulary import STAGES, Stage
from jxinspect.project.targets import describe_exception
from jxinspect.tracer import seam
from jxinspect.tracer.staged import (
    Compiled,
    CompileFailed,
    Lowered,
    LoweringFailed,
    Paths,
    Staged,
    Traced,
)

# The staging plan reads the project's option table: imported where a call is staged here,
# so that a recorded run's lowering (:func:`recorded`) loads none of it.
if TYPE_CHECKING:
    from jxinspect.project.plan import StagingPlan


def call_problem(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
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
    for num in plan.statics:
        if not -len(args) <= num < len(args):
            key = plan.statics_key or "statics"
            return UsageError(
                f"{key.replace('_', '-')} {num} is out of range: {len(args)} positional "
                f"argument{'s' if len(args) != 1 else ''} given"
            )
        problem = _unhashable(args[num], f"static argument {num}")
        if problem is not None:
            return problem
    for name in plan.static_names:
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
        return seam.shard_map_in_jit(fun, options)
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
    plan: StagingPlan | None = None,
) -> Staged:
    """Trace and lower ``fun``; a tracing error is the user's, a lowering error is carried
    as :class:`~jxinspect.tracer.staged.LoweringFailed`. The staged program carries the
    user's path of each input it receives and the call's static arguments
    (:attr:`~jxinspect.tracer.staged.Traced.paths`), worked out once, here, where the call
    is split or a wrapper rearranges it, by ``plan`` (the call's statics, or those of the
    function's own ``jax.jit``; by default the plan of ``options``, else of that jit)."""
    from jxinspect.project.plan import StagingPlan

    plan = plan or StagingPlan.of(stage, options or seam.wrapper_keywords(fun))
    called = _call_paths(fun, args, kwargs, plan)
    staged = _stage_function(fun, args, kwargs, stage, options, platform)
    paths = _program_paths(called, plan, staged.traced)
    return replace(staged, traced=replace(staged.traced, paths=paths))


def _stage_function(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    stage: Stage,
    options: dict[str, Any],
    platform: str | None,
) -> Staged:
    """:func:`stage_function`'s staging."""
    from jxinspect.project.plan import StagingPlan
    from jxinspect.tracer import adapters

    seam.hide_tool_frames()
    adapter = adapters.find(fun)
    if adapter is not None:
        return _stage_adapted(adapter, fun, args, kwargs, platform)
    wrapped = seam.is_jit_wrapped(fun) or seam.is_pmap_wrapped(fun)
    if seam.is_pmap_wrapped(fun):
        stage = "pmap"
    plan = StagingPlan.of(stage, options)
    split = None
    if not wrapped and stage in ("jit", "pjit") and plan.in_layout is None:
        split = _split_non_arrays(fun, args, kwargs, plan)
    staging = _Staging(fun, args, kwargs, stage, options, plan, wrapped, split)
    program = _trace(staging)
    if program.traced is not None:
        lowering = _lower(program.traced, None, None, platform)
    else:
        lowering = _lower(program.staged, *staging.call, platform)
    traced = _traced(program, lowering, staging)
    nnx_note = adapters.nnx_objects_note(fun, args, kwargs)
    if nnx_note is not None:
        traced = replace(traced, notes=(nnx_note,))
    if split is not None:
        traced = replace(
            traced,
            leaves=split.leaves,
            call=(fun, args, kwargs),
            notes=(
                *traced.notes,
                f"{split.static} argument leaves are not arrays ({split.example}); staged "
                "as eqx.filter_jit does: array leaves traced, the rest static",
            ),
        )
    return _staged(traced, lowering)


@dataclass(frozen=True)
class _Staging:
    """One staging of the user's function: its call, and how it is staged."""

    fun: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    stage: Stage
    options: dict[str, Any]
    plan: StagingPlan
    wrapped: bool
    """The function was already staged (``jax.jit(f)``): it is traced as it is."""
    split: _Split | None
    """The call's array leaves split from the rest (``None``: the call as given)."""

    @property
    def call(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments JAX traces: the split call's, or the user's own."""
        return (self.split.args, self.split.kwargs) if self.split else (self.args, self.kwargs)


class _Program(NamedTuple):
    """What tracing gave: the staged callable, JAX's ``Traced`` (``None`` for a pmap,
    which has no ``.trace()``), the jaxprs, and a pmap's result shapes."""

    staged: Any
    traced: Any | None
    jaxpr: Any
    names_jaxpr: Any
    shapes: Any = None


class _Lowering(NamedTuple):
    lowered: Any | None
    error: str | None = None
    traceback: str | None = None


def _trace(staging: _Staging) -> _Program:
    """Wrap the function (unless already staged) and trace it; raises what to fix when it
    fails."""
    fun, stage, plan, wrapped, split = (
        staging.fun,
        staging.stage,
        staging.plan,
        staging.wrapped,
        staging.split,
    )
    problem = None if wrapped else call_problem(fun, staging.args, staging.kwargs, plan)
    call_args, call_kwargs = staging.call
    progress.stage("tracing")
    try:
        with seam.unfiltered_tracebacks():
            staged = fun if wrapped else _wrap(split.fun if split else fun, stage, staging.options)
            if stage == "pmap" and not seam.is_jit_wrapped(staged):
                jaxpr, shapes = seam.make_jaxpr(staged, call_args, call_kwargs, plan.statics)
                return _Program(staged, None, jaxpr, _pmap_inner(jaxpr), shapes)
            traced = staged.trace(*call_args, **call_kwargs)
            jaxpr = seam.jaxpr_of(traced)
            return _Program(staged, traced, jaxpr, jaxpr)
    except UsageError:
        raise
    except BaseException as err:  # the user's code may raise anything while tracing
        reraise_if_stopping(err)
        if raised_by_jxinspect(err):
            raise  # ours (the seam on a new JAX, say): an internal error, never the user's
        if problem is not None and isinstance(err, Exception):
            raise problem from None  # JAX refused the call too: say what to fix
        # the split call's non-array leaves are static: they are not what JAX refused
        raise _tracing_error(err, staging) from err


def _tracing_error(err: BaseException, staging: _Staging) -> UserCodeError:
    """What the user's code raised while tracing, and how to fix it where known."""
    fun, plan, stage, wrapped = staging.fun, staging.plan, staging.stage, staging.wrapped
    args, kwargs = staging.call
    leaf = None if wrapped else _first_non_array(fun, args, kwargs, plan)
    if leaf is not None and isinstance(err, (TypeError, ValueError)):
        path, value = leaf
        return UserCodeError(
            f"tracing failed: argument {path} is {_kind(value)}, not an array, and "
            f"{stage} stages only arrays ({describe_exception(err)}); pass it as a "
            "static argument or stage with --stage jit, which splits arrays from the rest"
        )
    hint = _pmap_devices_hint(args, plan) if stage == "pmap" else ""
    if not wrapped and seam.needs_concrete_value(err):
        hint += _static_number_hint(fun, args, plan)
    elif not wrapped:
        hint += _typechecked_scalar_hint(err, fun, args, kwargs, plan)
    return UserCodeError(f"tracing failed: {describe_exception(err)}{hint}")


def _static_number_hint(fun: Any, args: tuple[Any, ...], plan: StagingPlan) -> str:
    """How to make static the numbers given as arguments (traced as scalars, as ``jit``
    traces them), when the code needed a concrete value."""
    from jxinspect.project.plan import role_option

    statics = plan.static_positions(len(args))
    numbers = [i for i, a in enumerate(args)
               if isinstance(a, (bool, int, float)) and i not in statics]  # fmt: skip
    option = role_option(plan.stage, "statics")
    if not numbers or option is None:
        return ""
    try:
        names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        names = []
    said = ", ".join(
        f"{names[i]}={args[i]!r}" if i < len(names) else repr(args[i]) for i in numbers
    )
    positions = ",".join(str(i) for i in numbers)
    return (
        f"; a number given as an argument is traced, as jit traces it ({said}): make it "
        f"static with {option.flag} {positions} (or `{option.name}: [{positions}]` in the "
        "declaration)"
    )


_TYPECHECKED = re.compile(r"typechecking parameter '(\w+)'")
"""jaxtyping's ``TypeCheckError`` naming the parameter whose value failed its check."""


def _typechecked_scalar_hint(
    err: BaseException, fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
) -> str:
    """How to pass a Python number that a type checker (``window_size: int`` under
    jaxtyping and beartype) refused once ``jit`` traced it: as a static argument."""
    from jxinspect.project.plan import role_option

    found = _TYPECHECKED.search(str(err))
    option = role_option(plan.stage, "static_names")
    if found is None or option is None:
        return ""
    name = found.group(1)
    try:
        bound = inspect.signature(fun).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return ""
    value = bound.get(name)
    if not isinstance(value, (bool, int, float, complex)):
        return ""
    return (
        f"; {name}={value!r} is a Python {type(value).__name__}, which jit traces as an "
        f"array: make it static with {option.flag} {name}"
    )


def _pmap_devices_hint(args: tuple[Any, ...], plan: StagingPlan) -> str:
    """How to give pmap the devices its mapped axis needs, when it has fewer."""
    from jxinspect.tracer import inputs

    mesh = inputs.pmap_mesh(args, plan)
    have = seam.device_count()
    if mesh is None or mesh.size <= have:
        return ""
    return (
        f"; pmap maps an axis of size {mesh.size} over as many devices and JAX has {have}: "
        f"simulate them with --devices {mesh.size} (or `devices: {mesh.size}` in the "
        "declaration)"
    )


def _lower(
    lowerable: Any,
    args: tuple[Any, ...] | None,
    kwargs: dict[str, Any] | None,
    platform: str | None,
) -> _Lowering:
    """Lower JAX's ``Traced`` (``args`` ``None``) or a staged function called with
    ``args``; an error is carried, not raised."""
    progress.stage("lowering")
    try:
        with seam.unfiltered_tracebacks():
            return _Lowering(seam.lower(lowerable, args, kwargs, platform))
    except Exception as err:
        if raised_by_jxinspect(err):
            raise
        return _Lowering(None, describe_exception(err), "".join(traceback.format_exception(err)))


def _traced(program: _Program, lowering: _Lowering, staging: _Staging) -> Traced:
    """The traced program's value: donation and results from JAX's ``Traced``, or from
    the lowering where there is none (pmap)."""
    args, kwargs = staging.call
    plan, stage, wrapped = staging.plan, staging.stage, staging.wrapped
    source = program.traced if program.traced is not None else lowering.lowered
    if source is not None:
        donated = seam.donated_flags(source, args, kwargs, plan.donated)
        out_info = seam.out_info(source)
    else:
        donated = (False,) * seam.arity(program.names_jaxpr)[0]
        out_info = None
    if out_info is None:
        out_info = program.shapes
    failed = lowering.lowered is None  # only then are the declared shardings shown
    declared = (
        _declared_shardings(args, kwargs, plan, len(donated)) if failed and not wrapped else None
    )
    open_outputs = seam.open_outputs(seam.jit_info(program.staged), out_info)
    return Traced(stage, program.jaxpr, program.names_jaxpr, donated, out_info, wrapped,
                  declared=declared, open_outputs=open_outputs)  # fmt: skip


def _declared_shardings(
    args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan, inputs: int
) -> tuple[Any, ...] | None:
    """The sharding each flat input's argument declared (``in_shardings``, else the
    argument's own, as ``f32[8@data]`` makes it), in JAX's order of the dynamic leaves
    (positional, then keyword by name); ``None`` where that order does not give the
    program's inputs one for one."""
    statics, static_names = plan.static_positions(len(args)), set(plan.static_names)
    layouts = _positional_layouts(plan, len(args)) if not statics else None
    declared: list[Any] = []
    for i, arg in enumerate(args):
        if i not in statics:
            leaves = seam.tree_leaves(arg)
            given = _per_leaf(layouts[i], len(leaves)) if layouts else [None] * len(leaves)
            declared += [s or getattr(leaf, "sharding", None) for s, leaf in zip(given, leaves)]
    for name in sorted(kwargs):
        if name not in static_names:
            declared += [getattr(leaf, "sharding", None) for leaf in seam.tree_leaves(kwargs[name])]
    return tuple(declared) if len(declared) == inputs else None


def _positional_layouts(plan: StagingPlan, count: int) -> list[Any] | None:
    """``in_shardings`` per positional argument (one sharding for all, or one each)."""
    layout = plan.in_layout if plan.stage in ("jit", "pjit") else None
    if layout is None:
        return None
    if isinstance(layout, (tuple, list)):
        return list(layout) if len(layout) == count else None
    return [layout] * count


def _per_leaf(layout: Any, count: int) -> list[Any]:
    """An argument's ``in_shardings`` entry for each of its ``count`` leaves: one sharding
    for them all, or a tree of them matching the argument's (``None`` each otherwise)."""
    if layout is None or hasattr(layout, "spec"):
        return [layout] * count
    given = seam.tree_leaves(layout, none_is_leaf=True)  # a sharding is a leaf
    return list(given) if len(given) == count else [None] * count


def _call_paths(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
) -> Paths:
    """The user's path of each flat input of the call, and its static arguments."""
    from jxinspect.tracer.read import paths

    unwrapped = getattr(fun, "__wrapped__", fun)
    return paths.argument_paths(  # type: ignore[return-value]
        unwrapped, tuple(args), kwargs, plan.statics, plan.static_names
    )


def _program_paths(called: Paths, plan: StagingPlan, traced: Traced) -> Paths:
    """:func:`_call_paths` for the inputs the program receives, where staging
    rearranged the call (a wrapper, or the array leaves split from the rest)."""
    from jxinspect.tracer.read import paths

    expected, static_args = called
    if traced.leaves is None or traced.call is None:
        return expected, static_args
    inner, call_args, call_kwargs = traced.call
    mapped = wrapper_paths(traced) or paths.mapped_paths(
        inner, call_args, call_kwargs, traced.leaves, plan.statics, plan.static_names
    )
    return mapped[0], [*static_args, *mapped[1]]


def _staged(traced: Traced, lowering: _Lowering) -> Staged:
    if lowering.lowered is not None:
        return Lowered(traced, lowering.lowered)
    return LoweringFailed(traced, lowering.error or "lowering failed", lowering.traceback)


def recorded(lowering: seam.RunLowering) -> Lowered:
    """A lowering a real run made (``jxinspect record``'s hook), as staging's value:
    under a library's wrapper, with the user's call and the objects the wrapper handed
    the program, as an adapter stages it (its inputs' paths mapped once by
    :func:`wrapper_paths`, as ``lower`` maps them, into ``paths``), and its results
    mapped from the names they carry."""
    traced = Traced(
        stage="pmap" if lowering.stage == "pmap" else "jit",
        jaxpr=lowering.jaxpr,
        names_jaxpr=lowering.names_jaxpr,
        donated=lowering.donated,
        out_info=None,
        wrapped=True,
        recorded=True,
    )
    user, leaves = lowering.wrapper_call, lowering.wrapper_leaves
    if user is not None and leaves is None and lowering.call is not None:
        leaves = tuple(seam.tree_leaves(seam.dynamic_arguments(lowering.call)))
    if user is None or leaves is None or lowering.wrapper is None:
        return Lowered(traced, lowering.lowered)
    from jxinspect.tracer import adapters

    args, kwargs = adapters.recorded_call(lowering.wrapper, user.args, user.kwargs)
    traced = replace(traced, wrapper=lowering.wrapper, leaves=list(leaves),
                     call=(user.fun, args, kwargs))  # fmt: skip
    traced = replace(traced, paths=wrapper_paths(traced))
    return Lowered(replace(traced, results=_recorded_results(traced, user.fun)), lowering.lowered)


def _recorded_results(traced: Traced, fun: Any) -> list[str | None] | None:
    """The user's path of each result of a recorded wrapper's program, from the names
    its results and inputs carry (nothing is traced in the recorded run)."""
    from jxinspect.tracer import adapters

    found = traced.paths[0] if traced.paths else None
    info = seam.debug_info(traced.names_jaxpr)
    if found is None or traced.wrapper is None or info is None or not info.result_paths:
        return None
    said = list(info.result_paths)
    prefixed = seam.prefixes_results(said)
    if prefixed is None:
        prefixed = seam.result_paths_prefixed_in_release()
    names = [seam.normalize_result_path(n, prefixed) if n else None for n in said]
    inputs = list(zip(info.arg_names or [None] * len(found), found))
    return adapters.recorded_results(traced.wrapper, fun, names, inputs)


def wrapper_paths(traced: Traced) -> tuple[list[str | None], list[StaticArg]] | None:
    """Under a library's wrapper (staged through its adapter, or lowered by a recorded
    run: :func:`recorded`), each program input's path in the user's call, found by
    identity among the objects the wrapper handed the program, and the call's static
    values; ``None`` where no wrapper's call is known."""
    from jxinspect.tracer.read import paths

    if traced.wrapper is None or traced.leaves is None or traced.call is None:
        return None
    inner, call_args, call_kwargs = traced.call
    # the wrapper took every argument as it was: none is static to jit
    return paths.mapped_paths(inner, call_args, call_kwargs, traced.leaves)


_PROPAGATION_FOLDER: ContextVar[str | None] = ContextVar("propagation_folder", default=None)


@contextlib.contextmanager
def dumping_propagation(folder: str) -> Iterator[None]:
    """Every compile inside the block also writes Shardy's record of propagation into
    ``folder`` (:func:`seam.partitioner_dump_options`), the persistent cache off: what the
    partitioner's debug run (:mod:`jxinspect.tracer.partitioner_run`) stages under."""
    token = _PROPAGATION_FOLDER.set(folder)
    try:
        yield
    finally:
        _PROPAGATION_FOLDER.reset(token)


def compile(staged: Lowered, dump_assignment: bool = False) -> Compiled | CompileFailed:
    """Compile a lowered program; an error (XLA's own types) is carried, not raised.
    ``dump_assignment``: XLA also writes its buffer assignment, into a folder of its own
    for this compile (for a compiler whose executable keeps none: a TPU's); inside
    :func:`dumping_propagation`, Shardy's record instead."""
    propagation = _PROPAGATION_FOLDER.get()
    try:
        with seam.unfiltered_tracebacks():
            if propagation is not None:
                seam.persistent_cache_off()
                options = seam.partitioner_dump_options(propagation)
                return Compiled(staged, staged.lowered.compile(compiler_options=options))
            if not dump_assignment:
                return Compiled(staged, staged.lowered.compile())
            with tempfile.TemporaryDirectory(prefix="jxinspect-assignment-") as folder:
                options = seam.assignment_dump_options(folder)
                executable = staged.lowered.compile(compiler_options=options)
                return Compiled(staged, executable, seam.dumped_assignment(folder))
    except Exception as err:
        if raised_by_jxinspect(err):
            raise
        return CompileFailed(staged, describe_exception(err))


def _stage_adapted(
    adapter: Any, fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], platform: str | None
) -> Staged:
    """Stage through a library's wrapper (:mod:`jxinspect.tracer.adapters`)."""
    progress.stage("tracing")
    try:
        with seam.unfiltered_tracebacks():
            adapted = adapter.stage(fun, args, kwargs)
            if adapted.pmap is None:
                traced = seam.inner_traced(adapted.traced)
                jaxpr = seam.jaxpr_of(traced)
    except UsageError:
        raise
    except BaseException as err:  # the user's code may raise anything while tracing
        reraise_if_stopping(err)
        if raised_by_jxinspect(err):
            raise
        raise UserCodeError(
            f"tracing through {getattr(adapter, 'WRAPPER', 'its wrapper')} failed: "
            f"{describe_exception(err)}"
        ) from err
    if adapted.pmap is not None:  # built on jax.pmap: staged as a pmap object is
        return _stage_adapted_pmap(adapter, adapted, platform)
    lowering = _lower(traced, None, None, platform)
    donated = seam.donated_flags(traced, adapted.args, adapted.kwargs, None)
    result = Traced(
        "jit", jaxpr, jaxpr, donated, seam.out_info(traced), True, wrapper=adapted.wrapper,
        leaves=adapted.leaves, call=(adapted.fun, adapted.args, adapted.kwargs),
        notes=adapted.notes, results=adapted.results,
    )  # fmt: skip
    return _staged(result, lowering)


def _stage_adapted_pmap(adapter: Any, adapted: Any, platform: str | None) -> Staged:
    inner, inner_args, inner_kwargs = adapted.pmap
    with adapted.context or contextlib.nullcontext():
        staged = _stage_function(inner, inner_args, inner_kwargs, "pmap", {}, platform)
    results, notes = adapter.result_paths(adapted, staged.traced.out_info)
    traced = replace(
        staged.traced,
        results=results,
        wrapper=adapted.wrapper,
        leaves=adapted.leaves,
        call=(adapted.fun, adapted.args, adapted.kwargs),
        notes=(*adapted.notes, *notes),
    )
    return replace(staged, traced=traced)


@dataclass(frozen=True)
class _Split:
    fun: Any
    """Takes the call with every non-array leaf replaced by ``None``: ``args``, ``kwargs``."""
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    leaves: list[Any]
    static: int
    example: str


def _kind(value: Any) -> str:
    """``a function (relu)``, ``a str``: what a leaf is, without its ``repr``."""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    kind = "a function" if callable(value) and name else f"a {type(value).__name__}"
    return f"{kind} ({name})" if callable(value) and name else kind


def _leaf_paths(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
) -> list[tuple[str, Any]]:
    from jxinspect.tracer.read import paths

    return paths.argument_leaves(fun, args, kwargs, plan.statics, plan.static_names)


def _first_non_array(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
) -> tuple[str, Any] | None:
    """The first dynamic leaf that JAX cannot stage, with its path."""
    try:
        leaves = _leaf_paths(fun, args, kwargs, plan)
    except Exception:  # the user's pytree nodes may refuse to flatten
        return None
    return next(((p, v) for p, v in leaves if not seam.is_jax_value(v)), None)


def _split_non_arrays(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
) -> _Split | None:
    """When a dynamic argument holds leaves plain ``jit`` refuses (an activation function
    in an Equinox module, a string), a function that takes the arrays alone, closing over
    the rest, the way ``eqx.filter_jit`` partitions a call; ``None`` when every leaf is a
    JAX value. The parameters keep their names, so the arrays keep their paths."""
    try:
        named = _leaf_paths(fun, args, kwargs, plan)
    except Exception:  # the user's pytree nodes may refuse to flatten
        return None
    others = [(p, v) for p, v in named if not seam.is_jax_value(v)]
    if not others:
        return None
    statics = plan.static_positions(len(args))
    static_names = set(plan.static_names)
    leaves: list[Any] = []
    layout: dict[Any, tuple[Any, list[Any]]] = {}
    new_args = list(args)
    for i, value in enumerate(args):
        if i not in statics:
            new_args[i] = _hollow(value, ("arg", i), layout, leaves)
    new_kwargs = {
        k: v if k in static_names else _hollow(v, ("kw", k), layout, leaves)
        for k, v in kwargs.items()
    }

    @functools.wraps(fun)
    def arrays_only(*call_args: Any, **call_kwargs: Any) -> Any:
        full = list(call_args)
        for i in range(len(full)):
            if ("arg", i) in layout:
                full[i] = _refill(full[i], layout[("arg", i)])
        full_kwargs = {
            k: _refill(v, layout[("kw", k)]) if ("kw", k) in layout else v
            for k, v in call_kwargs.items()
        }
        return fun(*full, **full_kwargs)

    example = ", ".join(f"{p}: {_kind(v)}" for p, v in others[:2])
    more = ", …" if len(others) > 2 else ""
    return _Split(arrays_only, tuple(new_args), new_kwargs, leaves, len(others), example + more)


def _hollow(
    value: Any, key: Any, layout: dict[Any, tuple[Any, list[Any]]], arrays: list[Any]
) -> Any:
    """``value`` with its non-array leaves replaced by ``None`` (recorded in ``layout``
    to be put back); its array leaves are appended to ``arrays``."""
    flat, treedef = seam.tree_flatten(value)
    if all(seam.is_array_leaf(leaf) for leaf in flat):
        arrays.extend(flat)
        return value
    kept = [leaf if seam.is_array_leaf(leaf) else None for leaf in flat]
    arrays.extend(leaf for leaf in kept if leaf is not None)
    layout[key] = (treedef, [None if seam.is_array_leaf(leaf) else leaf for leaf in flat])
    return seam.tree_unflatten(treedef, kept)


def _refill(hollow: Any, layout: tuple[Any, list[Any]]) -> Any:
    treedef, statics = layout
    arrays = iter(seam.tree_leaves(hollow))
    return seam.tree_unflatten(
        treedef, [next(arrays) if static is None else static for static in statics]
    )


def _pmap_inner(jaxpr: seam.Jaxpr) -> seam.Jaxpr:
    """The jaxpr whose debug info names pmap's program: pmap built on jit stages one
    jit of an internal ``_fun``; the older pmap's body where it has debug info (0.7,
    which names the program from it); else ``make_jaxpr``'s own (0.4.35 names the
    program from pmap's own debug info, its body has none)."""
    eqns = seam.equations(jaxpr)
    inner = dict(eqns[0].nested).get("jaxpr") if len(eqns) == 1 else None
    if inner is not None:
        return inner
    body = seam.pmap_body(jaxpr)
    return body if body is not None and seam.debug_info(body) is not None else jaxpr
