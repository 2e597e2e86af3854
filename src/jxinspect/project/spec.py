"""A small, safe spec language for example inputs: ``f32[8@data,128]``, ``P('data')``, ...

Text is parsed by the language's own tokenizer and parser (:mod:`.spec_syntax`) into a
small syntax tree, read by a walker that accepts only the node types each reader allows.
Nothing is ever evaluated; every failure is a one-line :class:`SpecError`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, NoReturn, TypeAlias, TypeVar

from jxinspect.core import dtypes
from jxinspect.core.errors import UsageError
from jxinspect.project import spec_syntax as syn
from jxinspect.project.spec_syntax import MAX_DEPTH as MAX_DEPTH
from jxinspect.project.spec_syntax import SpecError as SpecError

MAX_LEN = 100_000  # characters of spec text
MAX_VALUES = 100_000
"""Values (arrays, literals, containers) one spec may make, repetitions counted: a
spec without one cannot reach it, so ``[f32[1]] * 10_000`` reads and ``* 10**9`` is
one error, not a billion abstract arrays."""
MAX_DIM = 2**63 - 1

# Short names the way jaxprs print them, from the one dtype table.
SHORT_DTYPES: dict[str, str] = {d.short: d.name for d in dtypes.TABLE}
_DTYPES = {**{v: v for v in SHORT_DTYPES.values()}, **SHORT_DTYPES, "bool_": "bool"}
_COMMON = ("f32", "bf16", "f16", "i32", "bool")


short_dtype = dtypes.short_name


def _short(value: object) -> str:
    r = repr(value)
    return r if len(r) <= 40 else r[:37] + "..."


@dataclass(frozen=True)
class ArraySpec:
    """An abstract array: numpy dtype name, shape and the mesh axes of each dim."""

    dtype: str
    shape: tuple[int, ...]
    axes: tuple[tuple[str, ...], ...] = ()  # () on construction: no dim sharded

    def __post_init__(self) -> None:
        if not self.axes and self.shape:
            object.__setattr__(self, "axes", ((),) * len(self.shape))
        if len(self.axes) != len(self.shape):
            raise ValueError(f"axes {self.axes} do not match shape {self.shape}")

    @property
    def sharded(self) -> bool:
        """Whether any dim carries mesh axes."""
        return any(self.axes)

    def __str__(self) -> str:
        dims = [
            str(n) if not a else f"{n}@{a[0]}" if len(a) == 1 else f"{n}@({','.join(a)})"
            for n, a in zip(self.shape, self.axes)
        ]
        return f"{short_dtype(self.dtype)}[{','.join(dims)}]"


PEntry: TypeAlias = str | tuple[str, ...] | None


@dataclass(frozen=True)
class PSpec:
    """A partition spec, written ``P('data', None)``."""

    entries: tuple[PEntry, ...]

    def __str__(self) -> str:
        def entry(e: PEntry) -> str:
            if not isinstance(e, tuple):
                return repr(e)
            return "(" + ", ".join(map(repr, e)) + ("," if len(e) == 1 else "") + ")"

        return "P(" + ", ".join(map(entry, self.entries)) + ")"


@dataclass(frozen=True)
class Struct:
    """A NamedTuple or dataclass pytree node, written as its class's import path called
    with its fields: ``optax.ScaleByAdamState(count=i32[], mu=f32[3], nu=f32[3])``. The
    path is only a name here; the tracer imports it and builds the class."""

    path: str
    fields: tuple[tuple[str, object], ...]
    cls: type | None = field(default=None, compare=False)
    """The class itself, where it is known (read from an annotation): built from its
    fields without running its ``__init__`` (an ``eqx.Module``'s takes other arguments)."""


ModelLibrary: TypeAlias = Literal["equinox", "nnx", "python"]
"""How a model is built by its own constructor (:class:`Constructed`): an Equinox or NNX
model abstractly; ``python``, a method's ``self`` that is no pytree (JAX stages it as a
static value), by calling its class with Python values."""


@dataclass(frozen=True)
class Seed:
    """The PRNG argument of a model's constructor: ``jax.random.key(0)`` for a ``key``,
    ``nnx.Rngs(0)`` for ``rngs`` (under ``eval_shape``, so no number is drawn)."""

    kind: Literal["key", "rngs"]


@dataclass(frozen=True)
class Constructed:
    """A model built abstractly by its own constructor: ``eqx.filter_eval_shape`` (or
    ``nnx.eval_shape``) of ``cls(**arguments)``, nothing allocated; or a method's
    ``self`` that is no pytree, ``cls(**arguments)`` of Python values (``python``); read
    from an annotation (no spec text writes one)."""

    path: str
    """The class's import path, as the report names it."""
    library: ModelLibrary
    arguments: tuple[tuple[str, object], ...]
    """The constructor's arguments by name: spec values, a :class:`Seed` for its key."""
    cls: type | None = field(default=None, compare=False)


OptimizerLibrary: TypeAlias = Literal["optax", "equinox", "nnx"]


@dataclass(frozen=True)
class OptimizerState:
    """An optimizer's state, built abstractly by the step's own optimizer over another
    argument's value: ``jax.eval_shape(optim.init, params)`` (``optax``),
    ``eqx.filter_eval_shape(lambda m: optim.init(eqx.filter(m, eqx.is_array)), model)``
    (``equinox``), or ``nnx.eval_shape(lambda: nnx.Optimizer(Model(...), tx, wrt=...))``
    (``nnx``: ``params`` is the :class:`Constructed` model); read from the step's code
    (no spec text writes one)."""

    optimizer: str
    """The optimizer's name in the target's module (``optim``)."""
    library: OptimizerLibrary
    params: object
    """The spec value the state is built over."""
    transform: object = field(default=None, compare=False)
    """The optax ``GradientTransformation`` itself."""
    wrt: object = field(default=None, compare=False)
    """NNX: the ``wrt`` filter; ``None`` for ``nnx.Param``."""


_Leaf = Callable[[syn.Node], object]


class _SpecReader:
    """One spec text, parsed as the arguments of a call; the walker of its tree."""

    def __init__(self, text: str) -> None:
        self.text = text
        if len(text) > MAX_LEN:
            self.fail_at(MAX_LEN, f"spec longer than {MAX_LEN} characters")
        for i, c in enumerate(text):
            if c == "\0" or "\ud800" <= c <= "\udfff":
                self.fail_at(i, f"invalid character {c!r}")
        self.args, self.keywords = syn.parse(text)
        self.values = 0  # made so far, repetitions counted (MAX_VALUES)

    def fail_at(self, column: int, reason: str) -> NoReturn:
        raise SpecError(self.text, column, reason)

    def fail(self, node: syn.Node, reason: str) -> NoReturn:
        self.fail_at(node.col, reason)

    # ---- the walker: each method accepts a few node types and fails on the rest ----
    def tree(self, node: syn.Node, leaf: _Leaf, depth: int = 0) -> object:
        """Tuples, lists and dicts of whatever ``leaf`` accepts."""
        if depth > MAX_DEPTH:
            self.fail(node, f"nesting deeper than {MAX_DEPTH}")
        if isinstance(node, syn.BinOp) and node.op == "*":
            return self.repeat(node, leaf, depth)
        self.values += 1
        if isinstance(node, (syn.Tuple, syn.List)):
            items = [self.tree(e, leaf, depth + 1) for e in node.items]
            return tuple(items) if isinstance(node, syn.Tuple) else items
        if isinstance(node, syn.Call) and isinstance(node.func, syn.Attribute):
            return self.struct(node, leaf, depth)
        if not isinstance(node, syn.Dict):
            return leaf(node)
        out: dict[object, object] = {}
        for k, v in zip(node.keys, node.values):
            key = self.name(k) if isinstance(k, syn.Name) else self.literal(k)
            if not isinstance(key, str) and type(key) is not int:
                self.fail(k, "dict keys must be identifiers, strings or ints")
            if key in out:
                self.fail(k, f"duplicate key {_short(key)}")
            if out and type(key) is not type(next(iter(out))):
                self.fail(k, "dict keys must be all strings or all ints")
            out[key] = self.tree(v, leaf, depth + 1)
        return out

    def repeat(self, node: syn.BinOp, leaf: _Leaf, depth: int) -> object:
        """``[f32[512,512]] * 4`` (or ``4 * [...]``, a tuple alike): the sequence's items
        repeated, as Python repeats them; at most :data:`MAX_VALUES` values made."""
        sequence, count = node.left, node.right
        if not _is_sequence(sequence):
            sequence, count = count, sequence
            if not _is_sequence(sequence):
                self.fail(node, "'*' repeats a list or tuple, e.g. [f32[512,512]] * 4")
        times = self.literal(count) if isinstance(count, (syn.Const, syn.Neg)) else None
        if type(times) is not int or times < 0:
            self.fail(count, "a repetition count must be a non-negative int, e.g. [f32[8]] * 4")
        before = self.values
        items = self.tree(sequence, leaf, depth)
        assert isinstance(items, (list, tuple))  # a List, Tuple or repetition node
        self.values += (self.values - before - 1) * (times - 1)
        if self.values > MAX_VALUES:
            self.fail(count, f"a repetition makes more than {MAX_VALUES} values")
        return items * times

    def struct(self, node: syn.Call, leaf: _Leaf, depth: int) -> Struct:
        """``module.Class(field=value, ...)``: a NamedTuple or dataclass by import path."""
        parts, func = [], node.func
        while isinstance(func, syn.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, syn.Name):
            self.fail(node.func, "expected an import path, e.g. optax.ScaleByAdamState(...)")
        path = ".".join([func.id, *reversed(parts)])
        if node.args:
            self.fail(node.args[0], f"{_short(path)}(...) takes its fields by name: field=value")
        fields: list[tuple[str, object]] = []
        for k in node.keywords:
            if any(k.arg == name for name, _ in fields):
                self.fail(k, f"field {_short(k.arg)} given twice")
            fields.append((k.arg, self.tree(k.value, leaf, depth + 1)))
        return Struct(path, tuple(fields))

    def literal(self, node: syn.Node) -> object:
        """An int, float (maybe negated), str, True, False or None."""
        if isinstance(node, syn.Const):
            if node.value is None or isinstance(node.value, (bool, int, float, str)):
                return node.value
            self.fail(node, f"{type(node.value).__name__} literals are not allowed")
        if isinstance(node, syn.Neg):
            v = node.operand.value if isinstance(node.operand, syn.Const) else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
            self.fail(node, "'-' must be followed by a number")
        if isinstance(node, syn.Name):
            self.fail(
                node,
                f"bare name {_short(node.id)} is not a value"
                " (quote strings; arrays look like f32[3])",
            )
        if isinstance(node, syn.BinOp) and node.op == "@":
            self.fail(node, "'@' is only allowed on array dims, e.g. f32[8@data]")
        if isinstance(node, syn.BinOp) and node.op == "*":
            self.fail(node, "'*' repeats a list or tuple, e.g. [f32[512,512]] * 4")
        if isinstance(node, syn.Attribute):
            self.fail(node, "a dotted name is only allowed as a class called with its fields, "
                      "e.g. optax.EmptyState()")  # fmt: skip
        self.fail(node, f"{node.kind} expressions are not allowed")

    def value(self, node: syn.Node) -> object:
        """An array, ``P(...)`` or literal."""
        if isinstance(node, syn.Subscript):
            return self.array(node)
        return self.pspec(node) if isinstance(node, syn.Call) else self.literal(node)

    def array(self, node: syn.Subscript) -> ArraySpec:
        """``dtype[dim, ...]``, each dim ``N``, ``N@axis`` or ``N@(axis, ...)``."""
        if not isinstance(node.value, syn.Name):
            self.fail(node, "only a dtype name can be subscripted, e.g. f32[3]")
        name = node.value.id
        if name not in _DTYPES:
            close = difflib.get_close_matches(name, list(_DTYPES), n=3)
            hint = ", ".join(dict.fromkeys([*close, *_COMMON]))
            self.fail(node.value, f"unknown dtype {_short(name)} (expected one of {hint}, ...)")
        dims = node.index.items if isinstance(node.index, syn.Tuple) else (node.index,)
        shape, axes, seen = list[int](), list[tuple[str, ...]](), set[str]()
        for dim in dims:
            size, names = self.dim(dim, seen)
            shape.append(size)
            axes.append(names)
        return ArraySpec(_DTYPES[name], tuple(shape), tuple(axes))

    def dim(self, dim: syn.Node, seen: set[str]) -> tuple[int, tuple[str, ...]]:
        """One array dim, ``N``, ``N@axis`` or ``N@(axis, ...)``: its size and mesh axes
        (each used once within ``seen``)."""
        names: tuple[str, ...] = ()
        if isinstance(dim, syn.BinOp) and dim.op == "@":
            if isinstance(dim.left, syn.BinOp):
                self.fail(dim.left, "one '@' per dim; write 8@(data,fsdp)")
            at = dim.right.items if isinstance(dim.right, syn.Tuple) else (dim.right,)
            if not at or not all(isinstance(a, syn.Name) for a in at):
                self.fail(dim.right, "expected mesh axis names after '@', e.g. 8@(data,fsdp)")
            names, dim = tuple(self.name(a, seen) for a in at), dim.left
        if not (isinstance(dim, syn.Const) and type(dim.value) is int):
            self.fail(dim, "array dims must be non-negative ints")
        if dim.value > MAX_DIM:
            self.fail(dim, "array dim too large")
        return dim.value, names

    def pspec(self, node: syn.Node) -> PSpec:
        """``P(entry, ...)``, each entry None, an axis name or a tuple of names."""
        if not isinstance(node, syn.Call):
            self.fail(node, "expected P(...) or None")
        if not (isinstance(node.func, syn.Name) and node.func.id == "P"):
            self.fail(node.func, "only P(...) calls are allowed")
        if node.keywords:
            self.fail(node.keywords[0], "P(...) takes no keyword arguments")
        seen, entries = set[str](), list[PEntry]()
        for arg in node.args:
            if _is_none(arg):
                entries.append(None)
            elif isinstance(arg, (syn.Tuple, syn.List)):
                entries.append(tuple(self.name(e, seen) for e in arg.items))
            else:
                entries.append(self.name(arg, seen))
        return PSpec(tuple(entries))

    def name(self, node: syn.Node, seen: set[str] | None = None) -> str:
        """A bare or quoted name, unique within ``seen``."""
        if isinstance(node, syn.Name):
            name = node.id
        elif isinstance(node, syn.Const) and isinstance(node.value, str):
            name = node.value
        else:
            self.fail(node, "expected a name")
        if seen is not None:
            if name in seen:
                self.fail(node, f"{_short(name)} used twice")
            seen.add(name)
        return name

    def int_(self, node: syn.Node) -> int:
        value = self.literal(node)
        if type(value) is not int:
            self.fail(node, "expected an int")
        return value

    def positional(self, unwrap: bool = False) -> Sequence[syn.Node]:
        """The top-level values (no name=value); optionally unwrap one (...) or [...]."""
        if self.keywords:
            self.fail(self.keywords[0], "unexpected name=value here")
        if unwrap and len(self.args) == 1 and isinstance(self.args[0], (syn.Tuple, syn.List)):
            return self.args[0].items
        return self.args

    def named(self) -> list[tuple[str, syn.Node, syn.Node]]:
        """``name=value`` pairs, or the items of one ``{name: value}`` dict."""
        seen = set[str]()
        if not self.args:
            for k in self.keywords:
                if k.arg in seen:
                    self.fail(k, f"{_short(k.arg)} used twice")
                seen.add(k.arg)
            return [(k.arg, k, k.value) for k in self.keywords]
        d = self.args[0]
        if self.keywords or len(self.args) > 1 or not isinstance(d, syn.Dict):
            self.fail(d, "expected name=value pairs or one {name: value} dict")
        return [(self.name(k, seen), k, v) for k, v in zip(d.keys, d.values)]


def _is_sequence(node: syn.Node) -> bool:
    """A list or tuple display, or a repetition of one."""
    return isinstance(node, (syn.List, syn.Tuple)) or isinstance(node, syn.BinOp) and node.op == "*"


def _is_none(node: syn.Node) -> bool:
    return isinstance(node, syn.Const) and node.value is None


_Parsed = TypeVar("_Parsed")


def parse_flag(flag: str, parser: Callable[[str], _Parsed], text: str) -> _Parsed:
    """``text``, given for ``flag`` (``--args``, a config key's flag), read by ``parser``:
    a :class:`SpecError` is a :class:`~jxinspect.core.errors.UsageError` naming the flag."""
    try:
        return parser(text)
    except SpecError as err:
        raise UsageError(f"{flag}: {err}") from None


def parse_args(text: str) -> tuple[object, ...]:
    """Comma-separated values; ``"(a, b)"`` is one tuple value and ``""`` is ``()``."""
    r = _SpecReader(text)
    return tuple(r.tree(a, r.value) for a in r.positional())


def parse_kwargs(text: str) -> dict[str, object]:
    """``x=f32[3], scale=2.0`` or ``{x: f32[3], 'scale': 2.0}``; ``""`` is ``{}``."""
    r = _SpecReader(text)
    return {name: r.tree(v, r.value) for name, _, v in r.named()}


def parse_mesh(text: str) -> tuple[tuple[str, int], ...]:
    """``data=2,model=4`` (or ``{data: 2, model: 4}``) -> ``(("data", 2), ("model", 4))``."""
    r = _SpecReader(text)
    out = []
    for name, key, v in r.named():
        if not name.isidentifier():
            r.fail(key, f"mesh axis name {_short(name)} is not an identifier")
        out.append((name, r.int_(v)))
        if out[-1][1] <= 0:
            r.fail(v, "mesh axis sizes must be positive")
    return tuple(out)


@dataclass(frozen=True)
class Dim:
    """The size of one named dimension, and the mesh axes it is sharded over."""

    size: int
    axes: tuple[str, ...] = ()

    def __str__(self) -> str:
        a = self.axes
        return (
            str(self.size)
            if not a
            else f"{self.size}@{a[0]}"
            if len(a) == 1
            else (f"{self.size}@({','.join(a)})")
        )


DimValue: TypeAlias = Dim | tuple[Dim, ...]
"""A named dimension's size, or a variadic one's sizes (``*batch``)."""


def dim_text(value: DimValue) -> str:
    """``8``, ``64@data``, ``(8,4)``, ``()``: as :func:`parse_dims` reads it."""
    if isinstance(value, Dim):
        return str(value)
    return "(" + ",".join(map(str, value)) + ("," if len(value) == 1 else "") + ")"


def parse_dims(text: str) -> tuple[tuple[str, DimValue], ...]:
    """``batch=8, seq=128``, ``batch=64@data``, a variadic one's sizes ``batch=(8,4)``
    (``()``: none), or ``{batch: 8}`` → ``(("batch", Dim(8)), ...)``; ``""`` is ``()``."""
    r = _SpecReader(text)
    out: list[tuple[str, DimValue]] = []
    for name, key, v in r.named():
        if not name.isidentifier():
            r.fail(key, f"dimension name {_short(name)} is not an identifier")
        if isinstance(v, (syn.Tuple, syn.List)):
            out.append((name, tuple(Dim(*r.dim(e, set())) for e in v.items)))
        else:
            out.append((name, Dim(*r.dim(v, set()))))
    return tuple(out)


def merge_dims(base: str, over: str) -> str:
    """Two ``dims`` texts as one: ``over``'s size wins for a name both give."""
    merged = dict(parse_dims(base))
    merged.update(parse_dims(over))
    return ", ".join(f"{name}={dim_text(value)}" for name, value in merged.items())


def parse_int_tuple(text: str) -> tuple[int, ...]:
    """``"1"``, ``"0,2"``, ``"(0, 2)"`` -> ints (negative allowed); ``""`` -> ``()``."""
    r = _SpecReader(text)
    return tuple(r.int_(a) for a in r.positional(unwrap=True))


def parse_name_tuple(text: str) -> tuple[str, ...]:
    """``"a,b"``, ``"'a', 'b'"``, ``"(a, b)"`` -> unique identifiers; ``""`` -> ``()``."""
    r = _SpecReader(text)
    seen, out = set[str](), []
    for a in r.positional(unwrap=True):
        out.append(r.name(a, seen))
        if not out[-1].isidentifier():
            r.fail(a, f"{_short(out[-1])} is not an identifier")
    return tuple(out)


def parse_specs(text: str) -> tuple[object, ...]:
    """Like parse_args, but every leaf is ``P(...)`` or ``None``."""
    r = _SpecReader(text)

    def leaf(node: syn.Node) -> object:
        return None if _is_none(node) else r.pspec(node)

    return tuple(r.tree(a, leaf) for a in r.positional())


def parse_axes(text: str) -> object:
    """``"0"`` -> 0; ``"0, None, 1"`` and ``"(0, None, 1)"`` -> a tuple; pytrees of int/None."""
    r = _SpecReader(text)

    def leaf(node: syn.Node) -> object:
        return None if _is_none(node) else r.int_(node)

    values = tuple(r.tree(a, leaf) for a in r.positional())
    if not values:
        r.fail_at(0, "no axes given")
    return values[0] if len(values) == 1 else values
