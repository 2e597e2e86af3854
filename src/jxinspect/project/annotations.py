"""Example inputs read from the shapes a target's code already declares.

When a target is given no inputs (no ``args``, no ``args_from``), its signature's
annotations say what to call it with: jaxtyping arrays (``Float[Array, "batch seq"]``),
``NamedTuple``s, dataclasses and ``eqx.Module``s whose fields are so annotated,
``tuple[...]`` and ``TypedDict``s of those. This module turns them into the spec
language's own values (:class:`~jxinspect.project.spec.ArraySpec`,
:class:`~jxinspect.project.spec.Struct`, tuples, dicts and literals), so the tracer's one
builder makes ``ShapeDtypeStruct``s of them as it does of ``--args``.

Imports no JAX and no jaxtyping: a jaxtyping array type is read by its own parsed
attributes (``dtype``, ``dtypes``, ``dims``, ``dim_str``), on the annotation objects the
user's module made, falling back to reading ``dim_str`` where a release spells its dims
otherwise. String annotations (``from __future__ import annotations``) are resolved by
:func:`typing.get_type_hints` in the namespace of the module that wrote them. Nothing of
the dimension text is evaluated: a symbolic dim (``"n+1"``) is read by a walker that
accepts names, ints and ``+ - * //``.

What is chosen on the user's behalf is said in :class:`~jxinspect.core.model.InputsFrom`:
the sizes used, the dtype each abstract family stands for (``Float`` → ``f32`` unless the
``dtype`` option says otherwise, ``Int`` → ``i32``, ``Complex`` → ``c64``, ``Shaped`` and
``Num`` → the float dtype, ``Key`` → a typed PRNG key), the static arguments' values, the
arguments left to their defaults.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import operator
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jxinspect.core import dtypes
from jxinspect.core.errors import UsageError
from jxinspect.core.model import InputsFrom
from jxinspect.project import hints as type_hints
from jxinspect.project.optimizers import StateUse, state_uses
from jxinspect.project.options import closest
from jxinspect.project.spec import (
    ArraySpec,
    Constructed,
    Dim,
    DimValue,
    ModelLibrary,
    OptimizerLibrary,
    OptimizerState,
    Seed,
    Struct,
    dim_text,
)
from jxinspect.project.targets import known_name

KEY_DTYPE = "key"
"""The :class:`ArraySpec` dtype of a typed PRNG key of JAX's default implementation
(``jax.random.key``): the tracer builds it."""

_PREFERRED = ("float32", "int32", "uint32", "complex64", "bool")
"""Where an abstract family allows several dtypes (and not the float one chosen), the
first of these it allows: ``Int`` → int32, ``UInt`` → uint32, ``Complex`` → complex64."""

_SCALAR_EXAMPLES: dict[type, str] = {bool: "True", int: "3", float: "2.0", complex: "1j"}
"""A value of each Python scalar type, to advise ``--kwargs "NAME=VALUE"`` with: a
Python scalar annotation is never built (it is static or traced as the user decides)."""

INPUT_HELP = (
    'give example inputs with --args "f32[8,128], 3" (and --kwargs "scale=2.0"), '
    "--args-from module:make_args, or a module-level "
    'JXINSPECT = {"%s": {"args": "..."}} declaration'
)


class _Missing(Exception):
    """An argument (or a field of one) the annotations cannot build: why, and the value
    to give it by (``--kwargs "NAME=EXAMPLE"``) where one can be said, or the expression
    that builds it in an ``--args-from`` maker (a model, an optimizer state)."""

    def __init__(
        self,
        why: str,
        example: str | None = None,
        maker: str | None = None,
        note: str = "",
        *,
        static: bool = False,
    ) -> None:
        super().__init__(why)
        self.example = example
        self.static = static
        """A static argument: given by a value (``3``), not an array spec."""
        self.maker = maker
        """What builds it in a maker, instead of ``--kwargs``: never an array spec."""
        self.note = note
        """Said after the maker (how a constructor's int can be sized instead)."""


@dataclass
class _Reading:
    """What one inference has used and chosen so far."""

    dims: Mapping[str, DimValue]
    float_dtype: str
    used: dict[str, str] = field(default_factory=dict)
    unsized: dict[str, None] = field(default_factory=dict)
    families: dict[str, str] = field(default_factory=dict)
    choices: list[str] = field(default_factory=list)
    mentioned: set[str] = field(default_factory=set)
    """Every dimension name an annotation read names, a union's every member's too."""

    def choose(self, text: str) -> None:
        if text not in self.choices:
            self.choices.append(text)

    def trial(self) -> _Reading:
        """A reading of one union member: its choices kept apart until it is taken."""
        return _Reading(self.dims, self.float_dtype, mentioned=self.mentioned)

    def take(self, trial: _Reading) -> None:
        """Keep what a union member's reading used and chose."""
        self.used.update(trial.used)
        self.unsized.update(trial.unsized)
        for family, dtype in trial.families.items():
            self.families.setdefault(family, dtype)
        for text in trial.choices:
            self.choose(text)


@dataclass(frozen=True)
class Inferred:
    """A call built from annotations: the spec language's values, and what was chosen."""

    args: tuple[object, ...]
    kwargs: dict[str, object]
    said: InputsFrom


def is_array_annotation(hint: Any) -> bool:
    """Whether ``hint`` is a jaxtyping array type (``Float[Array, "n"]``), by its own
    parsed attributes."""
    return isinstance(hint, type) and all(
        hasattr(hint, name) for name in ("dtypes", "dim_str", "array_type", "dtype")
    )


def infer_inputs(
    fun: Callable[..., Any],
    *,
    given: Mapping[str, object],
    dims: tuple[tuple[str, DimValue], ...],
    float_dtype: str | None,
    statics: frozenset[int],
    static_names: tuple[str, ...],
    where: str,
    shared_dims: frozenset[str] = frozenset(),
    owner: type | None = None,
    bound: inspect.Signature | None = None,
) -> Inferred:
    """The call of ``fun`` its annotations describe. ``given``: values the user gave by
    name (they take their parameter's place); ``statics``/``static_names``: the static
    arguments, which take their default or their first ``Literal`` value;
    ``shared_dims``: dims every target is given (the configuration's ``defaults``), not
    worth a note where a target does not use them; ``owner``: the class of a method
    target (``Model.__call__``), whose unannotated ``self`` is built as that class is;
    ``bound``: the parameters a call passes where a ``functools.partial`` binds some of
    ``fun``'s (:func:`jxinspect.project.function.bound_signature`): only those are built.
    Raises one :class:`UsageError`
    naming every argument it cannot build and every dimension that has no size."""
    signature = bound or _signature(fun, where)
    hints, unresolved = type_hints.resolve(fun)
    first = next(iter(signature.parameters.values()), None)
    if owner is not None and first is not None and first.name == "self" and "self" not in hints:
        hints["self"] = _Owner(owner)
    reading = _Reading(dict(dims), dtypes.BY_SHORT[float_dtype or "f32"].name)
    uses = state_uses(fun, list(signature.parameters))
    args, kwargs, missing = _call(
        signature, _Hints(hints, unresolved, uses), given, statics, static_names, reading
    )
    if missing:
        raise UsageError(_missing_message(where, missing, bool(hints), signature))
    _check_dims(where, reading, shared_dims)
    said = InputsFrom(
        source="annotations",
        dims=dict(reading.used),
        dtypes=dict(reading.families),
        choices=tuple(reading.choices),
        given=tuple(name for name in given if name in signature.parameters),
    )
    return Inferred(tuple(args), kwargs, said)


def _signature(fun: Callable[..., Any], where: str) -> inspect.Signature:
    """``fun``'s signature; one error line where Python knows none."""
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError) as err:
        raise UsageError(
            f"no example inputs for {where}: its signature is unknown ({err}); "
            + INPUT_HELP % where.rpartition(":")[2]
        ) from None


@dataclass(frozen=True)
class _Hints:
    """What a target's code says of its parameters: resolved annotations, why each one
    that could not be resolved was not, and the optimizer states it passes to an
    optimizer."""

    resolved: dict[str, Any]
    unresolved: dict[str, str]
    states: dict[str, StateUse]


def _call(
    signature: inspect.Signature,
    said: _Hints,
    given: Mapping[str, object],
    statics: frozenset[int],
    static_names: tuple[str, ...],
    reading: _Reading,
) -> tuple[list[object], dict[str, object], dict[str, _Missing]]:
    """The positional and keyword arguments built, and why each that could not be was not
    (:func:`infer_inputs`); ``reading`` keeps what was chosen. An optimizer state is built
    last, over the value its parameters argument was given or built as."""
    hints = said.resolved
    missing: dict[str, _Missing] = {}
    values: dict[str, object] = {}
    keywords: set[str] = set()
    states: dict[str, StateUse] = {}
    positional = True
    for position, param in enumerate(signature.parameters.values()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        name = param.name
        static = position in statics or name in static_names
        has_default = param.default is not param.empty
        if name in given:
            value: object = given[name]
        elif static:
            try:
                value = _static_value(hints.get(name, param.empty), param.default)
            except _Missing as why:
                missing[name] = why
                continue
            taken = "its default" if has_default else "its first Literal value"
            reading.choose(f"{name}={value!r} (static: {taken})")
        elif has_default:
            reading.choose(f"{name} left to its default")
            positional = False
            continue
        else:
            try:
                value = _annotated(name, said, reading)
            except _Missing as why:
                missing[name] = why
                continue
            if value is _STATE:  # built below, over its parameters' value
                states[name] = said.states[name]
        values[name] = value
        if not positional or param.kind == param.KEYWORD_ONLY:
            keywords.add(name)
    for name, use in states.items():
        try:
            values[name] = _optimizer_state(use, values, hints, reading)
        except _Missing as why:
            missing[name] = why
    args = [value for name, value in values.items() if name not in keywords]
    kwargs = {name: value for name, value in values.items() if name in keywords}
    order = list(signature.parameters)
    return args, kwargs, dict(sorted(missing.items(), key=lambda item: order.index(item[0])))


_STATE = object()
"""What :func:`_annotated` returns for an optimizer state: built last, over the value of
the parameters it is the state of."""


def _annotated(name: str, said: _Hints, reading: _Reading) -> object:
    """The argument ``name`` built from its annotation, or :data:`_STATE` for an
    optimizer state its annotation does not build; raises why it cannot be built."""
    if name in said.unresolved and name not in said.states:
        raise _Missing(f"its annotation could not be resolved: {said.unresolved[name]}")
    try:
        if name not in said.resolved:
            raise _Missing("no annotation")
        return _build(said.resolved[name], name, reading)
    except _Missing as why:
        if name not in said.states:
            raise _object_maker(why, said.resolved.get(name)) from None
        return _STATE


def _object_maker(why: _Missing, hint: Any) -> _Missing:
    """An argument annotated as a NamedTuple or dataclass that cannot be built is given
    by a maker that builds that class (never by an array spec)."""
    hint = _strip_annotated(hint)
    struct = isinstance(hint, type) and (
        dataclasses.is_dataclass(hint) or (issubclass(hint, tuple) and hasattr(hint, "_fields"))
    )
    if not struct or why.maker or why.example:
        return why
    return _Missing(str(why), maker=f"{hint.__name__}(...)")


def _optimizer_state(
    use: StateUse, values: dict[str, object], hints: dict[str, Any], reading: _Reading
) -> OptimizerState:
    """The state ``use``'s optimizer builds over its parameters' value; else why not, and
    the maker that builds it (never an array spec: a state is the optimizer's tree)."""
    params = values.get(use.params) if use.params else None
    model = hints.get(use.params or "") if use.params else None
    library = _model_library(model) if isinstance(model, type) else None
    kind = "an nnx.Optimizer" if use.nnx else "an optimizer state"
    why = f"{kind}, passed to {use.optimizer}.update"
    maker = _state_maker(use, library, model, params)
    if use.transform is None:
        where = ("the module holds no nnx.Optimizer(model, tx, wrt=...) call or one optax "
                 "optimizer" if use.nnx else "its optimizer is not the module's own")  # fmt: skip
        raise _Missing(f"{why}; {where}", maker=maker)
    if use.params is None:
        raise _Missing(f"{why}, over parameters the step does not name", maker=maker)
    if params is None:
        raise _Missing(f"{why}, over {use.params}, which is not built either", maker=maker)
    if use.nnx and not (isinstance(params, Constructed) and params.library == "nnx"):
        raise _Missing(f"{why}, over {use.params}, which is no nnx.Module built", maker=maker)
    optimizer: OptimizerLibrary = (
        "nnx" if use.nnx else "equinox" if library == "equinox" else "optax"
    )
    reading.choose(f"{use.state}: built by {maker}, nothing allocated")
    return OptimizerState(use.transform_name, optimizer, params, use.transform, use.wrt)


def _state_maker(use: StateUse, library: ModelLibrary | None, model: Any, params: object) -> str:
    """What builds ``use``'s state, abstractly, as the step's code names things."""
    tx = use.transform_name or use.optimizer
    over = use.params or "params"
    if use.nnx:
        if isinstance(params, Constructed) and params.cls is not None:
            shown = _shown("nnx", list(params.arguments))
            built = f"{params.cls.__name__}({', '.join(f'{n}={v}' for n, v in shown)})"
        else:
            name = model.__name__ if isinstance(model, type) else "Model"
            built = f"{name}(..., rngs=nnx.Rngs(0))"
        tx = tx if use.transform_name else "tx"
        return f"nnx.eval_shape(lambda: nnx.Optimizer({built}, {tx}, wrt={use.wrt_text}))"
    if library == "equinox":
        return f"eqx.filter_eval_shape(lambda m: {tx}.init(eqx.filter(m, eqx.is_array)), {over})"
    return f"jax.eval_shape({tx}.init, {over})"


def _check_dims(where: str, reading: _Reading, shared_dims: frozenset[str]) -> None:
    """One error line for the dimensions the annotations use with no size; a note (a
    choice) for the dims given that no annotation uses, but the ``shared_dims``."""
    unknown = [n for n in reading.dims if n not in reading.mentioned and n not in shared_dims]
    if reading.unsized:
        names = list(reading.unsized)
        example = ",".join(f"{n}=8" for n in names)
        raise UsageError(
            f"{where}: the annotations' dimension{'s' if len(names) > 1 else ''} "
            f"{', '.join(names)} {'have' if len(names) > 1 else 'has'} no size; give "
            f'{"them" if len(names) > 1 else "it"} with --dims {example} (or "dims" in the '
            "module's JXINSPECT entry, or dims: in jxinspect.yaml)"
            + "".join(f"; {_unknown_dim(n, names)}" for n in unknown)
        )
    if unknown:
        named = "; ".join(_unknown_dim(n, sorted(reading.mentioned)) for n in unknown)
        reading.choose(f"dims unused: {named}")


def _unknown_dim(name: str, known: list[str]) -> str:
    """``btach is in no annotation of this target; did you mean batch?``"""
    close = closest(name, known)
    return f"{name} is in no annotation of this target" + (
        f"; did you mean {close}?" if close else ""
    )


def _missing_message(
    where: str, missing: dict[str, _Missing], any_hints: bool, signature: inspect.Signature
) -> str:
    listed = ", ".join(f"{name} ({why})" for name, why in missing.items())
    first, why = next(iter(missing.items()))
    value = why.example or ("3" if why.static else "f32[8]")
    example = f"{first}={value}"
    maker = _maker_advice(missing, signature)
    if maker is not None:
        return f"no example inputs for {where}: the annotations do not say {listed}; {maker}"
    if not any_hints:
        return (
            f"no example inputs for {where}: "
            + INPUT_HELP % where.rpartition(":")[2]
            + ', or annotate its arguments (x: Float[Array, "batch dim"]) and give --dims'
        )
    return (
        f"no example inputs for {where}: the annotations do not say {listed}; "
        f'give {"it" if len(missing) == 1 else "them"} by name, e.g. --kwargs "{example}" '
        "(the annotated arguments are built from their annotations), or every input with --args"
    )


def _maker_advice(missing: dict[str, _Missing], signature: inspect.Signature) -> str | None:
    """The ``--args-from`` maker that builds every input, the ones a model's constructor
    or an optimizer builds written out (``opt_state = jax.eval_shape(optim.init,
    params)``), the others left to write (``x = ...``)."""
    makers = {name: why.maker for name, why in missing.items() if why.maker}
    if not makers:
        return None
    wanted = [p for p in signature.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
              and (p.default is p.empty or p.name in makers)]  # fmt: skip
    names = [p.name for p in wanted if p.kind != p.KEYWORD_ONLY]
    by_name = [p.name for p in wanted if p.kind == p.KEYWORD_ONLY]
    body = "; ".join(f"{p.name} = {makers.get(p.name, '...')}" for p in wanted)
    returned = ", ".join(names) + ("," if len(names) == 1 else "")
    if by_name:  # after a parameter a functools.partial binds by keyword: (args, kwargs)
        returned = f"({returned}), {{{', '.join(f'{name!r}: {name}' for name in by_name)}}}"
    notes = "".join(dict.fromkeys(f" ({why.note})" for why in missing.values() if why.note))
    return (
        f"build {'it' if len(makers) == 1 else 'them'} in a maker, e.g. "
        f"`def make_args(): {body}; return ({returned})`, and give --args-from make_args{notes}"
    )


def _static_value(hint: Any, default: Any) -> object:
    if default is not inspect.Parameter.empty:
        return default
    hint = _strip_annotated(hint)
    if typing.get_origin(hint) is typing.Literal:
        return typing.get_args(hint)[0]
    raise _Missing("static, with no default or Literal to take", static=True)


def _strip_annotated(hint: Any) -> Any:
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    return hint


def _build(hint: Any, path: str, reading: _Reading) -> object:
    """The spec-language value an argument annotated ``hint`` is built as."""
    hint = _strip_annotated(hint)
    if isinstance(hint, _Unresolved):
        raise _Missing(f"its annotation could not be resolved: {hint.why}")
    if isinstance(hint, _Owner):
        return _self(hint.cls, path, reading)
    if is_array_annotation(hint):
        return _array(hint, path, reading)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(hint, path, reading)
    if origin is typing.Literal:
        value = typing.get_args(hint)[0]
        reading.choose(f"{path}={value!r} (its first Literal value)")
        return value
    if origin is tuple:
        items = typing.get_args(hint)
        if len(items) == 2 and items[1] is Ellipsis:
            raise _Missing(f"{_name(hint)} does not say how many")
        if items == ((),):  # tuple[()]
            return ()
        return tuple(_build(item, f"{path}[{i}]", reading) for i, item in enumerate(items))
    if origin is not None and isinstance(origin, type) and issubclass(origin, (dict, list)):
        kind = "keys" if issubclass(origin, dict) else "length"
        raise _Missing(f"{_name(hint)} does not say its {kind}; use a TypedDict or tuple")
    if isinstance(hint, type):
        library = _model_library(hint)
        if library is not None:
            return _model(hint, library, path, reading)
        if issubclass(hint, tuple) and hasattr(hint, "_fields"):
            return _named_tuple(hint, path, reading)
        if dataclasses.is_dataclass(hint):
            return _dataclass(hint, path, reading)
        if typing.is_typeddict(hint):
            hints = _field_hints(hint)
            return {key: _build(h, f"{path}[{key!r}]", reading) for key, h in hints.items()}
        if hint in _SCALAR_EXAMPLES:
            raise _Missing(_scalar_choices(hint, path), example=_SCALAR_EXAMPLES[hint])
    raise _Missing(f"{_name(hint)} gives no shape")


def _scalar_choices(hint: type, path: str) -> str:
    """Why a Python scalar is not built, and its two choices: JAX traces a Python
    ``int`` passed to ``jit`` as a weak-typed ``i32[]`` (another program than a strong
    one), and code that needs its value needs it static."""
    name = hint.__name__
    if not path.isidentifier():  # a field of an argument: only a value can be given
        return f"a Python {name} (give the argument's value)"
    value = _SCALAR_EXAMPLES[hint]
    return (
        f"a Python {name}: static with --static-argnames {path} (and --kwargs {path}={value}), "
        f"or traced as jit traces one with --kwargs {path}={value}"
    )


def _union(hint: Any, path: str, reading: _Reading) -> object:
    """``X | None`` is built as ``X``; a union of several members only where they are
    all arrays whose shapes the annotations pin and the dims given size just one of
    them (or several alike). A member is never picked for the user otherwise: a union
    with a Python scalar or a bare array type (``jax.typing.ArrayLike``) gives no shape."""
    members = [m for m in typing.get_args(hint) if m is not type(None)]
    if len(members) == 1:
        value = _build(members[0], path, reading)
        reading.choose(f"{path}: built as {_name(members[0])} of {_name(hint)}")
        return value
    arrays = [m for m in members if is_array_annotation(_strip_annotated(m))]
    for member in arrays:  # every member's dims are the annotations'
        reading.mentioned.update(name for _, name, _ in _dims(_strip_annotated(member)) if name)
    if len(arrays) < len(members):
        raise _Missing(f"{_name(hint)} gives no shape")
    fits: list[tuple[Any, ArraySpec, _Reading]] = []
    for member in arrays:
        trial = reading.trial()
        try:
            spec = _array(_strip_annotated(member), path, trial)
        except _Missing:
            continue
        if not trial.unsized:
            fits.append((member, spec, trial))
    if not fits or len({spec for _, spec, _ in fits}) > 1:
        said = "size none of its members" if not fits else f"size {len(fits)} of its members"
        raise _Missing(
            f"{_name(hint)}: the dims given {said}; give its value, or size one member's "
            "dims alone with --dims",
            example=str(fits[0][1]) if fits else None,
        )
    member, spec, trial = fits[0]
    reading.take(trial)
    reading.choose(f"{path}: built as {_name(member)} of {_name(hint)} (the member the dims size)")
    return spec


def _name(hint: Any) -> str:
    """An annotation as its code reads (``Float[Array, 'batch seq']``, ``Keys |
    Queries`` as their members, ``tuple[int, ...]``), whatever module made it."""
    hint = _strip_annotated(hint)
    if hint is type(None) or hint is None:
        return "None"
    if is_array_annotation(hint):
        family = getattr(getattr(hint, "dtype", None), "__name__", "Shaped")
        array = str(getattr(getattr(hint, "array_type", None), "__name__", "Array"))
        array = array.rpartition(".")[2]  # jax.Array's is jaxlib._jax.Array
        return f"{family}[{array}, {str(getattr(hint, 'dim_str', ''))!r}]"
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        names = list(dict.fromkeys(_name(m) for m in typing.get_args(hint)))
        shown = names if len(names) <= 4 else [*names[:3], f"… ({len(names)} members)"]
        return " | ".join(shown)
    if origin is not None:
        args = ", ".join("..." if a is Ellipsis else _name(a) for a in typing.get_args(hint))
        base = getattr(origin, "__name__", None) or str(origin).rpartition(".")[2]
        return f"{base}[{args}]"
    if isinstance(hint, type):
        return hint.__name__.rpartition(".")[2]  # jax.Array's is jaxlib._jax.Array
    return str(hint)


@dataclass(frozen=True)
class _Unresolved:
    """A field's annotation that could not be resolved, and why: building it says so."""

    why: str


def _field_hints(cls: type) -> dict[str, Any]:
    """A class's fields' annotations, each one that cannot be resolved an
    :class:`_Unresolved` (a field with a default then takes it)."""
    hints, unresolved = type_hints.resolve(cls)
    return {**hints, **{name: _Unresolved(why) for name, why in unresolved.items()}}


def _named_tuple(cls: type, path: str, reading: _Reading) -> Struct:
    hints = _field_hints(cls)
    defaults: dict[str, Any] = getattr(cls, "_field_defaults", {})
    values: list[tuple[str, object]] = []
    for name in cls._fields:  # type: ignore[attr-defined]
        here = f"{path}.{name}"
        if name in hints:
            try:
                values.append((name, _build(hints[name], here, reading)))
                continue
            except _Missing as why:
                if name not in defaults:
                    raise _Missing(f"{here}: {why}") from None
        elif name not in defaults:
            raise _Missing(f"{here}: no annotation")
        reading.choose(f"{here} left to its default")
        values.append((name, defaults[name]))
    return Struct(_class_path(cls), tuple(values), cls)


def _dataclass(cls: type, path: str, reading: _Reading) -> Struct:
    """Every field (the pytree node flattens them all, ``init`` or not), built from its
    annotation; a static one (``eqx.field(static=True)``, ``struct.field(pytree_node=
    False)``) or one that cannot be built takes its default."""
    hints = _field_hints(cls)
    values: list[tuple[str, object]] = []
    for f in dataclasses.fields(cls):
        here = f"{path}.{f.name}"
        static = f.metadata.get("static") is True or f.metadata.get("pytree_node") is False
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if not static and f.name in hints:
            try:
                values.append((f.name, _build(hints[f.name], here, reading)))
                continue
            except _Missing as why:
                if not (has_default or has_factory):
                    raise _Missing(f"{here}: {why}") from None
        if has_default:
            values.append((f.name, f.default))
        elif has_factory:
            values.append((f.name, f.default_factory()))  # type: ignore[operator]
        else:
            kind = "static field" if static else "no annotation"
            raise _Missing(f"{here}: {kind}, with no default")
        reading.choose(
            f"{here}={values[-1][1]!r} ({'static field: ' if static else ''}its default)"
        )
    return Struct(_class_path(cls), tuple(values), cls)


# ----------------------------------------------------------- models, constructed ----

_BUILDERS: dict[ModelLibrary, str] = {"equinox": "eqx.filter_eval_shape", "nnx": "nnx.eval_shape"}
_SEEDS: dict[ModelLibrary, tuple[str, str]] = {
    "equinox": ("key", "jax.random.key(0)"), "nnx": ("rngs", "nnx.Rngs(0)"),
}  # fmt: skip
"""The PRNG argument of an Equinox or NNX constructor, as its examples pass it (a
``python`` one, a method's plain ``self``, is given none: its class draws no weights)."""


@dataclass(frozen=True)
class _Owner:
    """The class of a method target, as the annotation of its unannotated ``self``."""

    cls: type


def _self(cls: type, path: str, reading: _Reading) -> object:
    """A method's ``self``: built as its class is where it can be (its fields, or a
    model's constructor); else, a class that is no pytree (a plain class, a dataclass
    JAX does not flatten) by calling its constructor with Python values, which the
    tracer stages as a static value, as JAX stages an object that holds no arrays."""
    trial = reading.trial()
    try:
        built = _build(cls, path, trial)
    except _Missing:
        if _model_library(cls) is not None:
            raise
        why = f"{cls.__name__}, no pytree, is built by its constructor"
        return _constructed(cls, "python", path, reading, why)
    reading.take(trial)
    return built


def _model_library(cls: type) -> ModelLibrary | None:
    """``equinox`` for an ``eqx.Module``, ``nnx`` for a ``flax.nnx.Module``, by the
    classes it derives from (neither library is imported for it)."""
    for base in cls.__mro__:
        if base.__name__ == "Module" and base.__module__.startswith("equinox"):
            return "equinox"
        if base.__name__ == "Module" and base.__module__.startswith("flax.nnx"):
            return "nnx"
    return None


def _model(cls: type, library: ModelLibrary, path: str, reading: _Reading) -> object:
    """An Equinox model from its fields' annotations where they say every array (the
    tree its unflattening makes); else, an Equinox or NNX model from its constructor."""
    why = f"{_kind(library)} {cls.__name__}"
    if library == "equinox" and dataclasses.is_dataclass(cls):
        trial = reading.trial()
        try:
            built = _dataclass(cls, path, trial)
        except _Missing as missing:
            why = f"{why}'s fields do not say its arrays ({missing})"
        else:
            reading.take(trial)
            return built
    return _constructed(cls, library, path, reading, why)


def _kind(library: ModelLibrary) -> str:
    return "an eqx.Module" if library == "equinox" else "an nnx.Module"


def _constructed(
    cls: type, library: ModelLibrary, path: str, reading: _Reading, why: str
) -> Constructed:
    """The model its own constructor builds, where every argument it needs is a PRNG
    key (``key``/``rngs``, or annotated as one), a Python ``int`` that ``--dims`` sizes
    by its name, or an array its annotation says; the others keep their defaults."""
    try:  # the __init__'s own (a metaclass's __call__, NNX's, hides it from the class's)
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # type: ignore[misc]
    except (TypeError, ValueError):
        parameters = []
    hints = _init_hints(cls)
    arguments: list[tuple[str, object]] = []
    needs: list[str] = []
    for param in parameters:
        name = param.name
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = _strip_annotated(hints.get(name, param.empty))
        if library != "python" and _is_seed(name, hint):
            arguments.append((name, Seed("rngs" if library == "nnx" else "key")))
        elif param.default is not param.empty:
            continue
        elif hint in (int, float) and isinstance(reading.dims.get(name), Dim):
            reading.mentioned.add(name)
            size = reading.dims[name]
            assert isinstance(size, Dim)
            reading.used[name] = dim_text(size)
            arguments.append((name, hint(size.size)))
        elif library != "python" and hint is not param.empty and hint not in _SCALAR_EXAMPLES:
            trial = reading.trial()
            try:
                arguments.append((name, _build(hint, f"{path}({name})", trial)))
            except _Missing:
                needs.append(name)
            else:
                reading.take(trial)
        else:
            needs.append(name)
    if needs:
        given = dict(_shown(library, arguments))
        written = [(p.name, given.get(p.name, "...")) for p in parameters
                   if p.name in given or p.name in needs]  # fmt: skip
        call = _call_text(library, cls, written)
        raise _Missing(
            f"{why}; its constructor needs {', '.join(needs)}",
            maker=call,
            note="a Python int argument named like a dim takes its --dims size",
        )
    built = _call_text(library, cls, _shown(library, arguments))
    static = "a Python object, staged as a static value"
    reading.choose(
        f"{path}: built by {built}, {static if library == 'python' else 'nothing allocated'}"
    )
    return Constructed(_class_path(cls), library, tuple(arguments), cls)


def _shown(library: ModelLibrary, arguments: list[tuple[str, object]]) -> list[tuple[str, str]]:
    """Constructor arguments as a call writes them (a seed as its library's examples)."""
    return [(n, _SEEDS[library][1] if isinstance(v, Seed) else str(v)) for n, v in arguments]


def _call_text(library: ModelLibrary, cls: type, arguments: list[tuple[str, str]]) -> str:
    """``eqx.filter_eval_shape(MLP, width=8, key=jax.random.key(0))``, or
    ``nnx.eval_shape(lambda: Model(rngs=nnx.Rngs(0)))``."""
    said = ", ".join(f"{name}={value}" for name, value in arguments)
    if library == "python":
        return f"{cls.__name__}({said})"
    if library == "equinox":
        return f"{_BUILDERS[library]}({cls.__name__}{', ' if said else ''}{said})"
    return f"{_BUILDERS[library]}(lambda: {cls.__name__}({said}))"


def _init_hints(cls: type) -> dict[str, Any]:
    """A constructor's resolved annotations (one that cannot be is read as none)."""
    return type_hints.resolve(cls.__init__)[0]  # type: ignore[misc]


def _is_seed(name: str, hint: Any) -> bool:
    """A constructor's PRNG argument: named ``key`` or ``rngs`` (as Equinox's examples
    and NNX's docs write it), or annotated as a key array, ``PRNGKeyArray`` or
    ``nnx.Rngs``."""
    if name in ("key", "rngs"):
        return True
    members = typing.get_args(hint) if typing.get_origin(hint) in (
        typing.Union, types.UnionType) else (hint,)  # fmt: skip
    for member in members:
        member = _strip_annotated(member)
        if is_array_annotation(member) and getattr(member.dtype, "__name__", "") == "Key":
            return True
        if isinstance(member, type) and member.__name__ == "Rngs":
            return True
    return False


def _class_path(cls: type) -> str:
    """``module.Class``, by the module's name as the user imports it."""
    return f"{known_name(cls.__module__)}.{cls.__qualname__}"


# ---------------------------------------------------------------- jaxtyping arrays ----


def _array(hint: type, path: str, reading: _Reading) -> ArraySpec:
    dtype = _dtype(hint, reading)
    shape: list[int] = []
    axes: list[tuple[str, ...]] = []
    for kind, name, extra in _dims(hint):
        if kind == "fixed":
            shape.append(int(str(extra)))
            axes.append(())
        elif kind == "anonymous":
            reading.choose("an anonymous dimension _ → 1")
            shape.append(1)
            axes.append(())
        elif kind == "anonymous_variadic":
            reading.choose("... → no dimensions")
        elif kind == "symbolic":
            shape.append(_symbolic(str(extra), path, reading))
            axes.append(())
        else:
            reading.mentioned.add(name)
            value = _sized(name, broadcastable=bool(extra), variadic=kind == "variadic",
                           reading=reading)  # fmt: skip
            for dim in (value,) if isinstance(value, Dim) else value:
                shape.append(dim.size)
                axes.append(dim.axes)
    return ArraySpec(dtype, tuple(shape), tuple(axes))


def _sized(name: str, *, broadcastable: bool, variadic: bool, reading: _Reading) -> DimValue:
    value = reading.dims.get(name)
    if value is None:
        if broadcastable:
            chosen: DimValue = () if variadic else Dim(1)
            reading.choose(f"#{'*' if variadic else ''}{name} → {dim_text(chosen)}"
                           " (broadcastable, no size given)")  # fmt: skip
            return chosen
        reading.unsized[name] = None
        return () if variadic else Dim(0)
    if not isinstance(value, Dim) and not variadic:
        if len(value) != 1:
            raise _Missing(f"dimension {name} is one dimension, given {dim_text(value)}")
        value = value[0]
    reading.used[name] = dim_text(value)
    return value


def _symbolic(text: str, path: str, reading: _Reading) -> int:
    """``n+1``, ``2*n``, ``n//2``: sizes of named dims, read, never evaluated."""
    ops: dict[type, Callable[[int, int], int]] = {
        ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv,
    }  # fmt: skip

    def value(node: ast.expr) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            reading.mentioned.add(node.id)
            got = _sized(node.id, broadcastable=False, variadic=False, reading=reading)
            return got.size if isinstance(got, Dim) else 0
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            right = value(node.right)
            if isinstance(node.op, ast.FloorDiv) and right == 0:
                return 0
            return ops[type(node.op)](value(node.left), right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        raise _Missing(f"symbolic dimension {text!r} is not names and ints with + - * //")

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise _Missing(f"symbolic dimension {text!r} does not parse") from None
    size = value(tree.body)
    if size < 0:
        raise _Missing(f"symbolic dimension {text!r} is {size}")
    return size


def _dims(hint: type) -> list[tuple[str, str, object]]:
    """``(kind, name, extra)`` per dim of a jaxtyping array: kinds ``fixed`` (extra: the
    size), ``named`` and ``variadic`` (extra: broadcastable), ``anonymous``,
    ``anonymous_variadic``, ``symbolic`` (extra: its text). From the parsed ``dims``;
    from ``dim_str`` where those are spelled otherwise than this release's."""
    parsed = getattr(hint, "dims", None)
    if isinstance(parsed, tuple):
        read = [_dim_object(d) for d in parsed]
        if all(r is not None for r in read):
            return [r for r in read if r is not None]
    return [_dim_word(word) for word in str(hint.dim_str).split()]  # type: ignore[attr-defined]


def _dim_object(dim: object) -> tuple[str, str, object] | None:
    kind = type(dim).__name__
    if dim is Ellipsis or "AnonymousVariadic" in kind:
        return ("anonymous_variadic", "", None)
    if "Anonymous" in kind:
        return ("anonymous", "", None)
    broadcastable = getattr(dim, "broadcastable", False)
    if "Fixed" in kind and isinstance(getattr(dim, "size", None), int):
        return ("fixed", "", dim.size)  # type: ignore[attr-defined]
    if "Symbolic" in kind and hasattr(dim, "elem"):
        return ("symbolic", "", dim.elem)
    name = getattr(dim, "name", None)
    if isinstance(name, str) and "Named" in kind:
        return ("variadic" if "Variadic" in kind else "named", name, broadcastable)
    return None


def _dim_word(word: str) -> tuple[str, str, object]:
    """One word of a ``dim_str``, read as jaxtyping documents it."""
    if word == "...":
        return ("anonymous_variadic", "", None)
    broadcastable = variadic = anonymous = False
    while word:
        if word[0] == "#":
            broadcastable, word = True, word[1:]
        elif word[0] == "*":
            variadic, word = True, word[1:]
        elif word[0] == "_":
            anonymous, word = True, word[1:]
        elif word[0] == "?":
            word = word[1:]
        elif word.count("=") == 1:
            word = word.split("=")[1]
        else:
            break
    if word.isdigit():
        return ("fixed", "", int(word))
    if anonymous and (not word or word.isidentifier()):
        return ("anonymous_variadic" if variadic else "anonymous", "", None)
    if word.isidentifier():
        return ("variadic" if variadic else "named", word, broadcastable)
    return ("symbolic", "", word)


def _dtype(hint: type, reading: _Reading) -> str:
    """The concrete dtype an array annotation stands for, and, where its family allows
    several, the choice recorded (``Float`` → ``f32``)."""
    allowed = getattr(hint, "dtypes", None)
    family = getattr(getattr(hint, "dtype", None), "__name__", None) or "Shaped"
    if not isinstance(allowed, (list, tuple)):  # jaxtyping's "any dtype"
        chosen = reading.float_dtype
    else:
        names = [d for d in allowed if isinstance(d, str)]
        if "prng_key" in names or "key" in names:
            reading.families.setdefault(family, "key (jax.random.key)")
            return KEY_DTYPE
        known = [n for n in names if n in dtypes.BY_NAME or n == "bool_"]
        if reading.float_dtype in known:
            chosen = reading.float_dtype
        else:
            chosen = next((p for p in _PREFERRED if p in known), known[0] if known else "")
        if not chosen:
            raise _Missing(f"{family} allows no dtype jxinspect knows ({', '.join(names)})")
        if len(set(known) - {"bool_"}) <= 1:
            return "bool" if chosen == "bool_" else chosen
    chosen = "bool" if chosen == "bool_" else chosen
    reading.families.setdefault(family, dtypes.short_name(chosen))
    return chosen
