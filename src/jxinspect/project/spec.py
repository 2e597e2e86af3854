"""A small, safe spec language for example inputs: ``f32[8@data,128]``, ``P('data')``, ...

Text is checked token by token, ``NAME[]`` is rewritten to ``NAME[()]``, the result is
parsed with ``ast.parse`` and read by a walker that accepts only whitelisted node types.
Nothing is ever evaluated; every failure is a one-line :class:`SpecError`.
"""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import sys
import tokenize
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NoReturn, TypeAlias

from jxinspect.core import dtypes

MAX_LEN = 100_000  # characters of spec text
MAX_DEPTH = 64  # bracket / pytree nesting
MAX_DIM = 2**63 - 1

# Short names the way jaxprs print them, from the one dtype table.
SHORT_DTYPES: dict[str, str] = {d.short: d.name for d in dtypes.TABLE}
_DTYPES = {**{v: v for v in SHORT_DTYPES.values()}, **SHORT_DTYPES, "bool_": "bool"}
_COMMON = ("f32", "bf16", "f16", "i32", "bool")


short_dtype = dtypes.short_name


def _printable(s: str) -> str:
    """Same length, one printable line: newlines, control chars, surrogates -> space."""
    return "".join(c if c.isprintable() else " " for c in s)


def _short(value: object) -> str:
    r = repr(value)
    return r if len(r) <= 40 else r[:37] + "..."


class SpecError(ValueError):
    """A spec string that does not parse."""

    def __init__(self, text: str, column: int, reason: str) -> None:
        self.text, self.column, self.reason = text, max(0, min(column, len(text))), reason
        super().__init__(text, self.column, reason)

    def __str__(self) -> str:
        shown = _printable(self.text)
        if len(shown) > 120:  # a window around the column
            lo = max(0, self.column - 60)
            shown = ("..." if lo else "") + shown[lo : lo + 120] + "..."
        tail = f": {shown}" if shown.strip() else ""
        return f"bad spec at column {self.column}: {_printable(self.reason)}{tail}"


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


ModelLibrary: TypeAlias = Literal["equinox", "nnx"]
"""The libraries whose models are built by their own constructor (:class:`Constructed`)."""


@dataclass(frozen=True)
class Seed:
    """The PRNG argument of a model's constructor: ``jax.random.key(0)`` for a ``key``,
    ``nnx.Rngs(0)`` for ``rngs`` (under ``eval_shape``, so no number is drawn)."""

    kind: Literal["key", "rngs"]


@dataclass(frozen=True)
class Constructed:
    """A model built abstractly by its own constructor: ``eqx.filter_eval_shape`` (or
    ``nnx.eval_shape``) of ``cls(**arguments)``, nothing allocated; read from an
    annotation (no spec text writes one)."""

    path: str
    """The class's import path, as the report names it."""
    library: ModelLibrary
    arguments: tuple[tuple[str, object], ...]
    """The constructor's arguments by name: spec values, a :class:`Seed` for its key."""
    cls: type | None = field(default=None, compare=False)


_PREFIX = "_("  # every text is parsed as the call _(text)
_OPS = frozenset("()[]{},:@-=.")
_OPEN = {")": "(", "]": "[", "}": "{"}
_Leaf = Callable[[ast.expr], object]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


class _Reader:
    """One spec text, parsed as ``_(text)``; maps every error back to a column of text."""

    def __init__(self, text: str) -> None:
        self.text, self.inserts = text, list[int]()  # offsets in self.code of inserted "()"
        if len(text) > MAX_LEN:
            self.fail_at(MAX_LEN, f"spec longer than {MAX_LEN} characters")
        for i, c in enumerate(text):
            if c == "\0" or "\ud800" <= c <= "\udfff":
                self.fail_at(i, f"invalid character {c!r}")
        self.code = self.rewrite(_PREFIX + text.replace("\r", " ") + ")")
        self.lines, self.starts = self.code.split("\n"), _line_starts(self.code)
        try:
            with warnings.catch_warnings():  # e.g. SyntaxWarning: invalid escape sequence
                warnings.simplefilter("ignore")
                tree = ast.parse(self.code, mode="eval")
        except SyntaxError as e:
            row = min(max((e.lineno or 1) - 1, 0), len(self.starts) - 1)
            self.fail_code(self.starts[row] + (e.offset or 1) - 1, e.msg)
        except (ValueError, RecursionError, MemoryError) as e:
            self.fail_at(0, f"spec too complex ({type(e).__name__})")
        call = tree.body
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            self.fail_at(0, "invalid syntax")  # unreachable: brackets were balanced
        self.args, self.keywords = call.args, call.keywords

    def fail_at(self, column: int, reason: str) -> NoReturn:
        raise SpecError(self.text, column, reason)

    def fail_code(self, offset: int, reason: str) -> NoReturn:
        shift = len(_PREFIX)
        for ins in self.inserts:
            if offset >= ins + 2:
                shift += 2
            elif offset >= ins:
                offset = ins
        self.fail_at(offset - shift, reason)

    def fail(self, node: ast.AST, reason: str) -> NoReturn:
        row = min(max(getattr(node, "lineno", 1) - 1, 0), len(self.lines) - 1)
        col_bytes = self.lines[row].encode("utf-8")[: getattr(node, "col_offset", 0)]
        self.fail_code(self.starts[row] + len(col_bytes.decode("utf-8", "ignore")), reason)

    def rewrite(self, wrapped: str) -> str:
        """Check tokens against the whitelist and balance brackets; ``NAME[]`` -> ``NAME[()]``."""
        starts, end = _line_starts(wrapped), len(wrapped) - 1

        def fail(off: int, reason: str) -> NoReturn:
            self.fail_at(off - len(_PREFIX), reason)

        stack: list[tuple[str, int]] = []
        prev: list[tokenize.TokenInfo] = []
        holes: list[int] = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(wrapped).readline):
                if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER):
                    continue
                off, s = starts[tok.start[0] - 1] + tok.start[1], tok.string
                if tok.type == tokenize.NAME:
                    if keyword.iskeyword(s) and s not in ("True", "False", "None"):
                        fail(off, f"unexpected keyword {s!r}")
                elif tokenize.tok_name[tok.type] in ("FSTRING_START", "TSTRING_START"):
                    fail(off, "f-strings are not allowed")  # Python >= 3.12 tokenizes them
                elif tok.type == tokenize.STRING:
                    prefix = s[: min(i for i in (s.find("'"), s.find('"')) if i >= 0)].lower()
                    if "f" in prefix or "b" in prefix:
                        kind = "f-strings" if "f" in prefix else "bytes literals"
                        fail(off, f"{kind} are not allowed")
                elif tok.type == tokenize.OP and s in ("(", "[", "{"):
                    stack.append((s, off))
                    if len(stack) > MAX_DEPTH + 1:
                        fail(off, f"nesting deeper than {MAX_DEPTH}")
                elif tok.type == tokenize.OP and s in _OPEN:
                    if stack and stack[-1][0] != _OPEN[s] and off == end:
                        fail(stack[-1][1], f"{stack[-1][0]!r} was never closed")
                    if not stack or stack[-1][0] != _OPEN[s] or (len(stack) == 1 and off != end):
                        fail(off, f"unmatched {s!r}")
                    stack.pop()
                    if s == "]" and prev[-1].string == "[" and prev[0].type == tokenize.NAME:
                        holes.append(off)
                elif tok.type == tokenize.COMMENT:
                    fail(off, "comments are not allowed")
                elif tok.type == tokenize.ERRORTOKEN and s.strip() in ("'", '"'):
                    fail(off, "unterminated string")
                elif tok.type != tokenize.NUMBER and not (tok.type == tokenize.OP and s in _OPS):
                    fail(off, f"unexpected {s!r}" if s.strip() else "invalid syntax")
                prev = [*prev[-1:], tok]
        except tokenize.TokenError as e:  # EOF inside brackets or a string
            if len(stack) > 1:
                fail(stack[-1][1], f"{stack[-1][0]!r} was never closed")
            row, col = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], tuple) else (1, 0)
            col -= sys.version_info >= (3, 12)  # the C tokenizer counts columns from 1
            fail(starts[min(max(row - 1, 0), len(starts) - 1)] + col, str(e.args[0]))
        except SyntaxError as e:  # defensive: the tokenizer may raise IndentationError
            fail(0, e.msg)
        self.inserts = [hole + 2 * i for i, hole in enumerate(holes)]
        return "()".join(wrapped[a:b] for a, b in zip([0, *holes], [*holes, len(wrapped)]))

    # ---- AST walker: each method accepts a few node types and fails on the rest ----
    def tree(self, node: ast.expr, leaf: _Leaf, depth: int = 0) -> object:
        """Tuples, lists and dicts of whatever ``leaf`` accepts."""
        if depth > MAX_DEPTH:
            self.fail(node, f"nesting deeper than {MAX_DEPTH}")
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.tree(e, leaf, depth + 1) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return self.struct(node, leaf, depth)
        if not isinstance(node, ast.Dict):
            return leaf(node)
        out: dict[object, object] = {}
        for k, v in zip(node.keys, node.values):
            key = self.name(k) if isinstance(k, ast.Name) or k is None else self.literal(k)
            if not isinstance(key, str) and type(key) is not int:
                self.fail(k or v, "dict keys must be identifiers, strings or ints")
            if key in out:
                self.fail(k or v, f"duplicate key {_short(key)}")
            if out and type(key) is not type(next(iter(out))):
                self.fail(k or v, "dict keys must be all strings or all ints")
            out[key] = self.tree(v, leaf, depth + 1)
        return out

    def struct(self, node: ast.Call, leaf: _Leaf, depth: int) -> Struct:
        """``module.Class(field=value, ...)``: a NamedTuple or dataclass by import path."""
        parts, func = [], node.func
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            self.fail(node.func, "expected an import path, e.g. optax.ScaleByAdamState(...)")
        path = ".".join([func.id, *reversed(parts)])
        if node.args:
            self.fail(node.args[0], f"{_short(path)}(...) takes its fields by name: field=value")
        fields: list[tuple[str, object]] = []
        for k in node.keywords:  # k.arg is never None: '**' never passes the token check
            if k.arg is None or any(k.arg == name for name, _ in fields):
                self.fail(k, f"field {_short(k.arg)} given twice")
            fields.append((k.arg, self.tree(k.value, leaf, depth + 1)))
        return Struct(path, tuple(fields))

    def literal(self, node: ast.expr) -> object:
        """An int, float (maybe negated), str, True, False or None."""
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (bool, int, float, str)):
                return node.value
            self.fail(node, f"{type(node.value).__name__} literals are not allowed")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = node.operand.value if isinstance(node.operand, ast.Constant) else None
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
            self.fail(node, "'-' must be followed by a number")
        if isinstance(node, ast.Name):
            self.fail(
                node,
                f"bare name {_short(node.id)} is not a value"
                " (quote strings; arrays look like f32[3])",
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            self.fail(node, "'@' is only allowed on array dims, e.g. f32[8@data]")
        if isinstance(node, ast.Attribute):
            self.fail(node, "a dotted name is only allowed as a class called with its fields, "
                      "e.g. optax.EmptyState()")  # fmt: skip
        self.fail(node, f"{type(node).__name__} expressions are not allowed")

    def value(self, node: ast.expr) -> object:
        """An array, ``P(...)`` or literal."""
        if isinstance(node, ast.Subscript):
            return self.array(node)
        return self.pspec(node) if isinstance(node, ast.Call) else self.literal(node)

    def array(self, node: ast.Subscript) -> ArraySpec:
        """``dtype[dim, ...]``, each dim ``N``, ``N@axis`` or ``N@(axis, ...)``."""
        if not isinstance(node.value, ast.Name):
            self.fail(node, "only a dtype name can be subscripted, e.g. f32[3]")
        name = node.value.id
        if name not in _DTYPES:
            close = difflib.get_close_matches(name, list(_DTYPES), n=3)
            hint = ", ".join(dict.fromkeys([*close, *_COMMON]))
            self.fail(node.value, f"unknown dtype {_short(name)} (expected one of {hint}, ...)")
        dims = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        shape, axes, seen = list[int](), list[tuple[str, ...]](), set[str]()
        for dim in dims:
            size, names = self.dim(dim, seen)
            shape.append(size)
            axes.append(names)
        return ArraySpec(_DTYPES[name], tuple(shape), tuple(axes))

    def dim(self, dim: ast.expr, seen: set[str]) -> tuple[int, tuple[str, ...]]:
        """One array dim, ``N``, ``N@axis`` or ``N@(axis, ...)``: its size and mesh axes
        (each used once within ``seen``)."""
        names: tuple[str, ...] = ()
        if isinstance(dim, ast.BinOp) and isinstance(dim.op, ast.MatMult):
            if isinstance(dim.left, ast.BinOp):
                self.fail(dim.left, "one '@' per dim; write 8@(data,fsdp)")
            at = dim.right.elts if isinstance(dim.right, ast.Tuple) else [dim.right]
            if not at or not all(isinstance(a, ast.Name) for a in at):
                self.fail(dim.right, "expected mesh axis names after '@', e.g. 8@(data,fsdp)")
            names, dim = tuple(self.name(a, seen) for a in at), dim.left
        if not (isinstance(dim, ast.Constant) and type(dim.value) is int):
            self.fail(dim, "array dims must be non-negative ints")
        if dim.value > MAX_DIM:
            self.fail(dim, "array dim too large")
        return dim.value, names

    def pspec(self, node: ast.expr) -> PSpec:
        """``P(entry, ...)``, each entry None, an axis name or a tuple of names."""
        if not isinstance(node, ast.Call):
            self.fail(node, "expected P(...) or None")
        if not (isinstance(node.func, ast.Name) and node.func.id == "P"):
            self.fail(node.func, "only P(...) calls are allowed")
        if node.keywords:
            self.fail(node.keywords[0], "P(...) takes no keyword arguments")
        seen, entries = set[str](), list[PEntry]()
        for arg in node.args:
            if isinstance(arg, ast.Constant) and arg.value is None:
                entries.append(None)
            elif isinstance(arg, (ast.Tuple, ast.List)):
                entries.append(tuple(self.name(e, seen) for e in arg.elts))
            else:
                entries.append(self.name(arg, seen))
        return PSpec(tuple(entries))

    def name(self, node: ast.expr | None, seen: set[str] | None = None) -> str:
        """A bare or quoted name, unique within ``seen``."""
        if node is None:  # {**x}; unreachable since '*' never passes the token check
            self.fail_at(0, "'**' is not allowed")
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        else:
            self.fail(node, "expected a name")
        if seen is not None:
            if name in seen:
                self.fail(node, f"{_short(name)} used twice")
            seen.add(name)
        return name

    def int_(self, node: ast.expr) -> int:
        value = self.literal(node)
        if type(value) is not int:
            self.fail(node, "expected an int")
        return value

    def positional(self, unwrap: bool = False) -> list[ast.expr]:
        """The top-level values (no name=value); optionally unwrap one (...) or [...]."""
        if self.keywords:
            self.fail(self.keywords[0], "unexpected name=value here")
        if unwrap and len(self.args) == 1 and isinstance(self.args[0], (ast.Tuple, ast.List)):
            return self.args[0].elts
        return self.args

    def named(self) -> list[tuple[str, ast.AST, ast.expr]]:
        """``name=value`` pairs, or the items of one ``{name: value}`` dict."""
        seen = set[str]()
        if not self.args:
            for k in self.keywords:
                if k.arg in seen or k.arg is None:  # None: **x, stopped by the token check
                    self.fail(k, f"{_short(k.arg)} used twice")
                seen.add(k.arg)
            return [(k.arg or "", k, k.value) for k in self.keywords]
        d = self.args[0]
        if self.keywords or len(self.args) > 1 or not isinstance(d, ast.Dict):
            self.fail(d, "expected name=value pairs or one {name: value} dict")
        return [(self.name(k, seen), k or v, v) for k, v in zip(d.keys, d.values)]


def parse_value(text: str) -> object:
    """One value: a pytree (tuple/list/dict) of ArraySpec, PSpec and literals."""
    r = _Reader(text)
    args = r.positional()
    if not args:
        r.fail_at(0, "empty spec")
    if len(args) > 1:
        r.fail(args[1], "expected one value (wrap several in (...) or [...])")
    return r.tree(args[0], r.value)


def parse_args(text: str) -> tuple[object, ...]:
    """Comma-separated values; ``"(a, b)"`` is one tuple value and ``""`` is ``()``."""
    r = _Reader(text)
    return tuple(r.tree(a, r.value) for a in r.positional())


def parse_kwargs(text: str) -> dict[str, object]:
    """``x=f32[3], scale=2.0`` or ``{x: f32[3], 'scale': 2.0}``; ``""`` is ``{}``."""
    r = _Reader(text)
    return {name: r.tree(v, r.value) for name, _, v in r.named()}


def parse_mesh(text: str) -> tuple[tuple[str, int], ...]:
    """``data=2,model=4`` (or ``{data: 2, model: 4}``) -> ``(("data", 2), ("model", 4))``."""
    r = _Reader(text)
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
    r = _Reader(text)
    out: list[tuple[str, DimValue]] = []
    for name, key, v in r.named():
        if not name.isidentifier():
            r.fail(key, f"dimension name {_short(name)} is not an identifier")
        if isinstance(v, (ast.Tuple, ast.List)):
            out.append((name, tuple(Dim(*r.dim(e, set())) for e in v.elts)))
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
    r = _Reader(text)
    return tuple(r.int_(a) for a in r.positional(unwrap=True))


def parse_name_tuple(text: str) -> tuple[str, ...]:
    """``"a,b"``, ``"'a', 'b'"``, ``"(a, b)"`` -> unique identifiers; ``""`` -> ``()``."""
    r = _Reader(text)
    seen, out = set[str](), []
    for a in r.positional(unwrap=True):
        out.append(r.name(a, seen))
        if not out[-1].isidentifier():
            r.fail(a, f"{_short(out[-1])} is not an identifier")
    return tuple(out)


def parse_specs(text: str) -> tuple[object, ...]:
    """Like parse_args, but every leaf is ``P(...)`` or ``None``."""
    r = _Reader(text)

    def leaf(node: ast.expr) -> object:
        return None if isinstance(node, ast.Constant) and node.value is None else r.pspec(node)

    return tuple(r.tree(a, leaf) for a in r.positional())


def parse_axes(text: str) -> object:
    """``"0"`` -> 0; ``"0, None, 1"`` and ``"(0, None, 1)"`` -> a tuple; pytrees of int/None."""
    r = _Reader(text)

    def leaf(node: ast.expr) -> object:
        return None if isinstance(node, ast.Constant) and node.value is None else r.int_(node)

    values = tuple(r.tree(a, leaf) for a in r.positional())
    if not values:
        r.fail_at(0, "no axes given")
    return values[0] if len(values) == 1 else values
