"""How to stage one target: the option table, and the options it reads.

Every staging option is declared once, as a field of :class:`TargetOptions` whose
metadata :data:`OPTIONS` reads: its name (the key in a
``JXINSPECT`` declaration and a configuration file, where ``-`` may stand for ``_``), its
kind, its help text, the stages that use it and whether a configuration's ``defaults``
may set it. The command line's flags (``--`` and the name with ``-``), the readers of
declarations, configuration files and recorded calls, and the README's option list all
derive from it.

Values stay as the user wrote them (spec strings are parsed by the tracer), so this
module needs no JAX.
"""

from __future__ import annotations

import difflib
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from jxinspect.core.dtypes import FLOAT_SHORTS
from jxinspect.core.errors import UsageError
from jxinspect.core.vocabulary import PARTITIONERS, PLATFORMS, STAGES, Partitioner, Platform, Stage
from jxinspect.project import spec as specs

OptionKind = Literal["spec", "text", "int_tuple", "name_tuple", "bool", "positive_int", "choice"]
"""How an option is written: a spec-language string (checked by ``parse``), free text,
argument positions (``1`` or ``[0, 2]``; ``"0,2"`` on the command line), argument names,
a flag, a count, one of ``choices``."""

Group = Literal["input", "staging"]
"""Example inputs, or how they are staged."""

Carries = Literal["data", "code"]
"""What an option's value is: ``data`` (shapes, dtypes, shardings, positions, names,
static values: read, never run) or ``code`` (names code that staging imports and calls).
An artifact (a recording's ``call.json``) gives data only."""

Role = Literal[
    "statics", "static_names", "donated", "donated_names", "in_layout", "out_layout",
    "mapped_axes", "axis",
]  # fmt: skip
"""What an option says about the call, whatever the stage calls it (``static_argnums``
under ``jit``, ``static_broadcasted_argnums`` under ``pmap``; input layouts are
``in_shardings`` under ``jit`` and ``in_specs`` under ``shard_map``): read by
:class:`~jxinspect.project.plan.StagingPlan`."""

_ALL = STAGES
_JIT: tuple[Stage, ...] = ("jit", "pjit", "shard_map")
"""Staged by ``jit`` (shard_map inside one)."""
_PMAP: tuple[Stage, ...] = ("pmap",)


@dataclass(frozen=True)
class Option:
    """One staging option, as every reader and the command line know it."""

    name: str
    """The declaration and configuration key, and the staging API's keyword."""
    kind: OptionKind
    help: str
    """The command line's help text."""
    stages: tuple[Stage, ...] = _ALL
    """The stages that use it."""
    choices: tuple[str, ...] = ()
    """The values a ``choice`` takes."""
    in_defaults: bool = False
    """A configuration's ``defaults:`` may set it."""
    parse: Callable[[str], object] | None = None
    """Checks a ``spec`` string (raising :class:`~jxinspect.project.spec.SpecError`)."""
    group: Group = "staging"
    role: Role | None = None
    """Its meaning for the stages that use it, for the plan."""
    keyword: bool = False
    """Handed to the staging API by its name: as given, or parsed when it is a spec
    (shardings and meshes are not: they need JAX objects built first)."""
    renamed: tuple[tuple[Stage, str], ...] = ()
    """The staging API's own keyword for it, under the stages that call it otherwise."""
    carries: Carries = "data"
    """Whether its value is data or names code to import and call."""
    off_flag: str | None = None
    """A ``bool``'s flag for ``False`` (``--auto``); without one its flag only sets it."""

    @property
    def flag(self) -> str:
        """``--static-argnums``."""
        return "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> str:
        """How the command line writes it: ``--explicit/--auto``, else :attr:`flag`."""
        return f"{self.flag}/{self.off_flag}" if self.off_flag else self.flag

    def keyword_for(self, stage: Stage) -> str:
        """The keyword ``stage``'s API takes it by."""
        return dict(self.renamed).get(stage, self.name)


def _option(kind: OptionKind, help: str, stages: tuple[Stage, ...] = _ALL, **rest: Any) -> Any:
    """A :class:`TargetOptions` field: the option of ``kind`` (its :class:`Option`, named by
    the field); its default ``None`` means "not given"."""
    return field(
        default=None, metadata={"option": {"kind": kind, "help": help, "stages": stages, **rest}}
    )


@dataclass(frozen=True)
class TargetOptions:
    """Inputs and staging options for one target: each field is an option, declared here
    once (its :class:`Option` in the field's metadata, typed by its kind: a test checks
    it), in the command line's order; ``None`` means "not given". ``args_from`` names
    ``module:function`` (or a name in the target's module) returning args or (args,
    kwargs)."""

    args: str | None = _option(
        "spec", 'Example inputs: "f32[8,128], 3".', parse=specs.parse_args, group="input"
    )
    kwargs: str | None = _option(
        "spec", 'Keyword inputs: "scale=2.0".', parse=specs.parse_kwargs, group="input"
    )
    args_from: str | None = _option(
        "text", "module:function returning args or (args, kwargs).", group="input", carries="code"
    )
    dims: str | None = _option(
        "spec",
        'Sizes of annotated dimensions: "batch=8,seq=128", "batch=64@data".',
        parse=specs.parse_dims,
        group="input",
        in_defaults=True,
    )
    dtype: str | None = _option(
        "choice",
        "The dtype of an annotated Float array (default f32).",
        choices=FLOAT_SHORTS,
        group="input",
        in_defaults=True,
    )
    stage: Stage | None = _option(
        "choice", "Staging API (default jit).", choices=STAGES, in_defaults=True
    )
    static_argnums: tuple[int, ...] | None = _option(
        "int_tuple", 'Static argument positions: "1" or "0,2".', _JIT, role="statics", keyword=True
    )
    static_argnames: tuple[str, ...] | None = _option(
        "name_tuple", 'Static argument names: "n,mode".', _JIT, role="static_names", keyword=True
    )
    donate_argnums: tuple[int, ...] | None = _option(
        "int_tuple",
        'Donated argument positions: "0" or "0,2".',
        (*_JIT, "pmap"),
        role="donated",
        keyword=True,
    )
    donate_argnames: tuple[str, ...] | None = _option(
        "name_tuple",
        'Donated argument names: "params,state".',
        _JIT,
        role="donated_names",
        keyword=True,
    )
    keep_unused: bool | None = _option(
        "bool", "Keep unused arguments in @main.", _JIT, in_defaults=True, keyword=True
    )
    devices: int | None = _option("positive_int", "Simulate N CPU devices.", in_defaults=True)
    mesh: str | None = _option(
        "spec", 'Mesh axes: "data=2,model=4".', in_defaults=True, parse=specs.parse_mesh
    )
    in_specs: str | None = _option(
        "spec",
        "Input shardings (jit/pjit) or shard_map in_specs.",
        _JIT,
        parse=specs.parse_specs,
        role="in_layout",
        renamed=(("jit", "in_shardings"), ("pjit", "in_shardings")),
    )
    out_specs: str | None = _option(
        "spec",
        "Output shardings or specs.",
        _JIT,
        parse=specs.parse_specs,
        role="out_layout",
        renamed=(("jit", "out_shardings"), ("pjit", "out_shardings")),
    )
    axis_name: str | None = _option("text", "pmap axis name.", _PMAP, keyword=True, role="axis")
    in_axes: str | None = _option(
        "spec",
        'pmap in_axes: "0, None".',
        _PMAP,
        parse=specs.parse_axes,
        keyword=True,
        role="mapped_axes",
    )
    out_axes: str | None = _option(
        "spec", 'pmap out_axes: "None, 0".', _PMAP, parse=specs.parse_axes, keyword=True
    )
    static_broadcasted_argnums: tuple[int, ...] | None = _option(
        "int_tuple", 'pmap static positions: "1" or "0,2".', _PMAP, role="statics", keyword=True
    )
    abstract: bool | None = _option("bool", "Use an AbstractMesh (no devices).", in_defaults=True)
    platform: Platform | None = _option(
        "choice", "Lower for this platform.", choices=PLATFORMS, in_defaults=True
    )
    topology: str | None = _option(
        "text",
        "Lower and compile for this TPU topology, as libtpu names it (v5e:2x2, v4:2x2x1), "
        "with no TPU here (needs libtpu: the tpu extra).",
        in_defaults=True,
    )
    slices: int | None = _option(
        "positive_int",
        "Compile for N slices of --topology joined by the data-center network (multi-slice); "
        "the slices span the mesh's first axes that divide N (data=2,fsdp=4 over 2: data).",
        in_defaults=True,
    )
    partitioner: Partitioner | None = _option(
        "choice",
        "Who reads the shardings: shardy or gspmd.",
        choices=PARTITIONERS,
        in_defaults=True,
    )
    explicit: bool | None = _option(
        "bool",
        "Mesh axes Explicit or Auto (default: as this JAX's jax.make_mesh makes them).",
        in_defaults=True,
        off_flag="--auto",
    )

    def merged_over(self, base: TargetOptions) -> TargetOptions:
        """These options where given, ``base``'s elsewhere. ``args_from`` and
        ``args``/``kwargs`` are alternatives: giving one set drops ``base``'s other.
        ``dims`` merge by name: these sizes win over ``base``'s for the names both give."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.dims is not None and base.dims is not None:  # merged name by name
            try:
                given["dims"] = specs.merge_dims(base.dims, self.dims)
            except specs.SpecError as err:
                raise UsageError(f"dims: {err}") from None
        if self.args_from is not None:
            base = replace(base, args=None, kwargs=None)
        elif self.args is not None or self.kwargs is not None:
            base = replace(base, args_from=None)
        return replace(base, **{k: v for k, v in given.items() if v is not None})

    @property
    def stage_name(self) -> Stage:
        return self.stage or "jit"

    def given(self) -> dict[str, Any]:
        """The options given, by name, as a declaration would write them."""
        values = ((name, getattr(self, name)) for name in OPTION_NAMES)
        return {name: value for name, value in values if value is not None}


OPTIONS: tuple[Option, ...] = tuple(
    Option(f.name, **f.metadata["option"]) for f in fields(TargetOptions)
)
"""Every staging option, in the command line's order."""

OPTIONS_BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}
OPTION_NAMES: tuple[str, ...] = tuple(OPTIONS_BY_NAME)
DEFAULT_KEYS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.in_defaults)
"""The options a configuration's ``defaults:`` may set."""
DATA_KEYS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.carries == "data")
"""The options whose value is data: all an artifact (a recorded call) may give."""

NO_OPTIONS = TargetOptions()
"""Nothing given: every option as its staging API's default."""


def closest(word: str, choices: tuple[str, ...] | list[str]) -> str | None:
    """The choice ``word`` most likely misspells, if one is close."""
    close = difflib.get_close_matches(word, choices, n=1)
    return close[0] if close else None


def nearest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """`` (did you mean `x`?)`` or an empty string."""
    close = closest(word, choices)
    return f" (did you mean `{close}`?)" if close else ""


def options_from_mapping(
    data: Any, where: str, allowed: tuple[str, ...] = OPTION_NAMES, also: tuple[str, ...] = ()
) -> TargetOptions:
    """Validate a declaration's plain-data mapping (keys use ``_`` or ``-``); ``also``:
    other keys the mapping may hold (read elsewhere), suggested for a misspelled one."""
    if not isinstance(data, Mapping):
        raise UsageError(f"{where}: expected a mapping of options, got {type(data).__name__}")
    values: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        if key not in allowed:
            raise UsageError(f"{where}: unknown key `{raw_key}`{nearest(key, allowed + also)}")
        values[key] = checked(OPTIONS_BY_NAME[key], value, where)
    return TargetOptions(**values)


def int_tuple(value: Any) -> tuple[int, ...] | None:
    """An int or a sequence of ints (anything with ``__index__`` but a bool) as a tuple of
    ints: the one place that reads either; ``None`` for anything else."""
    items = (value,) if _is_index(value) else value
    if not isinstance(items, (list, tuple)) or not all(_is_index(i) for i in items):
        return None
    try:
        return tuple(operator.index(i) for i in items)
    except TypeError:  # an array of more than one value
        return None


def _is_index(value: Any) -> bool:
    return hasattr(type(value), "__index__") and not isinstance(value, bool)


def name_tuple(value: Any) -> tuple[str, ...] | None:
    """A name or a sequence of names as a tuple; ``None`` for anything else."""
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, (list, tuple)) and all(isinstance(i, str) for i in items):
        return tuple(items)
    return None


_EXPECTED: dict[OptionKind, str] = {
    "int_tuple": "an int or a list of ints", "name_tuple": "a name or a list of names",
    "bool": "true or false", "positive_int": "a positive int",
}  # fmt: skip


def checked(option: Option, value: Any, where: str) -> Any:
    """``value`` as ``option`` holds it (argument positions and names as tuples), or a
    :class:`UsageError` naming ``where``, the key and what it must be."""

    def bad(expected: str) -> UsageError:
        return UsageError(f"{where}: `{option.name}` must be {expected}, got {value!r}")

    kind = option.kind
    if kind in ("int_tuple", "name_tuple"):
        items = int_tuple(value) if kind == "int_tuple" else name_tuple(value)
        if items is None:
            raise bad(_EXPECTED[kind])
        return items
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad(_EXPECTED[kind])
        return value
    if kind == "positive_int":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise bad(_EXPECTED[kind])
        return value
    if option.parse is specs.parse_dims and isinstance(value, Mapping):
        value = _dims_text(value, bad)
    if not isinstance(value, str):
        raise bad("a string")
    if kind == "choice" and value not in option.choices:
        raise bad("one of " + ", ".join(option.choices) + nearest(value, option.choices))
    return value


def _dims_text(value: Mapping[Any, Any], bad: Callable[[str], UsageError]) -> str:
    """``{batch: 8, seq: "64@data", lead: [8, 4]}`` (a YAML or declaration mapping) as the
    text ``dims`` is written in: ``batch=8, seq=64@data, lead=(8,4)``."""
    parts = []
    for name, size in value.items():
        if isinstance(size, (list, tuple)):
            size = "(" + "".join(f"{item}," for item in size) + ")"
        if not isinstance(name, str) or isinstance(size, bool) or not isinstance(size, (int, str)):
            raise bad('"name=size, ..." or a mapping of names to sizes')
        parts.append(f"{name}={size}")
    return ", ".join(parts)


def options_from_flags(values: Mapping[str, Any]) -> TargetOptions:
    """The command line's staging flags (by option name; ``None``: not given) as
    TargetOptions: argument positions and names parsed from ``"0,2"``/``"n,mode"``."""
    parsers: dict[OptionKind, Callable[[str], object]] = {
        "int_tuple": specs.parse_int_tuple, "name_tuple": specs.parse_name_tuple,
    }  # fmt: skip
    result: dict[str, Any] = {}
    for option in OPTIONS:
        value = values.get(option.name)
        if value is not None and option.kind in parsers:
            try:
                value = parsers[option.kind](value)
            except specs.SpecError as err:
                raise UsageError(f"{option.flag}: {err}") from None
        result[option.name] = value
    return TargetOptions(**result)
