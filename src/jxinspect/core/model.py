"""The report: what one staged function became, as plain frozen dataclasses.

This module never imports JAX. A :class:`Report` is built by ``jxinspect.tracer``,
judged by ``jxinspect.rules`` and drawn by ``jxinspect.render``. Its JSON form (schema
``jxinspect.report/1``, written and read by :mod:`jxinspect.core.codec` from these types
alone) is the interchange format: a report saved under one JAX version can be read back
and compared with one made under another. A field made with ``init=False`` is derived
(``__post_init__`` works it out) and written for readers of the JSON; reading it back
works it out again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Annotated, Literal, Protocol, TypeVar, get_args

from msgspec import Meta

from jxinspect.core.display import Displayed, renderers
from jxinspect.core.dtypes import element_bytes
from jxinspect.core.mesh import MAX_DEVICES as MAX_DEVICES
from jxinspect.core.mesh import Mesh as Mesh
from jxinspect.core.profile import Profile
from jxinspect.core.program import Program
from jxinspect.core.source import source_text
from jxinspect.core.specs import normalized_spec as normalized_spec
from jxinspect.core.specs import spec_text as spec_text
from jxinspect.core.units import human_bytes
from jxinspect.core.vocabulary import (
    SEVERITY_RANK,
    FailOn,
    Partitioner,
    Reached,
    Severity,
    Stage,
    Status,
)

__all__ = ["Reached", "Severity", "Status"]  # the model's words, defined in the vocabulary

_JAX_SOURCE = re.compile(r"[\\/]jax[\\/]_src[\\/]")
"""A path inside JAX's own package, where its functions live."""

Count = Annotated[int, Meta(ge=0)]
"""A count, an index or a size in bytes."""
Dim = Annotated[int, Meta(ge=-1)]
"""An array dimension; -1 for a symbolic one."""
Pieces = Annotated[int, Meta(ge=1, le=MAX_DEVICES)]
"""Pieces a dimension is cut into, or copies of a shard."""
Devices = Annotated[int, Meta(ge=1, le=MAX_DEVICES)]
"""A number of devices."""
AxisName = Annotated[
    str, Meta(pattern=r"^(?:(?!:\()[\s\S])*(?::\([1-9][0-9]{0,9}\)[1-9][0-9]{0,9})?$")
]
"""A mesh axis, or a Shardy sub-axis ``x:(2)4`` (the size of the axes before it, then its
own: both at least 1)."""
Code = Annotated[str, Meta(pattern="^JX[0-9]{3}$")]
"""A finding's code, ``JX101``."""

SCHEMA: Literal["jxinspect.report/1"] = "jxinspect.report/1"


def at_or_above(severity: Severity, fail_on: FailOn | None) -> bool:
    """Whether a ``severity`` reaches the gate ``fail_on`` (``never`` or ``None``: never)."""
    if fail_on is None or fail_on == "never":
        return False
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[fail_on]


def gate(findings: Iterable[Finding], fail_on: FailOn | None) -> bool:
    """The one gate: whether ``findings`` fail a run gated at ``fail_on`` (the CLI,
    ``lint``, ``record``, ``show`` and ``jxinspect.testing`` alike): one at or above it
    that is about the user's code."""
    return fails(gated(findings), fail_on)


def gated(findings: Iterable[Finding]) -> tuple[Severity, ...]:
    """The severities a gate judges: every finding's but those inside JAX's own code,
    which the user cannot change (kept where the findings are not)."""
    return tuple(f.severity for f in findings if not f.inside_jax)


def fails(severities: Iterable[Severity], fail_on: FailOn | None) -> bool:
    """Whether any of the :func:`gated` ``severities`` reaches ``fail_on``."""
    return any(at_or_above(s, fail_on) for s in severities)


def shard_bytes(shape: tuple[int, ...], dtype: str) -> int | None:
    """Bytes of an array of this shape; ``None`` when a dimension is symbolic (-1).
    (Cached: a model's leaves repeat a few shapes, and every leaf asks twice.)"""
    if any(d < 0 for d in shape):
        return None
    return int(math.prod(shape) * element_bytes(dtype))


ShardingKind = Literal["tiled", "replicated", "manual", "maximal", "unknown"]
ShardingSource = Literal[
    "sdy", "gspmd", "jax", "pmap", "compiled", "declared", "shard_map", "jax_default", ""
]
"""Where a sharding was read (see :attr:`Sharding.source`; ``""``: not said)."""


@dataclass(frozen=True)
class Sharding:
    """One array's layout across devices, the same whether read from Shardy or GSPMD."""

    readable: str = field(init=False, default="", compare=False, repr=False)
    """``P('data', None)``, ``replicated``, ``tiles[8,1]``…: derived (:meth:`describe`)."""
    kind: ShardingKind
    _: KW_ONLY
    mesh: Mesh | None = None
    """The mesh the axes refer to; ``None`` when only tile counts are known."""
    spec: tuple[tuple[AxisName, ...], ...] = ()
    """Mesh axes per array dimension; ``()`` for a dimension that is not split."""
    tiles: tuple[Pieces, ...] = ()
    """Pieces per dimension when no mesh names them (GSPMD without a known mesh)."""
    replicas: Pieces = 1
    """Devices that hold a copy of each shard (partial replication)."""
    source: ShardingSource = ""
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "readable", self.describe())

    def describe(self) -> str:
        """``P('data', None)``, ``P(('data', 'fsdp'), 'model')``, ``replicated``, ``manual``."""
        if self.kind == "tiled" and self.mesh is not None and not self.tiles:
            return spec_text(self.spec) if any(self.spec) else "replicated"
        if self.kind == "tiled":
            text = "tiles[" + ",".join(str(t) for t in self.tiles) + "]"
            return text + (f" x{self.replicas} copies" if self.replicas > 1 else "")
        return self.kind

    def for_rank(self, rank: int) -> Sharding:
        """This layout over an array of ``rank`` dimensions: a typed PRNG key's program
        value has its key's words as trailing dimensions (``key<fry>[8]`` is
        ``ui32[8,2]``), never split; they are dropped, so the layout reads against the
        type the user wrote (``P('batch')``, not ``P('batch', None)``). Unchanged where
        the trailing dimensions are split, or there are none."""
        extra = slice(rank, None)
        if len(self.spec) > rank and not any(self.spec[extra]):
            return replace(self, spec=self.spec[:rank], tiles=self.tiles[:rank])
        if not self.spec and len(self.tiles) > rank and all(t == 1 for t in self.tiles[extra]):
            return replace(self, tiles=self.tiles[:rank])
        return self

    @property
    def is_replicated(self) -> bool:
        return self.kind == "replicated" or (
            self.kind == "tiled" and all(p == 1 for p in self.pieces())
        )


def per_device(
    shape: tuple[int, ...], dtype: str, sharding: Sharding | None, one_device: bool
) -> tuple[tuple[int, ...] | None, int | None]:
    """The shape and bytes each device holds of a value: from its ``sharding``; the whole
    value where every device holds it whole (``one_device``, or no dimension over 1);
    unknown (``None``, ``None``) where the compiler picks its layout. The bytes are
    ``None`` too where a dimension is symbolic."""
    shard: tuple[int, ...] | None
    if sharding is not None:
        shard = sharding.shard_shape(shape)
    elif one_device or all(0 <= d <= 1 for d in shape):
        shard = shape
    else:
        return None, None
    return shard, shard_bytes(shard, dtype)


def known_sum(sizes: Iterable[int | None]) -> int | None:
    """The sum of ``sizes``; ``None`` where one is unknown."""
    total = 0
    for size in sizes:
        if size is None:
            return None
        total += size
    return total


Leaf = TypeVar("Leaf", "Input", "Output")


def _whole(leaves: tuple[Leaf, ...]) -> tuple[Leaf, ...]:
    """``leaves`` of a program of one device, each said to be whole there."""
    return tuple(leaf if leaf.one_device else replace(leaf, one_device=True) for leaf in leaves)


def _size_leaf(leaf: Input | Output, sharding: Sharding | None) -> None:
    """Work out a leaf's derived ``shard_shape`` and ``bytes_per_device``."""
    shard, size = per_device(leaf.shape, leaf.dtype, sharding, leaf.one_device)
    object.__setattr__(leaf, "shard_shape", shard)
    object.__setattr__(leaf, "bytes_per_device", size)


@dataclass(frozen=True)
class Input:
    """One flat array argument of the staged function."""

    index: Count
    """Position among the flat dynamic arguments (the jaxpr's invars)."""
    path: str
    """The name it should carry: parameter name plus pytree key path, ``params['w']``."""
    jaxpr_name: str | None
    """The name in the jaxpr's debug info (``None``: JAX recorded no names at all)."""
    name: str | None
    """The name the program carries: ``@main``'s argument location once lowered."""
    status: Status
    shape: tuple[Dim, ...]
    dtype: str
    sharding: Sharding | None = None
    """Declared sharding (``sdy.sharding`` or ``mhlo.sharding``), if any."""
    shard_shape: tuple[Dim, ...] | None = field(init=False, default=None, compare=False, repr=False)
    """Per-device shape: from the compiled sharding once compiled, else the declared one;
    the whole shape on one device; ``None`` (unknown) where neither is known on several
    devices, the compiler picking the layout (derived)."""
    bytes_per_device: Count | None = field(init=False, default=None, compare=False, repr=False)
    """Bytes each device holds; ``None`` where :attr:`shard_shape` is unknown or a
    dimension is symbolic, written -1 (derived)."""
    donated: bool = False
    """Donation was requested (``donate_argnums``/``donate_argnames``)."""
    aliased_output: int | None = None
    """``tf.aliasing_output``: the output this buffer is reused for."""
    buffer_donor: bool = False
    """``jax.buffer_donor = true``: donated, to be matched by the compiler."""
    memory_kind: str | None = None
    main_index: Count | None = None
    """Position in ``@main``; ``None`` when pruned or not lowered."""
    compiled_sharding: Sharding | None = None
    """The sharding XLA chose, once compiled."""
    compiled_alias: int | None = None
    """The output the compiled program reuses this buffer for (input/output alias)."""
    compiled_name: str | None = None
    """The name the compiled program's parameter carries (its op metadata), once compiled."""
    one_device: bool = False
    """The program runs on one device, which holds the value whole (its per-device size is
    known with no sharding)."""

    def __post_init__(self) -> None:
        _size_leaf(self, self.compiled_sharding or self.sharding)


@dataclass(frozen=True)
class Output:
    """One flat result of the staged function."""

    index: Count
    path: str
    """The path it should carry: ``result`` plus the output's pytree key path."""
    jaxpr_path: str | None
    """The path in the jaxpr's debug info."""
    name: str | None
    """``jax.result_info`` in ``@main`` once lowered."""
    status: Status
    shape: tuple[Dim, ...]
    dtype: str
    sharding: Sharding | None = None
    shard_shape: tuple[Dim, ...] | None = field(init=False, default=None, compare=False, repr=False)
    """Per-device shape: from the compiled sharding once compiled, else the declared one;
    the whole shape on one device; ``None`` (unknown) where neither is known on several
    devices, the compiler picking the layout (derived)."""
    bytes_per_device: Count | None = field(init=False, default=None, compare=False, repr=False)
    """Bytes each device holds; ``None`` where :attr:`shard_shape` is unknown or a
    dimension is symbolic, written -1 (derived)."""
    memory_kind: str | None = None
    compiled_sharding: Sharding | None = None
    """The sharding XLA chose, once compiled."""
    left_to_compiler: bool = False
    """``out_shardings`` gave it ``None``: its layout is left to the compiler as declared
    (the program reads as for a result given nothing)."""
    one_device: bool = False
    """The program runs on one device, which holds the value whole (its per-device size is
    known with no sharding)."""

    def __post_init__(self) -> None:
        _size_leaf(self, self.compiled_sharding or self.sharding)


@dataclass(frozen=True)
class StaticArg:
    """An argument that was baked into the program rather than passed to it."""

    path: str
    position: int | None
    """Positional index, or ``None`` for a keyword argument."""
    value: str
    """``repr`` of the value (truncated)."""


ExtraKind = Literal["token", "constant", "dimension"]
"""Why JAX added an argument: an effect token, a hoisted constant, a dimension variable."""


@dataclass(frozen=True)
class ExtraArg:
    """An argument JAX added to ``@main`` itself: a token, a hoisted constant, a dimension."""

    main_index: Count
    kind: ExtraKind
    type: str
    name: str | None


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
    num_invars: Count = 0
    num_outvars: Count = 0

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


@dataclass(frozen=True)
class Finding:
    """One thing worth telling: a stable code, a severity and a one-line message."""

    code: Code
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
    library_file: str | None = None
    """Where the finding is about a buffer, a collective or an operation made inside a
    library (Flax's ``linear.py``, optax's loss): that innermost frame, ``file``/``line``
    being the user's line that called it."""
    library_line: int | None = None


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
    host: int | None = None
    """Bytes per device the program keeps in host memory (its host arguments, outputs and
    temporaries: an offload applied); ``None`` where the backend gave none."""
    loaded_code: int | None = None
    """:attr:`generated_code` where the device loads it into the memory its buffers use (a
    TPU: HBM), so the HBM figures (JX302, the peak, JX307) count it; ``None`` where the
    code is not in device memory (CPU: the host's)."""


@dataclass(frozen=True)
class Topology:
    """The TPU a program was compiled for without one here (``--topology``): compiled by
    the TPU's own compiler (libtpu), never run."""

    name: str
    """The topology as libtpu names it: ``v5e:2x2``, ``v4:2x2x1``."""
    device_kind: str
    """The chip, as libtpu names it: ``TPU v5 lite``."""
    devices: Devices
    """The topology's devices (one per chip, or per core where a chip has two: v4)."""
    compiler: str
    """What compiled it: ``libtpu 0.0.42.1``."""
    hbm: int | None = None
    """The HBM one device has for a program, as the TPU compiler says it (refusing one
    too large for it: 15.75 GiB on a v5e); ``None``: it did not say."""
    slices: Devices = 1
    """How many slices of ``name`` it spans (``--slices``: multi-slice, joined by the
    data-center network); ``devices`` counts them all."""
    across_slices: tuple[str, ...] = ()
    """The mesh axes whose devices lie in different slices (their collectives cross the
    data-center network), as the mesh staged over lays them."""
    here: bool = False
    """The chips of this machine, the program staged on them (no ``--topology``): ``name``
    is then ``here``, ``hbm`` what the device's allocator may hand out (its
    ``memory_stats()``' ``bytes_limit``: on a v5e, the 15.75 GiB its compiler says)."""

    def __str__(self) -> str:
        devices = f"{self.devices} device" + ("s" if self.devices != 1 else "")
        if self.hbm is not None:
            devices += f", {human_bytes(self.hbm)} HBM each"
        if self.across_slices:
            devices += f"; {', '.join(self.across_slices)} across slices"
        if self.here:
            return f"{self.device_kind} ({devices}), {self.compiler}; this machine's"
        name = self.name if self.slices == 1 else f"{self.name} × {self.slices} slices"
        return f"{self.device_kind}, {name} ({devices}), {self.compiler}; not run"


@dataclass(frozen=True)
class Shortfall:
    """A program the TPU compiler refused for want of memory, per device, as it said it
    (``RESOURCE_EXHAUSTED: ... (16.50G) exceeds available HBM (15.75G)``)."""

    required: int | None
    """``None``: the compiler's words did not say it."""
    available: int | None


BufferKind = Literal["argument", "result", "temporary", "collective"]
"""What a buffer live at the peak holds: an argument, a result, a temporary, a
collective's buffer (constants are part of the program, as ``memory_analysis()`` counts
them)."""
BUFFER_KINDS: tuple[BufferKind, ...] = get_args(BufferKind)
BufferRole = Literal["forward", "residual", "backward", "update"]
"""What a temporary is for, read from its transformation path (``jvp``, ``transpose``):
the forward pass, kept for the backward pass, the backward pass, or an update after it."""


@dataclass(frozen=True)
class PeakBuffer:
    """One buffer live at the peak, per device (buffers sharing an allocation: once)."""

    bytes: int
    type: str
    """``f32[16,128]``; a tuple's pointer table ``(f32[8], s32[])``."""
    kind: BufferKind
    path: str | None = None
    """An argument's or result's pytree path; ``None`` for a temporary, or where the
    program's parameter or result has none."""
    instruction: str | None = None
    """The optimized program's instruction defining it."""
    file: str | None = None
    """The user's file and line that made it (see ``library_file``)."""
    line: int | None = None
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None
    role: BufferRole | None = None
    """``None``: the program does not differentiate, or the buffer is no temporary."""
    loop: str | None = None
    """The innermost ``while`` loop (a ``scan``, a ``fori_loop``) it lives in, by its
    instruction's name; ``None``: outside loops."""
    donated: bool = False
    """An argument whose buffer the program reuses for a result."""


@dataclass(frozen=True)
class PeakPoint:
    """Where in the program's schedule the peak is reached."""

    instruction: str
    file: str | None = None
    line: int | None = None
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None
    position: int | None = None
    """Its place in the schedule, flattened over loop bodies (0 first)."""
    of: int | None = None
    """The schedule's length."""


@dataclass(frozen=True)
class SpaceUse:
    """What a memory space other than the device's main one (a TPU's on-chip VMEM, SMEM)
    holds at its own peak, per device: listed apart, never added to the HBM figures."""

    space: str
    """``VMEM``, ``SMEM``, ``host``; ``space N`` for a number this reader does not name."""
    number: int
    """XLA's number for it (a layout's ``S(1)``, the buffer assignment's ``color``)."""
    bytes: int
    buffers: tuple[PeakBuffer, ...] = ()
    """Largest first."""


@dataclass(frozen=True)
class MemoryPeak:
    """The memory live per device at the peak, and what holds it (``lower --memory``).

    The peak is the point of the schedule where the most temporaries are live (each from
    the instruction defining it to the last one reading it, as XLA's live ranges count);
    the arguments' and results' allocations are held the whole run."""

    bytes: int | None
    """The buffers live at the peak; ``None``: not read (:attr:`unread`)."""
    allocated: int | None = None
    """Every allocation XLA made (``memory_analysis()``'s arguments, outputs and
    temporaries): at least :attr:`bytes`, more where the temporaries' heap is fragmented.
    On a device that loads its code into the same memory (a TPU), with the code: what it
    needs free to run the program, as a chip measures it."""
    at: PeakPoint | None = None
    """``None``: the program holds no temporaries."""
    buffers: tuple[PeakBuffer, ...] | None = ()
    """Largest first; ``None``: not read (:attr:`unread`)."""
    timeline: tuple[int, ...] = ()
    """The bytes live at each step of the schedule (flattened over loop bodies): the
    arguments and results, and the temporaries live then."""
    unread: str | None = None
    """Why the peak could not be read, in one line."""
    code: int | None = None
    """The executable's code, which the device loads into the same memory (a TPU: HBM),
    counted in :attr:`bytes` and the timeline; ``None`` where the code is not in device
    memory (CPU) or not known."""
    on_chip: tuple[SpaceUse, ...] | None = ()
    """The other memory spaces (VMEM, SMEM) at their own peaks, apart from :attr:`bytes`
    and :attr:`buffers` (which count the main memory, space 0, alone); ``()``: none used;
    ``None``: unknown (the analysis read cannot say a buffer's space)."""


ResidualSource = Literal["argument", "named", "output"]
"""Where a residual comes from, as ``print_saved_residuals`` says: an argument of the
function, a value the user named with ``checkpoint_name``, an operation's output."""


@dataclass(frozen=True)
class Residual:
    """A value the forward pass keeps for the backward pass (``lower --memory``), as
    ``jax.ad_checkpoint.print_saved_residuals`` names it."""

    type: str
    """``f32[16,128]``, its global type."""
    bytes: int
    """Its global bytes (its type's size)."""
    source: ResidualSource
    name: str | None = None
    """The argument's pytree path, the ``checkpoint_name``, or the operation
    (``tanh``); ``None`` where none is known."""
    file: str | None = None
    line: int | None = None
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None


@dataclass(frozen=True)
class Recomputed:
    """A forward value a ``jax.checkpoint`` runs again in the backward pass instead of
    keeping it (what its policy did not save), as JAX's own ``rematted_computation``
    scope marks the operation that makes it."""

    type: str
    """``f32[16,128]``, its global type."""
    bytes: int
    """Its global bytes (its type's size)."""
    operation: str
    """The operation that makes it (``sin``; ``name`` for a ``checkpoint_name``)."""
    name: str | None = None
    """The ``checkpoint_name`` it carries, for a ``name`` operation."""
    file: str | None = None
    line: int | None = None
    looped: bool = False
    """A loop (``scan``, ``while``) runs it: once per trip."""
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None


@dataclass(frozen=True)
class Offload:
    """A value the traced program moves to host memory (a ``jax.checkpoint`` policy's
    offload, a ``device_put`` to a host memory kind), which XLA may or may not apply."""

    type: str
    """``f32[64,256]``, its global type."""
    bytes: int
    memory_kind: str
    """Where it is asked to go: ``pinned_host`` (0.4: the memory kind named; from 0.7
    JAX says ``host`` memory, which it lowers to ``pinned_host``)."""
    name: str | None = None
    """Its ``checkpoint_name``, where one names the value moved."""
    file: str | None = None
    line: int | None = None
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None


@dataclass(frozen=True)
class Operand:
    """The type of one operand of a collective, per device."""

    shape: tuple[int, ...]
    dtype: str


OriginKind = Literal["argument", "result", "constraint", "shard_map", "type", "unknown"]
"""What declared a sharding the partitioner propagated: an argument's sharding (its
``in_shardings`` entry or the array's own), a result's out sharding, a
``with_sharding_constraint`` (or a ``reshard``), a ``shard_map``'s specs, the sharding
JAX typed an operation with over explicit axes (a constraint it writes after it);
``unknown``: a declaration Shardy named that the program does not show (one it added
itself)."""


class Placed(Protocol):
    """Anything made at a line of source: a buffer, a collective, an operation (the
    user's ``file``/``line``, the library's innermost frame beside it)."""

    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def library_file(self) -> str | None: ...
    @property
    def library_line(self) -> int | None: ...


def at_source(
    file: str | None,
    line: int | None,
    library_file: str | None = None,
    library_line: int | None = None,
) -> str:
    """`` at model.py:16``, `` at model.py:16 (flax/nnx/nn/linear.py:1342)`` with the
    library's frame it ran in (:func:`~jxinspect.core.source.source_text`); empty where
    neither line is known."""
    said = source_text(
        file if line else None, line, library_file if library_line else None, library_line
    )
    return f" at {said}" if said else ""


@dataclass(frozen=True)
class Hop:
    """Operations at one source line that passed an axis on, as Shardy's propagation
    edges record them (``lower --why``)."""

    operations: tuple[str, ...]
    """JAX's names for them (``tanh``, ``dot_general``), in the order they passed it."""
    file: str | None = None
    line: int | None = None
    """``None``: an operation the tool could not place in the source."""
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None

    @property
    def described(self) -> str:
        """``tanh, dot_general at model.py:16``."""
        return ", ".join(self.operations) + at_source(
            self.file, self.line, self.library_file, self.library_line
        )


@dataclass(frozen=True)
class Origin:
    """Where one mesh axis of a value's sharding came from, as Shardy's propagation
    recorded it (``lower --why``)."""

    value: str
    """``result``: the value the operation that needs the collective makes;
    ``operand N``: the operation's N-th operand; ``moved``: the argument, or the value
    returned as a result, that a collective with no line of its own reshards (0.12 names
    such a collective by the argument's path); ``shard_map body``: a collective the body
    of a shard_map makes itself."""
    axis: str
    kind: OriginKind
    sharding: str
    """The value's sharding after propagation (``P('data', 'model')``)."""
    path: str | None = None
    """The argument's or result's pytree path (kinds ``argument``, ``result``); the
    operation JAX typed (kind ``type``: ``dot_general``)."""
    file: str | None = None
    line: int | None = None
    """Where a constraint, a shard_map or a typed operation is in the source."""
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None
    via: tuple[Hop, ...] = ()
    """The operations that carried the axis from the declaration to the value, nearest
    the declaration first, one hop per source line (Shardy's propagation edges); ``()``:
    the value is where it was declared, or its operation took it straight from one."""

    @property
    def route(self) -> str:
        """`` via tanh at model.py:16`` (the first two hops and the last two where there
        are more); empty where :attr:`via` is."""
        hops = [hop.described for hop in self.via]
        if len(hops) > 4:
            hops = [*hops[:2], f"… {len(hops) - 4} more", *hops[-2:]]
        return f" via {' → '.join(hops)}" if hops else ""

    @property
    def declaration(self) -> str:
        """The declaration in words: ``argument `params['w']```, ``with_sharding_constraint
        at model.py:8``, ``the type of dot_general at model.py:6 (explicit axes)``…"""
        where = at_source(self.file, self.line, self.library_file, self.library_line)
        match self.kind:
            case "argument" | "result":
                return f"{self.kind} `{self.path or '?'}`"
            case "constraint":
                return f"with_sharding_constraint{where or ' (its line not found)'}"
            case "shard_map":
                return f"shard_map{where or ' (its line not found)'}"
            case "type":
                return f"the type of {self.path or 'an operation'}{where} (explicit axes)"
            case _:
                return "a constraint the partitioner added (no line of the program)"


@dataclass(frozen=True)
class ValueOrigins:
    """Why one value the user asked about (``lower --why-of``) is sharded as it is: its
    sharding after propagation and the declaration each of its mesh axes came from."""

    asked: str
    """As the user wrote it: an argument's or result's path, ``FILE:LINE`` or ``LINE``."""
    value: str | None
    """What was found: ``argument params['w']``, ``result``, or JAX's name for an operation
    at the line (``jit(step)/dot_general at model.py:40``); ``None``: nothing was."""
    sharding: str | None = None
    """``P('data', None)``, ``replicated``; ``None``: nothing was found."""
    origins: tuple[Origin, ...] = ()
    """One per mesh axis the value is sharded over; ``()``: it is sharded over none (see
    :attr:`declared`)."""
    declared: bool = False
    """Its sharding is its own declaration (an argument's sharding, a result's out
    sharding, a constraint), replicated or not; ``False`` with no origins: no
    declaration reaches it."""
    unfound: str | None = None
    """Why nothing was found for :attr:`asked`, in one line."""


@dataclass(frozen=True)
class DroppedAxes:
    """A value the partitioner left without mesh axes that declarations gave it (``lower
    --why``): Shardy's record names each axis's declaration on the value, and the value's
    sharding does not have the axis, so the devices along it each hold the same copy
    (JX204). A value whose own sharding the code declares is never one."""

    value: str
    """A result's path (``result['y']``), or JAX's name for the operation that makes the
    value (``jit(f)/reshape``)."""
    sharding: str
    """Its sharding after propagation: ``replicated``, ``P('data', None)``."""
    dropped: tuple[Origin, ...]
    """One per axis dropped: the declaration that gave it (``axis`` the axis)."""
    path: str | None = None
    """The result's pytree path where the value is a result."""
    file: str | None = None
    line: int | None = None
    """Where the operation that makes it is in the source."""
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None


INTERMEDIATE = "an intermediate"
"""What a collective moves where its data is no argument's or result's."""


@dataclass(frozen=True)
class Collective:
    """One collective in the optimized program."""

    kind: str
    """``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``, a permute…"""
    operands: tuple[Operand, ...]
    """Each operand's type, per device."""
    bytes: int
    """Operand bytes per device."""
    axes: tuple[str, ...] | None
    """The user's mesh axes it runs over; ``None`` when the groups match no set of axes."""
    groups: tuple[tuple[int, ...], ...] | None = None
    """The devices (ids, as ``jax.devices()`` numbers them) of each group it runs over,
    whichever spelling XLA wrote (lists, iota, the mesh form); ``None`` for a permute."""
    pairs: tuple[tuple[int, ...], ...] = ()
    """A ``collective-permute``'s (source, target) devices, by id."""
    instruction: str = ""
    """Its HLO instruction's name (an asynchronous pair: the ``-start``'s): one instruction
    is one collective."""
    op_name: str | None = None
    file: str | None = None
    line: int | None = None
    library_file: str | None = None
    """The innermost frame's file where it is a library's, not the user's (Flax's
    ``linear.py``, optax's loss): ``file``/``line`` are then the user's line that called
    it, or ``None`` where no frame of the user's is known."""
    library_line: int | None = None
    computation: str = ""
    """The HLO computation holding it (``main``, a fusion, a called computation)."""
    operand_paths: tuple[str, ...] = ()
    """The argument and result paths whose data it moves (``params['w']``, ``result``),
    followed through the optimized HLO's data flow; empty: it moves an intermediate."""
    loops: tuple[str, ...] = ()
    """The ``while`` loops (a ``scan``, a ``fori_loop``) it runs in, outermost first, by
    HLO instruction name."""
    trip_count: int | None = None
    """How many times it runs per call: its loops' known trip counts multiplied, 1 outside
    any loop; ``None`` where XLA does not know a loop's count (or it was not read)."""
    origins: tuple[Origin, ...] | None = None
    """Where the shardings of the operation that needs it came from, axis by axis
    (``--why``; ``()``: the partitioner recorded none for it); ``None``: not asked for,
    or not known: for every collective where :attr:`CompiledInfo.origins_unread` says
    why, for this one alone where none of the operations at its line lined up with the
    partitioner's record (XLA moved them), or several alike there (one line, one name)
    say different origins and none of them alone reads an argument it moves."""
    bytes_per_step: int = field(init=False, default=0, compare=False, repr=False)
    """``bytes`` × ``trip_count`` (``bytes`` where the count is not known) (derived)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bytes_per_step", self.bytes * (self.trip_count or 1))

    @property
    def axes_key(self) -> str:
        """Its mesh axes, comma-separated (``data,model``); ``?`` when its groups match no
        set of axes."""
        return ",".join(self.axes) if self.axes is not None else "?"

    @property
    def moved_paths(self) -> str | None:
        """The argument and result paths it moves, comma-separated (``None``: none, an
        intermediate): a finding's path."""
        return ", ".join(self.operand_paths) or None

    @property
    def moves(self) -> str:
        """:attr:`moved_paths`, or :data:`INTERMEDIATE` where it moves none."""
        return self.moved_paths or INTERMEDIATE

    @property
    def source(self) -> str | None:
        """``model.py:12``, where the HLO keeps its source line."""
        return f"{self.file}:{self.line}" if self.file is not None else None

    @property
    def described(self) -> str:
        """``all-gather over fsdp moving w (model.py:12)``: its kind, axes, the paths it
        moves and its source line where there is one."""
        where = f" ({self.source})" if self.source is not None else ""
        return f"{self.kind} over {self.axes_key} moving {self.moves}{where}"

    @property
    def pairing_key(self) -> CollectiveKey:
        """What pairs it with its counterpart in another compile of the program (a diff's
        other side, a baseline): kind, mesh axes, paths moved; never its line, which an
        edit above it moves."""
        return self.kind, self.axes_key, self.operand_paths


CollectiveKey = tuple[str, str, tuple[str, ...]]
"""(kind, mesh axes as :attr:`Collective.axes_key` writes them, paths moved)."""


@dataclass(frozen=True)
class AcceptedCollective:
    """A collective a lint baseline accepted: what pairs it, and its bytes per step."""

    kind: str
    axes: str
    """Its mesh axes as :attr:`Collective.axes_key` writes them (``data,model``, ``?``)."""
    paths: tuple[str, ...] = ()
    """The argument and result paths it moves (none: an intermediate)."""
    bytes_per_step: int = 0

    @property
    def key(self) -> CollectiveKey:
        """Equal to :attr:`Collective.pairing_key` of the collective it was made from."""
        return self.kind, self.axes, self.paths


@dataclass(frozen=True)
class AcceptedCost:
    """A target's compiled cost per device that a lint baseline accepted, which JX304 and
    JX305 judge the target's compiled program against (``--write-baseline`` writes it)."""

    target: str
    temporaries: int | None = None
    """XLA's temporaries per device (``None``: the backend did not say)."""
    collectives: tuple[AcceptedCollective, ...] | None = ()
    """``None``: the compiled program's collectives were not read."""

    @classmethod
    def of(cls, target: str, compiled: CompiledInfo) -> AcceptedCost:
        collectives = (
            tuple(
                AcceptedCollective(c.kind, c.axes_key, c.operand_paths, c.bytes_per_step)
                for c in compiled.collectives
            )
            if compiled.collectives is not None
            else None
        )
        return cls(target, compiled.memory.temporaries, collectives)


@dataclass(frozen=True)
class KernelBuffer:
    """An array a kernel reads or writes, per device."""

    role: Literal["operand", "result"]
    type: str
    """``f32[512,512]``."""
    bytes: int
    space: str
    """The memory it is in, from its layout: ``HBM`` (space 0; a CPU's memory), ``VMEM``,
    ``SMEM``, ``host``."""


@dataclass(frozen=True)
class Kernel:
    """A custom call of the optimized program: a Pallas/Mosaic kernel (``tpu_custom_call``)
    or another one XLA runs as is (a LAPACK routine, a callback)."""

    name: str
    """The kernel's own name (a Pallas kernel's function, read from its Mosaic module),
    else the custom call's target."""
    target: str
    """``custom_call_target``: ``tpu_custom_call`` for a Mosaic (Pallas) kernel."""
    instruction: str
    file: str | None = None
    line: int | None = None
    """The user's call: the innermost frame in the user's files (not a library's)."""
    library_file: str | None = None
    library_line: int | None = None
    """The innermost frame where it is not the user's (a library's ``pallas_call``)."""
    flops: float | None = None
    """Its cost estimate (Pallas ``CostEstimate``, which XLA's ``cost_analysis`` adds to the
    program's); ``None``: unknown (no estimate: XLA counts it as nothing)."""
    transcendentals: float | None = None
    bytes_accessed: float | None = None
    costless: bool = False
    """A call that does no arithmetic on the device (a host callback, a placement
    annotation): its FLOPs are 0, not unknown."""
    buffers: tuple[KernelBuffer, ...] = ()
    """Its operands, then its results."""

    @property
    def uncosted(self) -> bool:
        """Whether its FLOPs are unknown: no cost estimate, and it may do arithmetic."""
        return self.flops is None and not self.costless


@dataclass(frozen=True)
class CompiledInfo:
    """What compilation added: memory per device, aliasing, collectives."""

    memory: MemoryStats
    collectives: tuple[Collective, ...] | None = ()
    """Every collective instruction of the optimized program; ``None``: not read
    (:attr:`unread` says why), never ``()`` for a program that was not read."""
    collective_bytes_by_axes: dict[str, int] = field(
        init=False, default_factory=dict, compare=False, repr=False
    )
    """Collective operand bytes per device, summed per set of mesh axes (``?`` for a
    collective whose groups match no set of axes), in axes order (derived; empty where
    the collectives were not read)."""
    aliases: tuple[tuple[int, int], ...] | None = ()
    """(parameter number, output index) pairs the compiled program aliases; ``None``: not
    read."""
    notes: tuple[str, ...] = ()
    flops: float | None = None
    """Floating-point operations per device, XLA's ``cost_analysis()``; ``None`` where
    the backend gave none, or where a kernel's cost is unknown (:attr:`flops_known_part`)."""
    flops_known_part: float | None = None
    """Where a kernel has no cost estimate (XLA counts it as nothing): what
    ``cost_analysis()`` says, the part known; ``None`` otherwise."""
    kernels: tuple[Kernel, ...] | None = ()
    """Every custom call of the optimized program (Pallas/Mosaic kernels and others), in
    program order; ``None``: not read (:attr:`unread`)."""
    bytes_accessed: float | None = None
    """Bytes read and written per device, XLA's ``cost_analysis()``; ``None`` where the
    backend gave none."""
    peak: MemoryPeak | None = None
    """The peak and the buffers live there (``--memory``); ``None``: not asked for."""
    offloads: tuple[Offload, ...] = ()
    """What the traced program moves to host memory (top level), whether XLA applied it
    or not (:attr:`MemoryStats.host` says what the compiled program keeps there)."""
    residuals: tuple[Residual, ...] | None = None
    """What the forward pass keeps for the backward pass, read from the traced program
    where it differentiates (``--memory``; ``()``: it does not); ``None``: not asked for,
    or a release whose jaxprs do not say which pass an equation is in (before 0.7)."""
    recomputed: tuple[Recomputed, ...] | None = None
    """``--memory``: what checkpoint policies run again in the backward pass instead of
    keeping it, at any depth (``()``: nothing); ``None``: not asked for."""
    origins_unread: str | None = None
    """Why the collectives' origins (``--why``) are not known, in one line (the
    partitioner keeps no provenance, its debug run crashed)."""
    why_of: tuple[ValueOrigins, ...] = ()
    """The values asked about with ``--why-of``, each operation found at an asked line
    one entry; ``()``: none asked (or :attr:`origins_unread` says why none is known)."""
    dropped: tuple[DroppedAxes, ...] | None = None
    """``--why``: the values the partitioner left without an axis a declaration gave them
    (``()``: none); ``None``: not asked for, or not known (:attr:`origins_unread`)."""
    unread: str | None = None
    """Why the optimized program could not be read, in one line (what failed, under
    which JAX); its collectives and aliases are then unknown (``None``)."""
    unread_error: str | None = field(
        default=None, compare=False, repr=False, metadata={"written": False}
    )
    """The whole error behind :attr:`unread`, for ``--traceback`` (not in the JSON)."""

    @property
    def uncosted(self) -> tuple[Kernel, ...]:
        """The kernels whose FLOPs are unknown (no cost estimate; XLA counts them as
        nothing), in program order."""
        return tuple(k for k in self.kernels or () if k.uncosted)

    @property
    def origins_read(self) -> bool:
        """Whether ``--why`` asked for the partitioner's record and it was read (then a
        collective without origins is one that did not line up with it)."""
        return self.dropped is not None

    def __post_init__(self) -> None:
        totals: dict[str, int] = {}
        for c in self.collectives or ():
            totals[c.axes_key] = totals.get(c.axes_key, 0) + c.bytes
        object.__setattr__(self, "collective_bytes_by_axes", dict(sorted(totals.items())))


@dataclass(frozen=True)
class InputsFrom:
    """Where the example inputs came from, when jxinspect built them on the user's
    behalf, and what it chose doing so."""

    source: Literal["annotations"]
    """``annotations``: the target's signature's (jaxtyping arrays, NamedTuples, …)."""
    dims: dict[str, str] = field(default_factory=dict)
    """Each named dimension used and its size as given (``{"batch": "64@data",
    "lead": "(8,4)"}``)."""
    dtypes: dict[str, str] = field(default_factory=dict)
    """Each abstract dtype family and the dtype it was built as (``{"Float": "f32"}``)."""
    choices: tuple[str, ...] = ()
    """Other choices: static arguments' values, arguments left to their defaults, sizes of
    anonymous and broadcastable dimensions."""
    given: tuple[str, ...] = ()
    """Arguments given by name instead (``--kwargs``)."""

    def __str__(self) -> str:
        parts = [f"from {self.source}"]
        if self.dims:
            parts.append("dims " + ", ".join(f"{name}={size}" for name, size in self.dims.items()))
        if self.dtypes:
            parts.append(", ".join(f"{family} → {dtype}" for family, dtype in self.dtypes.items()))
        if self.given:
            parts.append("given by name: " + ", ".join(self.given))
        parts.extend(self.choices)
        return "; ".join(parts)


@dataclass(frozen=True, kw_only=True, repr=False)
class Report(Displayed):
    """Everything jxinspect learned about one staged function."""

    product = "report"

    schema: Literal["jxinspect.report/1"] = field(init=False, default_factory=lambda: SCHEMA)
    """The format's name and version: a reader of another version says to regenerate."""
    target: str
    function: str | None = None
    """``func_src_info``: the function's name and where it is defined."""
    file: str | None = None
    line: int | None = None
    stage: Stage | None
    """The staging API; ``None`` when read from a program text, which does not record it."""
    reached: Reached
    error: str | None = None
    """Why the next stage failed (e.g. lowering), when ``reached`` stopped short."""
    jax_version: str | None
    """``None`` when not recorded (read from a program text)."""
    platform: str | None
    """``None`` when not recorded (read from a program text)."""
    num_devices: Devices
    mesh: Mesh | None = None
    abstract_mesh: bool = field(init=False, default=False, compare=False)
    """Whether ``mesh`` is an ``AbstractMesh`` (derived from ``mesh``; read back into it)."""
    axis_types: tuple[str, ...] | None = None
    """Each axis of ``mesh``'s type as JAX names it (``Auto``, ``Explicit``, ``Manual``),
    from the mesh the program was staged over; ``None`` where the release has none (0.4)
    or no JAX mesh was at hand (a program read from text, a pmap)."""
    partitioner: Partitioner = "shardy"
    topology: Topology | None = None
    """The TPU topology the program was compiled for (``--topology``); ``None``: the
    devices of :attr:`platform` here."""
    does_not_fit: Shortfall | None = None
    """Compiled for a TPU topology, the compiler refused the program for want of memory
    (:attr:`error` holds its words); ``None``: it did not."""
    notes: tuple[str, ...] = ()
    """Things the tool did on the user's behalf, e.g. simulating CPU devices."""
    inputs_from: InputsFrom | None = None
    """How the example inputs were built when the user gave none (from annotations);
    ``None`` for inputs given (flags, a declaration, a configuration, a call)."""
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
    profile: Profile | None = None
    """Its steps, measured (``jxinspect profile``); ``None``: not run."""
    error_traceback: str | None = field(
        default=None, compare=False, repr=False, metadata={"written": False}
    )
    """The formatted traceback behind ``error``, for ``--traceback`` (not in the JSON)."""
    program: Program | None = field(
        default=None, compare=False, repr=False, metadata={"written": False}
    )
    """Annotated jaxpr and module texts for the views (not in the JSON)."""

    def __post_init__(self) -> None:
        mesh = self.mesh
        if mesh is not None and self.abstract_mesh and not mesh.abstract:  # read back
            object.__setattr__(self, "mesh", Mesh(mesh.axes, abstract=True))
        object.__setattr__(self, "abstract_mesh", bool(self.mesh and self.mesh.abstract))
        if self.num_devices == 1 and not (
            all(leaf.one_device for leaf in self.inputs)
            and all(leaf.one_device for leaf in self.outputs)
        ):  # a report written before leaves said so: one device holds each whole
            object.__setattr__(self, "inputs", _whole(self.inputs))
            object.__setattr__(self, "outputs", _whole(self.outputs))

    def with_findings(self, findings: tuple[Finding, ...]) -> Report:
        return replace(self, findings=findings)

    @property
    def meshes(self) -> tuple[Mesh, ...]:
        """Every mesh the program's arguments and results are laid out over (declared or
        compiled), :attr:`mesh` first; a mesh without axes left out."""
        leaves: list[Input | Output] = [*self.inputs, *self.outputs]
        layouts = [s for leaf in leaves for s in (leaf.sharding, leaf.compiled_sharding)]
        found = [self.mesh] + [s.mesh for s in layouts if s is not None]
        return tuple(dict.fromkeys(m for m in found if m is not None and m.axes))

    def show(self, view: str = "report") -> None:
        """Display ``report`` or one view (``sharding``; ``jaxpr`` and ``mlir`` when the
        report kept its texts): HTML in a notebook, coloured text in a console."""
        renderers().show(self, view)
