"""The report: what one staged function became, as plain frozen dataclasses.

This module never imports JAX. A :class:`Report` is built by ``jxinspect.tracer``,
judged by ``jxinspect.rules`` and drawn by ``jxinspect.render``. Its JSON form
(:meth:`Report.to_dict`, schema ``jxinspect.report/1``) is the interchange format: a
report saved under one JAX version can be read back with :meth:`Report.from_dict` and
compared with one made under another.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from jxinspect.core.display import Displayed, renderers
from jxinspect.core.dtypes import element_bytes
from jxinspect.core.program import Program
from jxinspect.core.vocabulary import SEVERITY_RANK, Partitioner, Reached, Severity, Stage, Status

__all__ = ["Reached", "Severity", "Status"]  # the model's words, defined in the vocabulary

_JAX_SOURCE = re.compile(r"[\\/]jax[\\/]_src[\\/]")
"""A path inside JAX's own package, where its functions live."""

SCHEMA = "jxinspect.report/1"


def at_or_above(severity: str, fail_on: str | None) -> bool:
    """Whether a ``severity`` reaches the gate ``fail_on`` (``never`` or ``None``: never)."""
    if fail_on is None or fail_on == "never":
        return False
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[fail_on]


def _recorded(value: Any) -> Any:
    """A fact read back from JSON; reports saved by earlier versions wrote ``"unknown"``."""
    return None if value == "unknown" else value


def shard_bytes(shape: tuple[int, ...], dtype: str) -> int | None:
    """Bytes of an array of this shape; ``None`` when a dimension is symbolic (-1)."""
    if any(d < 0 for d in shape):
        return None
    return int(math.prod(shape) * element_bytes(dtype))


@dataclass(frozen=True)
class Mesh:
    """A device mesh: named axes with sizes, in order."""

    axes: tuple[tuple[str, int], ...]
    """``(("data", 2), ("model", 4))``."""
    abstract: bool = False
    """True for an ``AbstractMesh`` (a topology that need not be present)."""

    @property
    def size(self) -> int:
        return math.prod(size for _, size in self.axes)

    def axis_size(self, name: str) -> int:
        """Size of an axis; a Shardy sub-axis ``x:(2)4`` has size 4."""
        if ":(" in name:
            return int(name.rsplit(")", 1)[1])
        return dict(self.axes).get(name, 1)

    def __str__(self) -> str:
        return ",".join(f"{name}={size}" for name, size in self.axes)

    @classmethod
    def parse(cls, text: str, abstract: bool = False) -> Mesh:
        """Read back ``"data=2,model=4"``."""
        axes = []
        for part in filter(None, text.split(",")):
            name, _, size = part.partition("=")
            axes.append((name, int(size)))
        return cls(tuple(axes), abstract)


ShardingKind = Literal["tiled", "replicated", "manual", "maximal", "unknown"]


@dataclass(frozen=True)
class Sharding:
    """One array's layout across devices, the same whether read from Shardy or GSPMD."""

    kind: ShardingKind
    spec: tuple[tuple[str, ...], ...] = ()
    """Mesh axes per array dimension; ``()`` for a dimension that is not split."""
    mesh: Mesh | None = None
    """The mesh the axes refer to; ``None`` when only tile counts are known."""
    tiles: tuple[int, ...] = ()
    """Pieces per dimension when no mesh names them (GSPMD without a known mesh)."""
    replicas: int = 1
    """Devices that hold a copy of each shard (partial replication)."""
    source: str = ""
    """Where it was read: ``sdy``, ``gspmd``, ``jax`` (an aval's sharding), ``pmap`` (the
    mapped axis of a pmap whose program holds per-device shapes, JAX 0.4.x–0.9),
    ``compiled``, ``declared`` (what the argument declared, where lowering failed:
    not confirmed by the compiler), ``shard_map`` (the in/out spec of the shard_map
    that ``@main`` hands the value to, where ``@main`` itself declares none), or
    ``jax_default`` (``@main``'s, but JAX's own, not declared: the replicated sharding
    JAX gives a scalar argument that declares none, Shardy's ``@empty_mesh``)."""
    raw: str = ""
    """The attribute as written, e.g. ``#sdy.sharding<@mesh, [{"data"}, {}]>``."""

    def pieces(self) -> tuple[int, ...]:
        """How many pieces each dimension is cut into."""
        if self.tiles:
            return self.tiles
        if self.mesh is None:
            return tuple(1 for _ in self.spec)
        mesh = self.mesh
        return tuple(math.prod(mesh.axis_size(a) for a in axes) for axes in self.spec)

    def shard_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape each device holds (ceil division, as XLA pads)."""
        if self.kind != "tiled":
            return shape
        pieces = self.pieces()
        return tuple(
            -(-dim // (pieces[i] if i < len(pieces) else 1)) for i, dim in enumerate(shape)
        )

    @property
    def readable(self) -> str:
        """``P('data', None)``, ``P(('data', 'fsdp'), 'model')``, ``replicated``, ``manual``."""
        if self.kind == "tiled" and self.mesh is not None and not self.tiles:
            entries = []
            for axes in self.spec:
                if not axes:
                    entries.append("None")
                elif len(axes) == 1:
                    entries.append(repr(axes[0]))
                else:
                    entries.append("(" + ", ".join(repr(a) for a in axes) + ")")
            return "P(" + ", ".join(entries) + ")" if any(self.spec) else "replicated"
        if self.kind == "tiled":
            text = "tiles[" + ",".join(str(t) for t in self.tiles) + "]"
            return text + (f" x{self.replicas} copies" if self.replicas > 1 else "")
        return self.kind

    @property
    def is_replicated(self) -> bool:
        return self.kind == "replicated" or (
            self.kind == "tiled" and all(p == 1 for p in self.pieces())
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "readable": self.readable,
            "kind": self.kind,
            "mesh": str(self.mesh) if self.mesh is not None else None,
            "spec": [list(axes) for axes in self.spec],
            "tiles": list(self.tiles),
            "replicas": self.replicas,
            "source": self.source,
            "raw": self.raw,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sharding:
        mesh = data.get("mesh")
        return cls(
            kind=data["kind"],
            spec=tuple(tuple(axes) for axes in data.get("spec", [])),
            mesh=Mesh.parse(mesh) if mesh else None,
            tiles=tuple(data.get("tiles", [])),
            replicas=data.get("replicas", 1),
            source=data.get("source", ""),
            raw=data.get("raw", ""),
        )


def _sharding_or_none(data: Any) -> Sharding | None:
    return Sharding.from_dict(data) if data else None


def _sharding_dict(sharding: Sharding | None) -> dict[str, Any] | None:
    return sharding.to_dict() if sharding is not None else None


@dataclass(frozen=True)
class Input:
    """One flat array argument of the staged function."""

    index: int
    """Position among the flat dynamic arguments (the jaxpr's invars)."""
    path: str
    """The name it should carry: parameter name plus pytree key path, ``params['w']``."""
    jaxpr_name: str | None
    """The name in the jaxpr's debug info (``None``: JAX recorded no names at all)."""
    name: str | None
    """The name the program carries: ``@main``'s argument location once lowered."""
    status: Status
    shape: tuple[int, ...]
    dtype: str
    sharding: Sharding | None = None
    """Declared sharding (``sdy.sharding`` or ``mhlo.sharding``), if any."""
    donated: bool = False
    """Donation was requested (``donate_argnums``/``donate_argnames``)."""
    aliased_output: int | None = None
    """``tf.aliasing_output``: the output this buffer is reused for."""
    buffer_donor: bool = False
    """``jax.buffer_donor = true``: donated, to be matched by the compiler."""
    memory_kind: str | None = None
    main_index: int | None = None
    """Position in ``@main``; ``None`` when pruned or not lowered."""
    compiled_sharding: Sharding | None = None
    """The sharding XLA chose, once compiled."""
    compiled_alias: int | None = None
    """The output the compiled program reuses this buffer for (input/output alias)."""
    compiled_name: str | None = None
    """The name the compiled program's parameter carries (its op metadata), once compiled."""

    @property
    def shard_shape(self) -> tuple[int, ...]:
        """Per-device shape: from the compiled sharding once compiled, else the declared one."""
        sharding = self.compiled_sharding or self.sharding
        return sharding.shard_shape(self.shape) if sharding else self.shape

    @property
    def bytes_per_device(self) -> int | None:
        """Bytes each device holds; ``None`` when a dimension is symbolic (written -1)."""
        return shard_bytes(self.shard_shape, self.dtype)

    def to_dict(self) -> dict[str, Any]:
        shard = self.shard_shape  # once: bytes_per_device would work it out again
        return {
            "index": self.index,
            "path": self.path,
            "jaxpr_name": self.jaxpr_name,
            "name": self.name,
            "status": self.status,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "sharding": _sharding_dict(self.sharding),
            "shard_shape": list(shard),
            "bytes_per_device": shard_bytes(shard, self.dtype),
            "donated": self.donated,
            "aliased_output": self.aliased_output,
            "buffer_donor": self.buffer_donor,
            "memory_kind": self.memory_kind,
            "main_index": self.main_index,
            "compiled_sharding": _sharding_dict(self.compiled_sharding),
            "compiled_alias": self.compiled_alias,
            "compiled_name": self.compiled_name,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Input:
        return cls(
            index=data["index"],
            path=data["path"],
            jaxpr_name=data.get("jaxpr_name"),
            name=data.get("name"),
            status=data["status"],
            shape=tuple(data["shape"]),
            dtype=data["dtype"],
            sharding=_sharding_or_none(data.get("sharding")),
            donated=data.get("donated", False),
            aliased_output=data.get("aliased_output"),
            buffer_donor=data.get("buffer_donor", False),
            memory_kind=data.get("memory_kind"),
            main_index=data.get("main_index"),
            compiled_sharding=_sharding_or_none(data.get("compiled_sharding")),
            compiled_alias=data.get("compiled_alias"),
            compiled_name=data.get("compiled_name"),
        )


@dataclass(frozen=True)
class Output:
    """One flat result of the staged function."""

    index: int
    path: str
    """The path it should carry: ``result`` plus the output's pytree key path."""
    jaxpr_path: str | None
    """The path in the jaxpr's debug info."""
    name: str | None
    """``jax.result_info`` in ``@main`` once lowered."""
    status: Status
    shape: tuple[int, ...]
    dtype: str
    sharding: Sharding | None = None
    memory_kind: str | None = None
    compiled_sharding: Sharding | None = None
    """The sharding XLA chose, once compiled."""

    @property
    def shard_shape(self) -> tuple[int, ...]:
        """Per-device shape: from the compiled sharding once compiled, else the declared one."""
        sharding = self.compiled_sharding or self.sharding
        return sharding.shard_shape(self.shape) if sharding else self.shape

    @property
    def bytes_per_device(self) -> int | None:
        """Bytes each device holds; ``None`` when a dimension is symbolic (written -1)."""
        return shard_bytes(self.shard_shape, self.dtype)

    def to_dict(self) -> dict[str, Any]:
        shard = self.shard_shape  # once: bytes_per_device would work it out again
        return {
            "index": self.index,
            "path": self.path,
            "jaxpr_path": self.jaxpr_path,
            "name": self.name,
            "status": self.status,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "sharding": _sharding_dict(self.sharding),
            "shard_shape": list(shard),
            "bytes_per_device": shard_bytes(shard, self.dtype),
            "memory_kind": self.memory_kind,
            "compiled_sharding": _sharding_dict(self.compiled_sharding),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Output:
        return cls(
            index=data["index"],
            path=data["path"],
            jaxpr_path=data.get("jaxpr_path"),
            name=data.get("name"),
            status=data["status"],
            shape=tuple(data["shape"]),
            dtype=data["dtype"],
            sharding=_sharding_or_none(data.get("sharding")),
            memory_kind=data.get("memory_kind"),
            compiled_sharding=_sharding_or_none(data.get("compiled_sharding")),
        )


@dataclass(frozen=True)
class StaticArg:
    """An argument that was baked into the program rather than passed to it."""

    path: str
    position: int | None
    """Positional index, or ``None`` for a keyword argument."""
    value: str
    """``repr`` of the value (truncated)."""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "position": self.position, "value": self.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StaticArg:
        return cls(data["path"], data.get("position"), data["value"])


ExtraKind = Literal["token", "constant", "dimension"]
"""Why JAX added an argument: an effect token, a hoisted constant, a dimension variable."""


@dataclass(frozen=True)
class ExtraArg:
    """An argument JAX added to ``@main`` itself: a token, a hoisted constant, a dimension."""

    main_index: int
    kind: ExtraKind
    type: str
    name: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"main_index": self.main_index, "kind": self.kind, "type": self.type,
                "name": self.name}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtraArg:
        return cls(data["main_index"], data["kind"], data["type"], data.get("name"))


NestedQuality = Literal["ok", "partial", "missing", "count_mismatch"]


@dataclass(frozen=True)
class NestedJaxpr:
    """A jaxpr inside the top-level one (pjit, scan, cond, while, custom_vjp, shard_map…)."""

    where: str
    """Its place: equation indices and primitives, ``3:scan/0:cond[1]``."""
    primitive: str
    quality: NestedQuality
    """``ok``; ``partial`` (it has debug info, but some or all of its names are empty or
    absent); ``missing`` (no debug info); ``count_mismatch`` (names do not match the
    invars/outvars)."""
    traced_for: str | None = None
    func_src_info: str | None = None
    arg_names: tuple[str, ...] | None = None
    result_paths: tuple[str, ...] | None = None
    num_invars: int = 0
    num_outvars: int = 0

    @property
    def lacking(self) -> tuple[str, ...]:
        """What it lacks of its names: ``argument names``, ``result paths``, both or none."""
        lacks = []
        if self.arg_names is None or "" in self.arg_names:
            lacks.append("argument names")
        if self.result_paths is None or "" in self.result_paths:
            lacks.append("result paths")
        return tuple(lacks)

    @property
    def inside_jax(self) -> bool:
        """Its function is JAX's own (from ``jax/_src/``: the body of a ``jnp`` or
        ``jax.nn`` function): its debug info is not the user's to change."""
        where = (self.func_src_info or "").partition(" at ")[2]
        return bool(_JAX_SOURCE.search(where))

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "primitive": self.primitive,
            "quality": self.quality,
            "traced_for": self.traced_for,
            "func_src_info": self.func_src_info,
            "arg_names": list(self.arg_names) if self.arg_names is not None else None,
            "result_paths": list(self.result_paths) if self.result_paths is not None else None,
            "num_invars": self.num_invars,
            "num_outvars": self.num_outvars,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NestedJaxpr:
        names, paths = data.get("arg_names"), data.get("result_paths")
        return cls(
            where=data["where"],
            primitive=data["primitive"],
            quality=data["quality"],
            traced_for=data.get("traced_for"),
            func_src_info=data.get("func_src_info"),
            arg_names=tuple(names) if names is not None else None,
            result_paths=tuple(paths) if paths is not None else None,
            num_invars=data.get("num_invars", 0),
            num_outvars=data.get("num_outvars", 0),
        )


@dataclass(frozen=True)
class Finding:
    """One thing worth telling: a stable code, a severity and a one-line message."""

    code: str
    severity: Severity
    message: str
    path: str | None = None
    """The leaf it is about, if any."""
    file: str | None = None
    line: int | None = None
    inside_jax: bool = False
    """About JAX's own code (a nested jaxpr of a ``jnp`` function): kept for JAX's
    developers, shown apart, and never failing a run (``--fail-on``, ``lint``)."""
    shape: str | None = None
    """The program shape it is about, as the survey names its cells (``nested:scan``,
    ``pmap:args``); ``None`` when no survey cell stands for it."""
    fixed_in: str | None = None
    """The JAX release from which the surveys shipped with jxinspect keep what this finding
    says was lost (``0.7.2``); ``None`` when no shipped survey says so."""

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "message": self.message,
                "path": self.path, "file": self.file, "line": self.line,
                "inside_jax": self.inside_jax, "shape": self.shape,
                "fixed_in": self.fixed_in}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(data["code"], data["severity"], data["message"], data.get("path"),
                   data.get("file"), data.get("line"), bool(data.get("inside_jax")),
                   data.get("shape"), data.get("fixed_in"))  # fmt: skip


@dataclass(frozen=True)
class MemoryStats:
    """Bytes per device of the compiled program; ``None`` where the backend gave none."""

    arguments: int | None
    outputs: int | None
    temporaries: int | None
    generated_code: int | None
    aliased: int | None
    source: Literal["xla", "estimate"] = "xla"
    """``xla``: ``memory_analysis()``; ``estimate``: jxinspect's own argument/output counts."""
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"arguments": self.arguments, "outputs": self.outputs,
                "temporaries": self.temporaries, "generated_code": self.generated_code,
                "aliased": self.aliased, "source": self.source, "note": self.note}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryStats:
        return cls(data.get("arguments"), data.get("outputs"), data.get("temporaries"),
                   data.get("generated_code"), data.get("aliased"),
                   data.get("source", "xla"), data.get("note"))  # fmt: skip


@dataclass(frozen=True)
class Collective:
    """One collective in the optimized program."""

    kind: str
    """``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``, a permute…"""
    operands: tuple[tuple[tuple[int, ...], str], ...]
    """(shape, dtype) of each operand, per device."""
    bytes: int
    """Operand bytes per device."""
    axes: tuple[str, ...] | None
    """The user's mesh axes it runs over; ``None`` when the groups match no set of axes."""
    groups: str = ""
    op_name: str | None = None
    file: str | None = None
    line: int | None = None
    computation: str = ""
    """The HLO computation holding it (``main``, a fusion, a called computation)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "operands": [{"shape": list(shape), "dtype": dtype} for shape, dtype in self.operands],
            "bytes": self.bytes,
            "axes": list(self.axes) if self.axes is not None else None,
            "groups": self.groups,
            "op_name": self.op_name,
            "file": self.file,
            "line": self.line,
            "computation": self.computation,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Collective:
        axes = data.get("axes")
        return cls(
            kind=data["kind"],
            operands=tuple((tuple(o["shape"]), o["dtype"]) for o in data.get("operands", [])),
            bytes=data["bytes"],
            axes=tuple(axes) if axes is not None else None,
            groups=data.get("groups", ""),
            op_name=data.get("op_name"),
            file=data.get("file"),
            line=data.get("line"),
            computation=data.get("computation", ""),
        )


@dataclass(frozen=True)
class CompiledInfo:
    """What compilation added: memory per device, aliasing, collectives."""

    memory: MemoryStats
    collectives: tuple[Collective, ...] = ()
    aliases: tuple[tuple[int, int], ...] = ()
    """(parameter number, output index) pairs the compiled program aliases."""
    notes: tuple[str, ...] = ()

    def bytes_by_axes(self) -> dict[str, int]:
        """Collective operand bytes per device, summed per set of mesh axes."""
        totals: dict[str, int] = {}
        for c in self.collectives:
            key = ",".join(c.axes) if c.axes is not None else "?"
            totals[key] = totals.get(key, 0) + c.bytes
        return dict(sorted(totals.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "collectives": [c.to_dict() for c in self.collectives],
            "collective_bytes_by_axes": self.bytes_by_axes(),
            "aliases": [list(pair) for pair in self.aliases],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompiledInfo:
        return cls(
            memory=MemoryStats.from_dict(data["memory"]),
            collectives=tuple(Collective.from_dict(c) for c in data.get("collectives", [])),
            aliases=tuple((int(a), int(b)) for a, b in data.get("aliases", [])),
            notes=tuple(data.get("notes", [])),
        )


@dataclass(frozen=True)
class InputsFrom:
    """Where the example inputs came from, when jxinspect built them on the user's
    behalf, and what it chose doing so."""

    source: Literal["annotations"]
    """``annotations``: the target's signature's (jaxtyping arrays, NamedTuples, …)."""
    dims: tuple[tuple[str, str], ...] = ()
    """Each named dimension used and its size as given (``("batch", "64@data")``,
    ``("lead", "(8,4)")``)."""
    dtypes: tuple[tuple[str, str], ...] = ()
    """Each abstract dtype family and the dtype it was built as (``("Float", "f32")``)."""
    choices: tuple[str, ...] = ()
    """Other choices: static arguments' values, arguments left to their defaults, sizes of
    anonymous and broadcastable dimensions."""
    given: tuple[str, ...] = ()
    """Arguments given by name instead (``--kwargs``)."""

    def __str__(self) -> str:
        parts = [f"from {self.source}"]
        if self.dims:
            parts.append("dims " + ", ".join(f"{name}={size}" for name, size in self.dims))
        if self.dtypes:
            parts.append(", ".join(f"{family} → {dtype}" for family, dtype in self.dtypes))
        if self.given:
            parts.append("given by name: " + ", ".join(self.given))
        parts.extend(self.choices)
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dims": {name: size for name, size in self.dims},
            "dtypes": {family: dtype for family, dtype in self.dtypes},
            "choices": list(self.choices),
            "given": list(self.given),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InputsFrom:
        return cls(
            source=data["source"],
            dims=tuple(data.get("dims", {}).items()),
            dtypes=tuple(data.get("dtypes", {}).items()),
            choices=tuple(data.get("choices", [])),
            given=tuple(data.get("given", [])),
        )


@dataclass(frozen=True, repr=False)
class Report(Displayed):
    """Everything jxinspect learned about one staged function."""

    product = "report"

    target: str
    stage: Stage | None
    """The staging API; ``None`` when read from a program text, which does not record it."""
    reached: Reached
    jax_version: str | None
    """``None`` when not recorded (read from a program text)."""
    platform: str | None
    """``None`` when not recorded (read from a program text)."""
    num_devices: int
    mesh: Mesh | None = None
    partitioner: Partitioner = "shardy"
    function: str | None = None
    """``func_src_info``: the function's name and where it is defined."""
    file: str | None = None
    line: int | None = None
    inputs: tuple[Input, ...] = ()
    static_args: tuple[StaticArg, ...] = ()
    outputs: tuple[Output, ...] = ()
    extra_args: tuple[ExtraArg, ...] = ()
    jaxpr: NestedJaxpr | None = None
    """Debug-info quality of the top-level jaxpr (the one that names the arguments)."""
    nested: tuple[NestedJaxpr, ...] = ()
    findings: tuple[Finding, ...] = ()
    compiled: CompiledInfo | None = None
    """Present once compiled (``--compile``)."""
    error: str | None = None
    """Why the next stage failed (e.g. lowering), when ``reached`` stopped short."""
    notes: tuple[str, ...] = ()
    """Things the tool did on the user's behalf, e.g. simulating CPU devices."""
    inputs_from: InputsFrom | None = None
    """How the example inputs were built when the user gave none (from annotations);
    ``None`` for inputs given (flags, a declaration, a configuration, a call)."""
    error_traceback: str | None = field(default=None, compare=False, repr=False)
    """The formatted traceback behind ``error``, for ``--traceback`` (not in the JSON)."""
    program: Program | None = field(default=None, compare=False, repr=False)
    """Annotated jaxpr and module texts for the views (not part of the JSON report)."""

    def with_findings(self, findings: tuple[Finding, ...]) -> Report:
        return replace(self, findings=findings)

    def show(self, view: str = "report") -> None:
        """Display ``report`` or one view (``sharding``; ``jaxpr`` and ``mlir`` when the
        report kept its texts): HTML in a notebook, coloured text in a console."""
        renderers().show(self, view)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "target": self.target,
            "function": self.function,
            "file": self.file,
            "line": self.line,
            "stage": self.stage,
            "reached": self.reached,
            "error": self.error,
            "jax_version": self.jax_version,
            "platform": self.platform,
            "num_devices": self.num_devices,
            "mesh": str(self.mesh) if self.mesh is not None else None,
            "abstract_mesh": self.mesh.abstract if self.mesh is not None else False,
            "partitioner": self.partitioner,
            "notes": list(self.notes),
            "inputs_from": self.inputs_from.to_dict() if self.inputs_from is not None else None,
            "inputs": [leaf.to_dict() for leaf in self.inputs],
            "static_args": [arg.to_dict() for arg in self.static_args],
            "outputs": [leaf.to_dict() for leaf in self.outputs],
            "extra_args": [arg.to_dict() for arg in self.extra_args],
            "jaxpr": self.jaxpr.to_dict() if self.jaxpr is not None else None,
            "nested": [nested.to_dict() for nested in self.nested],
            "findings": [finding.to_dict() for finding in self.findings],
            "compiled": self.compiled.to_dict() if self.compiled is not None else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """Read back :meth:`to_dict`'s output (``KeyError``/``TypeError`` if it is not one)."""
        mesh = data.get("mesh")
        return cls(
            target=data["target"],
            stage=_recorded(data["stage"]),
            reached=data["reached"],
            jax_version=_recorded(data["jax_version"]),
            platform=_recorded(data["platform"]),
            num_devices=data["num_devices"],
            mesh=Mesh.parse(mesh, data.get("abstract_mesh", False)) if mesh else None,
            partitioner=data.get("partitioner", "shardy"),
            function=data.get("function"),
            file=data.get("file"),
            line=data.get("line"),
            inputs=tuple(Input.from_dict(d) for d in data["inputs"]),
            static_args=tuple(StaticArg.from_dict(d) for d in data.get("static_args", [])),
            outputs=tuple(Output.from_dict(d) for d in data["outputs"]),
            extra_args=tuple(ExtraArg.from_dict(d) for d in data.get("extra_args", [])),
            jaxpr=NestedJaxpr.from_dict(data["jaxpr"]) if data.get("jaxpr") else None,
            nested=tuple(NestedJaxpr.from_dict(d) for d in data.get("nested", [])),
            findings=tuple(Finding.from_dict(d) for d in data.get("findings", [])),
            compiled=CompiledInfo.from_dict(data["compiled"]) if data.get("compiled") else None,
            error=data.get("error"),
            notes=tuple(data.get("notes", [])),
            inputs_from=InputsFrom.from_dict(data["inputs_from"])
            if data.get("inputs_from")
            else None,
        )
