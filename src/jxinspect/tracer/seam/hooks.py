"""Recording a real run: a hook on JAX's lowering, and a wait for ``import jax``.

* **The lowering step**: ``pxla.lower_sharding_computation`` is shared by ``jit``,
  ``pjit``, ``shard_map`` and pmap from 0.8 on; the older pmap (0.4.35, 0.7.2) lowers
  through ``pxla.lower_parallel_callable``, which 0.8 and 0.9 keep unused and 0.10 no
  longer has.
* **pmap on shard_map** is JAX's own computation by its debug info: ``_fun`` in
  ``pmap.py`` (0.9, 0.10), ``call_wrapped`` in ``linear_util.py`` (0.8), whose one
  equation is the shard_map; the user's function is the one pmap wraps (its
  ``WrappedFun``'s debug info), else its first operation's frame.
* **JAX's own computations**: a source inside JAX's package; where the debug info names
  none (``<unknown>``, or 0.4.35's derivatives of a jit), the jitted function's own
  code, the code that called ``jit`` (eager ``shard_map`` jits helpers of its own), or
  the name of one of JAX's own jitted functions (``_multiply``).
* **Library wrappers' calls** are read from the wrapper's own frame: Equinox's ``_call``;
  Flax's ``nnx.jit`` from 0.11 a ``JitWrapped`` object (its ``__call__``, ``lower`` and
  ``trace``), in 0.10 (what pip installs beside JAX 0.4.35) a function ``jit_wrapper``
  that holds itself in its closure (:data:`FLAX_JIT_CALLERS`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

from jxinspect.core.recompiles import CompileOptionsSeen
from jxinspect.core.units import source_parts
from jxinspect.tracer.seam import jaxprs
from jxinspect.tracer.seam.objects import Computation, Jaxpr, Lowered, Sharding
from jxinspect.tracer.seam.staging import pmap_global_shapes
from jxinspect.tracer.seam.trees import holds_cycle


@dataclass(frozen=True)
class RunLowering:
    """One computation that a real run lowered, as JAX lowered it (``jxinspect record``)."""

    stage: str
    """``jit`` (which ``pjit``, ``shard_map`` and library wrappers go through) or ``pmap``
    (0.10's pmap, a jit around shard_map; the older pmap, which lowers one replica's
    program with per-device shapes)."""
    jaxpr: Jaxpr
    """The lowered ``Jaxpr``."""
    names_jaxpr: Jaxpr
    """The jaxpr whose debug info names the arguments."""
    name: str
    """The function's name, as JAX gave it to the lowering."""
    source: str | None
    """``step at train.py:12``: JAX's debug info, or for pmap built on shard_map (which
    names only its own ``_fun``) the user's function and line that its first operation
    came from; ``None`` where JAX kept neither (the older pmap)."""
    lowered: Lowered | None
    """A ``jax.stages.Lowered`` around JAX's own lowering of it (``None`` if internal)."""
    donated: tuple[bool, ...]
    shardings: tuple[Sharding, ...]
    """The input shardings JAX lowered with (``NamedSharding``s name their mesh)."""
    signature: str
    """Input types and shardings: two lowerings of one function with equal signatures
    are the same program traced again."""
    internal: bool
    """JAX's own computation (an eager operation, a ``jnp`` function), not the user's."""
    call: JitCall | None = None
    """The call that made JAX lower it, where a ``jit`` call did (not ``.lower()``)."""
    context: tuple[tuple[str, str], ...] = ()
    """The configuration that enters JAX's tracing cache key, as it was when it lowered
    (:func:`trace_context`)."""
    call_site: str | None = None
    """``train.py:40``: the line of the user's code whose call of a jitted function made
    JAX lower it (the first frame out of JAX), where a ``jit`` call did."""
    wrapper_call: JitCall | None = None
    """Under a library's wrapper (``eqx.filter_jit``, ``nnx.jit``), the call as the user
    made it: their function and arguments, whose array leaves are the program's
    (``jit_info`` ``None``)."""
    wrapper: str | None = None
    """That wrapper, as users write it: ``eqx.filter_jit``, ``nnx.jit``."""
    wrapper_leaves: tuple[Any, ...] | None = None
    """The objects that wrapper handed the program, in its order (``None``: not known;
    then the leaves of ``call``'s dynamic arguments are)."""


@dataclass(frozen=True)
class JitCall:
    """A ``jit`` call as the user made it: the function, its arguments as given (static
    values included) and ``jit``'s resolved options (a ``PjitInfo``: its fields are
    named as ``jit``'s keywords, and say which arguments are static or donated)."""

    fun: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    jit_info: Any


def jit_layouts(jit_info: Any) -> dict[str, Any]:
    """``{"in_layout": tree, "out_layout": tree}`` (the option table's roles): the
    ``in_shardings`` and ``out_shardings`` a ``jit`` call's ``PjitInfo`` holds, as the
    user gave them (one sharding, or a tree with ``None``s), each only where given."""
    from jxinspect.tracer.seam.meshes import is_unspecified

    found: dict[str, Any] = {}
    for role, side in (("in_layout", "in"), ("out_layout", "out")):
        treedef = getattr(jit_info, f"{side}_shardings_treedef", None)
        leaves = getattr(jit_info, f"{side}_shardings_leaves", None)
        if treedef is None or leaves is None or all(is_unspecified(x) for x in leaves):
            continue
        found[role] = treedef.unflatten(list(leaves))
    return found


def open_outputs(jit_info: Any, out_tree: Any) -> tuple[bool, ...] | None:
    """Per flat result of ``out_tree``: whether ``jit``'s ``out_shardings`` gave it
    ``None``, leaving its layout to the compiler on purpose (JAX lowers it as it lowers a
    result given nothing: only the ``PjitInfo`` tells them apart). ``None`` where
    ``out_shardings`` was not given or does not fit the results."""
    import jax

    layout = jit_layouts(jit_info).get("out_layout")
    if layout is None or out_tree is None:
        return None
    leaves = jax.tree_util.tree_leaves

    flags: list[bool] = []

    def mark(given: Any, results: Any) -> None:  # in the layout's own leaf order
        flags.extend([given is None] * len(leaves(results)))

    try:
        jax.tree_util.tree_map(mark, layout, out_tree, is_leaf=lambda x: x is None)
    except (ValueError, TypeError):  # not a prefix of the results
        return None
    return tuple(flags)


def static_arguments(call: JitCall) -> list[tuple[str, Any]]:
    """``[("k", True)]``: a ``jit`` call's static arguments as ``jit`` resolved them
    (positions and names), each by its parameter name where the signature gives one."""
    numbers = tuple(getattr(call.jit_info, "static_argnums", ()) or ())
    names = tuple(getattr(call.jit_info, "static_argnames", ()) or ())
    try:
        parameters = list(inspect.signature(call.fun).parameters)
    except (TypeError, ValueError):
        parameters = []
    found = [
        (parameters[i] if i < len(parameters) else str(i), call.args[i])
        for i in sorted(n for n in numbers if 0 <= n < len(call.args))
    ]
    return found + [(k, v) for k, v in call.kwargs.items() if k in names]


def dynamic_arguments(call: JitCall) -> list[Any]:
    """A ``jit`` call's positional arguments that are not static: whose leaves, in
    order, are the program's inputs."""
    numbers = set(getattr(call.jit_info, "static_argnums", ()) or ())
    return [a for i, a in enumerate(call.args) if i not in numbers]


def _jit_call_frame() -> Any:
    """The frame of the ``jit`` call being lowered, ``pjit``'s ``cache_miss`` (its own
    locals ``args``/``kwargs``, its closure's ``fun``/``jit_info`` in every release), or
    ``None`` (lowered from ``.lower()``, ``.trace()`` or the older pmap)."""
    frame: Any = sys._getframe(3)
    for _ in range(40):
        if frame is None:
            return None
        code = frame.f_code
        if code.co_name == "cache_miss" and code.co_filename.endswith("pjit.py"):
            return frame
        frame = frame.f_back
    return None


def _call_site(frame: Any) -> JitCall | None:
    """The ``jit`` call of a ``cache_miss`` frame, as the user made it."""
    found = frame.f_locals
    info = found.get("jit_info")
    if info is None or not isinstance(found.get("args"), tuple):
        return None
    return JitCall(found.get("fun"), found["args"], dict(found.get("kwargs") or {}), info)


def _called_by_jax(frame: Any) -> bool:
    """Whether the code that made a ``jit`` call (the first frame out of ``cache_miss``
    that is not JAX's traceback wrapper) is JAX's own: eager ``shard_map`` jits helpers
    of its own that name no source (``<unknown>``)."""
    caller = frame.f_back
    while caller is not None and caller.f_code.co_filename.endswith("traceback_util.py"):
        caller = caller.f_back
    return caller is not None and _is_jax_file(caller.f_code.co_filename)


@functools.lru_cache(maxsize=1024)
def _is_jax_function_name(name: str) -> bool:
    """Whether a module of JAX's own (``jax._src.numpy.ufuncs``, ...) holds a jitted
    function of this name (``_multiply``): one JAX jits for itself."""
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("jax._src.") or module is None:
            continue
        found: Any = getattr(module, name, None)
        if found is None or not callable(getattr(found, "lower", None)):  # not jit-wrapped
            continue
        code = getattr(getattr(found, "__wrapped__", found), "__code__", None)
        if code is not None and _is_jax_file(code.co_filename):
            return True
    return False


def _is_jax_file(path: str) -> bool:
    import jax

    return path.startswith(os.path.dirname(jax.__file__) + os.sep)


def function_source(fun: Any) -> str:
    """``step at train.py:12`` of a Python function (through ``partial`` and wrappers),
    as JAX's debug info writes it; ``""`` where ``fun`` has no Python code."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    try:
        fun = inspect.unwrap(fun)
    except ValueError:
        return ""
    code = getattr(fun, "__code__", None)
    if code is None:
        return ""
    return f"{getattr(fun, '__name__', code.co_name)} at {code.co_filename}:{code.co_firstlineno}"


def _pmapfunction_source(fun: Any) -> str | None:
    """``ident at train.py:6``: the user's function of a pmap built on shard_map, from
    the ``WrappedFun`` pmap traces (``_fun``'s closure on 0.9 and 0.10, the bound
    ``call_wrapped`` on 0.8), whose debug info names it."""
    try:
        inner = inspect.unwrap(fun)
    except ValueError:
        return None
    holders = [getattr(inner, "__self__", None)]
    for cell in getattr(inner, "__closure__", None) or ():
        try:
            holders.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    for holder in holders:
        source = getattr(getattr(holder, "debug_info", None), "func_src_info", None)
        if isinstance(source, str) and source and source != "<unknown>":
            return source
    return None


def _lowered(computation: Computation, jaxpr: Jaxpr, donated: Sequence[bool]) -> Lowered:
    import jax
    from jax._src import stages

    infos = tuple(stages.ArgInfo(a, bool(d)) for a, d in zip(jaxprs.in_avals(jaxpr), donated))
    out_tree = jax.tree_util.tree_structure([0] * jaxprs.arity(jaxpr)[1])
    return stages.Lowered(computation, infos, out_tree)


def _source(jaxpr: Jaxpr) -> str:
    info = jaxprs.debug_info(jaxpr)
    return (info.func_src_info or "") if info is not None else ""


def _inside_jax(source: str) -> bool:
    import jax

    return f" at {os.path.dirname(jax.__file__)}{os.sep}" in source


def _is_pmap_on_shard_map(jaxpr: Jaxpr, source: str) -> bool:
    """Whether JAX's own computation is pmap's jit around a shard_map of the user's body
    (0.8 on): named after its ``_fun`` in ``pmap.py`` (0.9, 0.10), or after
    ``call_wrapped`` with nothing but that shard_map in it (0.8)."""
    if not pmap_global_shapes():
        return False
    if f"{os.sep}pmap.py:" in source:
        return True
    eqns = jaxpr.eqns
    return len(eqns) == 1 and eqns[0].primitive.name == "shard_map"


def _pmap_body_frame(jaxpr: Jaxpr) -> str | None:
    """``step at train.py:6``: the user's function and line of the first operation in
    pmap's shard_map body that is not the pmap call's own (on 0.8 the operations pmap
    adds around the body, a squeeze of the mapped axis, carry the call's line)."""
    call = jaxprs.user_line(jaxpr.eqns[0]) if jaxpr.eqns else None
    found = jaxprs.first_user_line(jaxpr, besides=call)
    return None if found is None else f"{found.function} at {found.file}:{found.line}"


def _lowering(
    stage: str,
    name: str,
    jaxpr: Jaxpr,
    computation: Computation,
    donated: tuple[bool, ...],
    in_shardings: Sequence[Sharding] | None,
    call_frame: Any,
) -> RunLowering:
    source: str | None = _source(jaxpr)
    internal = _inside_jax(source or "")
    wrapped = None if internal else _library_call(jaxpr, source or "")
    wrapper_call = wrapped.call if wrapped is not None else None
    if internal and _is_pmap_on_shard_map(jaxpr, source or ""):  # around the user's body
        found = _pmapfunction_source(call_frame.f_locals.get("fun")) if call_frame else None
        stage, internal, source = "pmap", False, found or _pmap_body_frame(jaxpr)
        name = source_parts(source)[0] or name
    elif _EQUINOX_JIT in (source or ""):
        # eqx.filter_jit jits a function of its own; the user's sits in its static part
        found = _callable_source(wrapper_call.fun) if wrapper_call is not None else ""
        if not found and call_frame is not None:
            found = _static_user_function(call_frame.f_locals.get("args")) or ""
        source = found or source
    elif source in ("", "<unknown>") and call_frame is not None:
        # no source in the debug info (0.4.35 keeps none for some lowerings; a helper of
        # JAX's may name none): the jitted function's own, or who called jit
        source = function_source(call_frame.f_locals.get("fun"))
        internal = _inside_jax(source) if source else _called_by_jax(call_frame)
    elif not source:
        # no source and no jit call: the derivative or batched form of a jitted function
        # evaluated eagerly (0.4.35's jaxprs then keep no debug info), known by its name
        internal = _is_jax_function_name(name)
    if internal:  # the user's line that made JAX lower it, where a jit call did
        line = _call_site_line(call_frame) if call_frame is not None else None
        return RunLowering(stage, jaxpr, jaxpr, name, source, None, donated, (), "", True,
                        call_site=line)  # fmt: skip
    shardings = tuple(in_shardings or ())
    types = ", ".join(str(aval) for aval in jaxprs.in_avals(jaxpr))
    said = ", ".join(str(s) for s in shardings)
    signature = f"({types}) donated={[i for i, d in enumerate(donated) if d]} [{said}]"
    lowered = _lowered(computation, jaxpr, donated)
    call = _call_site(call_frame) if call_frame is not None and stage == "jit" else None
    return RunLowering(
        stage,
        jaxpr,
        jaxpr,
        name,
        source or None,
        lowered,
        donated,
        shardings,
        signature,
        False,
        call,
        trace_context(),
        _call_site_line(call_frame) if call_frame is not None else None,
        wrapper_call,
        wrapped.wrapper if wrapped is not None else None,
        wrapped.leaves if wrapped is not None else None,
    )


_EQUINOX_PACKAGE = f"{os.sep}equinox{os.sep}"
"""Equinox's own files: its wrappers' frames are not the user's call site."""
_EQUINOX_JIT = f"{_EQUINOX_PACKAGE}_jit.py:"
"""Where Equinox's ``filter_jit`` defines the function it jits (every release)."""


def _static_user_function(args: Any) -> str | None:
    """``f at train.py:12``: the first Python function among a call's static leaves that
    is not Equinox's own (``filter_jit`` passes the user's function there)."""
    import jax

    if not isinstance(args, tuple):
        return None
    for leaf in jax.tree_util.tree_leaves(args[1:]):
        found = function_source(leaf) if callable(leaf) else ""
        if found and f"{os.sep}equinox{os.sep}" not in found:
            return found
    return None


def _callable_source(fun: Any) -> str:
    """``f at train.py:12`` of what a wrapper was given: a function (through wrappers),
    a bound method's function, or a callable object's ``__call__`` (an ``eqx.Module``)."""
    found = function_source(fun) or function_source(getattr(fun, "__func__", None))
    if not found and callable(fun) and not inspect.isroutine(fun):
        found = function_source(type(fun).__call__)
    return found


_FLAX_NNX = f"{os.sep}flax{os.sep}nnx{os.sep}"
"""Flax NNX's own files: its wrappers' frames are not the user's call site."""
_FLAX_JIT = f"{_FLAX_NNX}transforms{os.sep}compilation.py"
"""Where Flax's ``nnx.jit`` splits the call it hands its inner ``jit``."""
FLAX_JIT_CALLERS = {"__call__": "self", "lower": "self", "trace": "self",
                    "jit_wrapper": "jit_wrapper"}  # fmt: skip
"""The functions of :data:`_FLAX_JIT` that call ``nnx.jit``'s inner ``jit`` with the
user's call in their ``args``/``kwargs`` and what they hand it in ``pure_args``/
``pure_kwargs``, each with the local that holds the wrapper: ``JitWrapped``'s methods
(``self``, flax 0.11 on, the user's function its ``fun``), or flax 0.10's function
``jit_wrapper`` (itself, in its closure; the user's function its ``__wrapped__``)."""


def flax_jit_function(name: str, local: dict[str, Any]) -> Any:
    """The user's function of an ``nnx.jit`` wrapper whose frame is ``name`` in
    :data:`_FLAX_JIT` (``local``: its locals), or ``None``."""
    wrapper = local.get(FLAX_JIT_CALLERS.get(name, ""))
    return getattr(wrapper, "fun", None) or getattr(wrapper, "__wrapped__", None)


@dataclass(frozen=True)
class _Wrapped:
    """A library wrapper's call being lowered: the user's call, and the objects the
    wrapper handed the program (``None``: not known)."""

    wrapper: str
    call: JitCall
    leaves: tuple[Any, ...] | None


def _library_call(jaxpr: Jaxpr, source: str) -> _Wrapped | None:
    """The call of an ``eqx.filter_jit`` or ``nnx.jit`` function that made JAX lower
    ``jaxpr``, from the library's own frame among the callers (a call or ``.lower()``
    alike): Equinox's ``_call`` (a function in Equinox 0.13, a method of the wrapper
    before) holds the wrapper, ``args``, ``kwargs`` and the ``dynamic_donate`` /
    ``dynamic_nodonate`` it jits; Flax's (:data:`FLAX_JIT_CALLERS`) hold the wrapper,
    ``args``, ``kwargs`` and the ``pure_args``/``pure_kwargs`` it jits. Only
    the nearest such frame, and only when the program is its own: Equinox's function
    (``source``), or the user's function under Flax's, with one input per leaf handed."""
    frame: Any = sys._getframe(1)
    found: _Wrapped | None = None
    for _ in range(60):
        if frame is None:
            return None
        code, local = frame.f_code, frame.f_locals
        file = code.co_filename
        if code.co_name == "_call" and file.endswith(_EQUINOX_JIT.rstrip(":")):
            if _EQUINOX_JIT not in source:
                return None
            wrapper = local.get("jit_wrapper", local.get("self"))
            fun = getattr(wrapper, "__wrapped__", None)
            handed = ("dynamic_donate", "dynamic_nodonate")
            found = _user_call("eqx.filter_jit", fun, local, handed)
            break
        if code.co_name in FLAX_JIT_CALLERS and file.endswith(_FLAX_JIT):
            fun = flax_jit_function(code.co_name, local)
            if fun is None or _callable_source(fun) != source:
                return None
            found = _user_call("nnx.jit", fun, local, ("pure_args", "pure_kwargs"))
            break
        frame = frame.f_back
    del frame
    if found is not None and found.leaves is not None:
        if len(found.leaves) != len(jaxprs.in_avals(jaxpr)):
            return replace(found, leaves=None)
    return found


def _user_call(
    wrapper: str, fun: Any, local: dict[str, Any], handed: tuple[str, str]
) -> _Wrapped | None:
    """The user's call in the locals of a wrapper's frame (``local``), and the leaves of
    the two values ``handed`` names (what it gives its inner ``jit``; ``None`` where
    not there). ``None`` where the call holds a reference cycle (``nnx.jit(graph=True)``
    takes a module that holds itself): no pytree of it can be flattened."""
    import jax

    args, kwargs = local.get("args"), local.get("kwargs")
    if fun is None or not isinstance(args, tuple) or not isinstance(kwargs, dict):
        return None
    first, second = (local.get(name) for name in handed)
    if holds_cycle((args, kwargs, first, second)):  # Flax's graph mode takes one: not known
        return None
    leaves = None if first is None else tuple(jax.tree_util.tree_leaves((first, second)))
    return _Wrapped(wrapper, JitCall(fun, args, dict(kwargs), None), leaves)


def _call_site_line(frame: Any) -> str | None:
    """``file.py:40``: the first frame out of a ``cache_miss`` frame that is neither JAX's nor
    a library wrapper's (Equinox's, Flax NNX's)."""
    caller = frame.f_back
    while caller is not None and (
        _is_jax_file(caller.f_code.co_filename)
        or caller.f_code.co_filename == __file__
        or _EQUINOX_PACKAGE in caller.f_code.co_filename
        or _FLAX_NNX in caller.f_code.co_filename
    ):
        caller = caller.f_back
    return f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller is not None else None


CONTEXT_OPTIONS = (
    "jax_enable_x64", "jax_default_device", "jax_default_matmul_precision",
    "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion", "jax_default_prng_impl",
    "jax_threefry_partitionable", "jax_use_shardy_partitioner", "jax_disable_jit",
)  # fmt: skip
"""Configuration options that enter JAX's tracing cache key in every supported release
(a change of one traces again: ``jax_explain_cache_misses`` says "Tracing context
doesn't match"); those a release lacks are left out."""


def trace_context() -> tuple[tuple[str, str], ...]:
    """The :data:`CONTEXT_OPTIONS` this release has, and the mesh in context (``jax.set_mesh``
    or ``with mesh:``, 0.5 on), as text: read, never changed."""
    import jax

    values = jax.config.values
    found = [(name, repr(values[name])) for name in CONTEXT_OPTIONS if name in values]
    get_mesh = getattr(jax.sharding, "get_abstract_mesh", None)
    if get_mesh is not None:
        try:
            mesh = get_mesh()
        except Exception:  # no mesh machinery in this context
            mesh = None
        shape = getattr(mesh, "shape_tuple", None)
        if shape:
            found.append(("mesh", ",".join(f"{name}={size}" for name, size in shape)))
    return tuple(found)


DURATION_EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
    "/jax/compilation_cache/compile_time_saved_sec": "saved",
}
"""JAX's own duration events of a compile (``jax.monitoring``, the same in every
supported release), by the phase each measures (``saved``: what a persistent cache hit
saved, reported after the hit instead of a backend compile)."""

CACHE_EVENTS = {
    "/jax/compilation_cache/compile_requests_use_cache": "used",
    "/jax/compilation_cache/cache_hits": "hit",
}
"""JAX's own events of the persistent compilation cache (the same names in every
supported release; a release fact test checks them in JAX's source): a compile asked the
cache (after the lowering, before the lookup), and the cache had it. A miss is a compile
that asked and then compiled; one that did not ask had the cache off."""

CACHE_SETTINGS = (
    "jax_compilation_cache_dir",
    "jax_enable_compilation_cache",
    "jax_persistent_cache_min_compile_time_secs",
)
"""The configuration that decides whether a compile uses the persistent cache and whether
what it compiled is written there."""


def cache_settings() -> dict[str, object]:
    """The values of :data:`CACHE_SETTINGS` now (read, never changed)."""
    import jax

    values = jax.config.values
    return {name: values.get(name) for name in CACHE_SETTINGS}


_EVENT_LISTENERS: list[Callable[[str], object]] = []


def install_cache_listener(callback: Callable[[str], object]) -> Callable[[], None]:
    """Call ``callback(kind)`` for each persistent-cache event JAX records
    (:data:`CACHE_EVENTS`), until the function returned is called; one listener of
    JAX's (registered once) only reads what JAX reports."""
    import jax

    if not _EVENT_LISTENERS:

        def listener(event: str, *args: Any, **kwargs: Any) -> None:
            kind = CACHE_EVENTS.get(event)
            if kind is not None:
                for each in list(_EVENT_LISTENERS):
                    each(kind)

        jax.monitoring.register_event_listener(listener)
    _EVENT_LISTENERS.append(callback)
    return lambda: _EVENT_LISTENERS.remove(callback)


_DURATION_LISTENERS: list[Callable[[str, float], object]] = []


def install_duration_listener(callback: Callable[[str, float], object]) -> Callable[[], None]:
    """Call ``callback(phase, seconds)`` for each trace, lowering and backend compile JAX
    times (:data:`DURATION_EVENTS`), until the function returned is called; one listener
    of JAX's (registered once) only reads what JAX reports."""
    import jax

    if not _DURATION_LISTENERS:

        def listener(event: str, duration: float, *args: Any, **kwargs: Any) -> None:
            phase = DURATION_EVENTS.get(event)
            if phase is not None:
                for each in list(_DURATION_LISTENERS):
                    each(phase, float(duration))

        jax.monitoring.register_event_duration_secs_listener(listener)
    _DURATION_LISTENERS.append(callback)
    return lambda: _DURATION_LISTENERS.remove(callback)


_BUILD_OPTIONS = ("exec_time_optimization_effort", "memory_fitting_effort", "optimization_level",
                  "memory_fitting_level", "use_spmd_partitioning", "use_shardy_partitioner",
                  "use_auto_spmd_partitioning")  # fmt: skip
"""The executable build options JAX sets from its configuration (those a release has)."""

_COMPILE_HOOKS: list[
    tuple[Callable[[], object], Callable[[object, CompileOptionsSeen], object]]
] = []


def install_compile_options_hook(
    on_start: Callable[[], object], on_end: Callable[[object, CompileOptionsSeen], object]
) -> Callable[[], None]:
    """Around each compile JAX asks of XLA (``jax._src.compiler.compile_or_get_cached``,
    which JAX calls through its module on 0.4.35 to 0.12.1): ``on_start()`` before it, and
    ``on_end(what on_start gave, the options seen)`` after it, until the function returned
    is called. The compile is JAX's, unchanged: its arguments passed on as given, its
    result or error returned as is; what is read of the options is read after it."""
    from jax._src import compiler

    if not _COMPILE_HOOKS:
        original = compiler.compile_or_get_cached

        @functools.wraps(original)
        def compile_or_get_cached(
            backend: Any,
            computation: Any,
            devices: Any,
            compile_options: Any,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            started = _started()
            try:
                return original(backend, computation, devices, compile_options, *args, **kwargs)
            finally:
                if started:
                    _ended(started, _options_seen(compile_options, devices, backend))

        compiler.compile_or_get_cached = compile_or_get_cached
    hook = (on_start, on_end)
    _COMPILE_HOOKS.append(hook)
    return lambda: _COMPILE_HOOKS.remove(hook)


def _started() -> list[tuple[Callable[[object, CompileOptionsSeen], object], object]]:
    """Each installed hook told a compile starts: its end callback and what it gave."""
    started = []
    for on_start, on_end in list(_COMPILE_HOOKS):
        with contextlib.suppress(Exception):  # never an error of the user's compile
            started.append((on_end, on_start()))
    return started


def _ended(
    started: list[tuple[Callable[[object, CompileOptionsSeen], object], object]],
    seen: CompileOptionsSeen,
) -> None:
    for on_end, token in started:
        with contextlib.suppress(Exception):  # never an error of the user's compile
            on_end(token, seen)


def _options_seen(options: Any, devices: Any, backend: Any) -> CompileOptionsSeen:
    """JAX's own digest of compile ``options`` (as its key hashes them for ``backend``:
    without the device assignment on a GPU) and what they hold by name; what cannot be
    read is left out, never an error of the user's compile."""
    import hashlib

    from jax._src import cache_key

    digest = None
    try:
        hashed = hashlib.sha256()
        strip = getattr(backend, "platform", "") == "gpu"
        cache_key._hash_serialized_compile_options(hashed, options, strip_device_assignment=strip)
        digest = hashed.hexdigest()
    except Exception:  # a release whose key is made otherwise: not said
        pass
    fields: list[tuple[str, str]] = []
    try:
        given = sorted(f"{name}={value}" for name, value in options.env_option_overrides)
        fields.append(("compiler options", " ".join(given)))
        ids = ",".join(str(getattr(d, "id", d)) for d in getattr(devices, "flat", devices))
        fields.append(("devices", f"{options.num_replicas} replicas × "
                                  f"{options.num_partitions} partitions on {ids}"))  # fmt: skip
        build = options.executable_build_options
        kept = [f"{name}={getattr(build, name)}" for name in _BUILD_OPTIONS if hasattr(build, name)]
        fields.append(("build options", ", ".join(kept)))
    except Exception:  # options this release spells otherwise: fewer fields
        pass
    return CompileOptionsSeen(digest, tuple(fields))


_HOOK = {"installed": False}
_LISTENERS: list[
    tuple[Callable[[RunLowering], object], Callable[[str | None, Exception], object]]
] = []


def install_lowering_hook(
    callback: Callable[[RunLowering], object], failed: Callable[[str | None, Exception], object]
) -> Callable[[], None]:
    """Call ``callback(RunLowering)`` after each computation JAX lowers in this process,
    until the function returned is called (the hook itself stays, passing through).

    It wraps ``pxla.lower_sharding_computation``, the one lowering step that ``jit``,
    ``pjit``, ``shard_map``, the 0.10 ``pmap`` and every wrapper built on them share, and
    ``pxla.lower_parallel_callable`` of the older pmap; what JAX returns is returned
    unchanged, and the wrapper's frame is in none of the locations JAX writes.
    ``callback`` runs only when JAX lowers (a cache miss), never per call: JAX also
    enters its lowering step where every cache below it answers (a dispatch miss whose
    input shardings are only spelled otherwise, ``P()`` and ``P(None, None)``), and such
    a call, which JAX's own lowering event does not follow, lowered and compiled nothing
    (:func:`_lowered_anew`). An
    ``Exception`` from reading the lowering or from ``callback`` goes to ``failed(the
    function's name, error)`` and no further: recording never breaks the run.
    """
    from jax._src import source_info_util
    from jax._src.interpreters import pxla

    _LISTENERS.append((callback, failed))
    if _HOOK["installed"]:
        return lambda: _LISTENERS.remove((callback, failed))
    _HOOK["installed"] = True
    # the hook's frame is no frame of the user's: JAX leaves it out of the locations it
    # writes, as it leaves out its own (it was in every recorded module's debug info)
    source_info_util.register_exclusion(__file__)

    install_duration_listener(_count_lowering)
    pxla.lower_sharding_computation = _hooked("jit", pxla.lower_sharding_computation)
    if hasattr(pxla, "lower_parallel_callable"):  # the older pmap
        pxla.lower_parallel_callable = _hooked("pmap", pxla.lower_parallel_callable)
    return lambda: _LISTENERS.remove((callback, failed))


def _report(
    stage: str,
    signature: inspect.Signature,
    computation: Computation,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """Hand a lowering JAX made to each listener; an ``Exception`` reading it or in a
    listener goes to the listeners' ``failed`` (frames: ``_jit_call_frame`` counts this
    one and ``_hooked``'s wrapper above it)."""
    name: str | None = None
    try:
        bound = signature.bind(*args, **kwargs).arguments
        name = str(bound.get("fun_name", bound.get("name")))
        closed = bound.get("closed_jaxpr")
        if closed is None:
            return
        donated = tuple(bool(d) for d in bound["donated_invars"])
        shardings = bound.get("in_shardings", bound.get("in_axes"))
        frame = _jit_call_frame()
        lowering = _lowering(stage, name, closed.jaxpr, computation, donated, shardings, frame)
        del frame
    except Exception as err:  # recording must never break the user's program
        for _, failing in list(_LISTENERS):
            with contextlib.suppress(Exception):
                failing(name, err)
        return
    for listening, failing in list(_LISTENERS):
        try:
            listening(lowering)
        except StopTheCall:
            raise
        except Exception as err:
            with contextlib.suppress(Exception):
                failing(name, err)


class StopTheCall(RuntimeError):
    """Raised by a lowering listener that must stop the user's call before its program
    compiles and runs (the guard: the processes would run different programs): the one
    error the hook lets through to the user."""


def _hooked(stage: str, original: Callable[..., Computation]) -> Callable[..., Computation]:
    """JAX's lowering step ``original``, reporting each computation it returns."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def lower(*args: Any, **kwargs: Any) -> Computation:
        before = _lowered_anew()
        computation = original(*args, **kwargs)
        if _lowered_anew() != before:
            _report(stage, signature, computation, args, kwargs)
        return computation

    return lower


_LOWERINGS = threading.local()
"""This thread's count of the modules JAX has lowered (its own lowering events)."""


def _count_lowering(phase: str, seconds: float) -> None:
    if phase == "lower":
        _LOWERINGS.count = _lowered_anew() + 1


def _lowered_anew() -> int:
    """How many modules JAX has lowered on this thread: its lowering step times each
    module it makes (``jaxpr_to_mlir_module_duration``, in ``_cached_lowering_to_hlo``
    and the older pmap's lowering alike) and nothing a cache answered. Where it made
    none, it compiles none either: its compile cache is keyed by that same module."""
    count: int = getattr(_LOWERINGS, "count", 0)
    return count


def when_jax_imported(action: Callable[[], object]) -> None:
    """Run ``action()`` once JAX has been imported: now, or right after ``import jax``
    finishes (a finder that steps aside for every other module)."""
    if "jax" in sys.modules and hasattr(sys.modules["jax"], "jit"):
        action()
        return
    import importlib.abc
    import importlib.machinery

    class _AfterJax(importlib.abc.MetaPathFinder):
        def find_spec(
            self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
        ) -> ModuleSpec | None:
            if name != "jax":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            loader = spec.loader
            run = loader.exec_module

            def exec_module(module: ModuleType) -> None:
                run(module)
                action()

            loader.exec_module = exec_module  # type: ignore[method-assign]
            return spec

    sys.meta_path.insert(0, _AfterJax())


def cache_key_environment() -> dict[str, str] | None:
    """The parts of JAX's persistent-cache key besides the program, as JAX would hash
    them in this process now: ``jaxlib`` (its version), ``backend`` (platform and platform
    version), the ``cache folder`` where JAX writes it into the compile options (the one
    part of them read), and ``XLA flags`` (``XLA_FLAGS``,
    ``LIBTPU_INIT_ARGS``, the command line's ``--xla…`` and JAX's registered prefixes,
    less those JAX leaves out of the key, sorted). The flags JAX leaves out are its own
    list: a module constant from 0.5, a constant of ``_hash_xla_flags`` before. ``None``
    while no backend has started (reading it would start one)."""
    import os
    import sys

    from jax._src import cache_key

    from jxinspect.tracer.seam.devices import backend_started
    from jxinspect.tracer.seam.release import jaxlib_version

    if not backend_started():
        return None
    from jax._src import xla_bridge

    excluded = getattr(cache_key, "xla_flags_to_exclude_from_cache_key", None)
    if excluded is None:  # 0.4.x: a list local to the function, among its constants
        consts = cache_key._hash_xla_flags.__code__.co_consts
        excluded = [c for k in consts for c in (k if isinstance(k, tuple) else (k,))
                    if isinstance(c, str) and c.startswith("--xla_")]  # fmt: skip
    prefixes = tuple(cache_key.get_flag_prefixes())
    flags = [*os.getenv("XLA_FLAGS", "").split(), *os.getenv("LIBTPU_INIT_ARGS", "").split()]
    flags += [a for a in sys.argv if a.startswith("--xla") or (prefixes and a.startswith(prefixes))]
    left_out = set(excluded)
    kept = sorted(f for f in flags if f.split("=")[0] not in left_out)
    backend = xla_bridge.get_backend()
    found = {
        "jaxlib": jaxlib_version(),
        "backend": f"{backend.platform} {backend.platform_version}",
        "XLA flags": " ".join(kept),
    }
    folder = _folder_in_compile_options()
    if folder is not None:
        found["cache folder"] = folder
    return found


def _folder_in_compile_options() -> str | None:
    """The cache folder as JAX writes it into every compile's options (the XLA caches it
    keeps beside its own, ``jax_persistent_cache_enable_xla_caches``: from 0.5 on), and so
    into every key: the same program cached under another folder path misses. ``None``
    where it does not (0.4.x, or those caches off)."""
    import jax

    values = jax.config.values
    enabled = values.get("jax_persistent_cache_enable_xla_caches")
    folder = values.get("jax_compilation_cache_dir")
    if not folder or not isinstance(enabled, str) or not enabled:
        return None
    caches = ("xla_gpu_kernel_cache_file", "xla_gpu_per_fusion_autotune_cache_dir")
    return str(folder) if enabled == "all" or any(c in enabled for c in caches) else None
