"""Read a module's ``JXINSPECT`` declaration and its functions' lines without importing it.

A declaration written as one literal is read with :func:`ast.literal_eval`. Declarations
are often built from module constants (``_PARAMS + ", f32[32,784]"``, f-strings,
``dict(args=...)``), so
:func:`static_declaration` also folds those: names bound at module level to literals,
``+``/``*`` on strings, tuples, lists and numbers (``+=`` and ``*=`` too), f-strings of
such names and ``dict(key=value)``. Anything else is left unknown; nothing is evaluated.

Folding is bounded: the size a value would have (characters, items, digits, counted as
if every shared part were written out) and its nesting depth are checked *before* it is
built, so ``A = A + A`` sixty times, ``[A] * 10**6`` or ``[[...]]`` nested without end
leave the value unknown (as if it were not plain data) instead of exhausting memory.
A name rebound by any other statement (``for``, ``import``, ``def``, ``del``, an item
assignment, one inside ``if``/``try``/``with``) is forgotten, not guessed."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jxinspect.core.errors import UsageError
from jxinspect.project.sourcefile import parse_source, statements
from jxinspect.project.targets import DECLARATION

MAX_SIZE = 1_000_000
"""The most a folded value may hold: characters, items and digits, with every part an
alias points to counted each time it is used."""
MAX_DEPTH = 100
"""The deepest a folded value or a folded expression may nest."""
MAX_INT_BITS = 4096
"""The biggest integer folded (about 1,200 digits)."""


class _Unknown(Exception):
    """A value that cannot be folded from the source alone (or is too big to)."""


class OpaqueDeclaration(UsageError):
    """A declaration that is not plain data: only importing the module can read it."""


@dataclass(frozen=True)
class Declaration:
    """What a module declares, as far as its source says."""

    functions: tuple[str, ...]
    """The declared function names, in source order."""
    entries: dict[str, Any]
    """Each function's options; ``None`` for one that needs the module imported."""
    line: int
    """The line of the ``JXINSPECT =`` statement."""


def parse_module(path: Path) -> ast.Module:
    """The module's syntax tree, read as Python reads it (coding line, BOM); a file
    Python cannot decode or parse is the user's (exit 3)."""
    return parse_source(path)


def static_declaration(path: Path, tree: ast.Module | None = None) -> Declaration | None:
    """The module's declaration, or ``None`` when it declares nothing."""
    tree = tree or parse_module(path)
    folder = _Folder()
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            target = ast.Name(id=node.target.id, ctx=ast.Load())
            targets, value = [node.target], ast.BinOp(left=target, op=node.op, right=node.value)
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if value is not None and DECLARATION in names:
            return _declaration(path, value, folder, node.lineno)
        folded: Any = _Unknown
        if value is not None and names:
            try:
                folded = folder.fold(value)
            except _FOLD_ERRORS:
                folded = _Unknown
        folder.forget(node)
        if folded is not _Unknown:
            for name in names:
                folder.env[name] = folded
    return None


_FOLD_ERRORS = (_Unknown, TypeError, ValueError, OverflowError, RecursionError, MemoryError)


def _declaration(path: Path, value: ast.expr, folder: _Folder, line: int) -> Declaration:
    try:  # what jxinspect.project.targets.read_declaration accepts: one literal
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        literal = None
    if isinstance(literal, dict):
        return Declaration(tuple(str(k) for k in literal), literal, line)
    try:
        folded = folder.fold(value)
    except _FOLD_ERRORS:
        folded = None
    if isinstance(folded, dict):
        return Declaration(tuple(str(k) for k in folded), folded, line)
    if isinstance(value, ast.Dict) and all(
        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys
    ):
        entries: dict[str, Any] = {}
        for key, item in zip(value.keys, value.values):
            assert isinstance(key, ast.Constant)
            try:
                entries[str(key.value)] = folder.fold(item)
            except _FOLD_ERRORS:
                entries[str(key.value)] = None
        return Declaration(tuple(entries), entries, line)
    raise OpaqueDeclaration(
        f"{path}:{line}: {DECLARATION} is not plain data, so its targets cannot be read "
        "without importing the module; list them under `targets:` in jxinspect.yaml"
    )


class _Folder:
    """Folds expressions over the module-level names bound so far (``env``), refusing
    (``_Unknown``) any value bigger than :data:`MAX_SIZE` or deeper than
    :data:`MAX_DEPTH` before building it."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = {}
        self._measured: dict[int, tuple[Any, int, int]] = {}
        """id → (the value, kept alive so its id is not reused; size; depth)."""

    # ---- sizes ----------------------------------------------------------------------

    def measure(self, value: Any) -> tuple[int, int]:
        """(size, depth) of a folded value; shared parts counted each time they occur."""
        if isinstance(value, int) and not isinstance(value, bool):
            return max(1, value.bit_length() * 3 // 10), 0
        if isinstance(value, (str, bytes)):
            return max(1, len(value)), 0
        known = self._measured.get(id(value))
        if known is not None and known[0] is value:
            return known[1], known[2]
        if isinstance(value, (list, tuple)):
            parts: list[Any] = list(value)
        elif isinstance(value, dict):
            parts = [*value.keys(), *value.values()]
        else:
            return 1, 0  # None, True, a float, Ellipsis
        size, depth = 1, 0
        for part in parts:
            part_size, part_depth = self.measure(part)
            size, depth = size + part_size, max(depth, part_depth + 1)
            if size > MAX_SIZE or depth > MAX_DEPTH:
                raise _Unknown
        self._measured[id(value)] = (value, size, depth)
        return size, depth

    def checked(self, value: Any) -> Any:
        """``value``, if it is within bounds (it was built from references only)."""
        self.measure(value)
        return value

    # ---- folding --------------------------------------------------------------------

    def fold(self, node: ast.expr, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise _Unknown
        inner = depth + 1
        if isinstance(node, ast.Constant):
            if isinstance(node.value, int) and node.value.bit_length() > MAX_INT_BITS:
                raise _Unknown
            return self.checked(node.value)
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _Unknown
            items = [self.fold(e, inner) for e in node.elts]
            return self.checked(tuple(items) if isinstance(node, ast.Tuple) else items)
        if isinstance(node, ast.Dict):
            result: dict[Any, Any] = {}
            for key, value in zip(node.keys, node.values):
                if key is None:
                    unpacked = self.fold(value, inner)
                    if not isinstance(unpacked, dict):
                        raise _Unknown
                    result.update(unpacked)
                else:
                    result[self.fold(key, inner)] = self.fold(value, inner)
            return self.checked(result)
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            raise _Unknown
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            left, right = self.fold(node.left, inner), self.fold(node.right, inner)
            return self.binary(node.op, left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.fold(node.operand, inner)
            if isinstance(operand, (int, float)) and not isinstance(operand, bool):
                return -operand
            raise _Unknown
        if isinstance(node, ast.JoinedStr):
            return self.joined(node, inner)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
            and "dict" not in self.env
            and not node.args
        ):
            if any(k.arg is None for k in node.keywords):
                raise _Unknown
            return self.checked({k.arg: self.fold(k.value, inner) for k in node.keywords})
        raise _Unknown

    def binary(self, op: ast.operator, left: Any, right: Any) -> Any:
        """``+`` or ``*`` on strings, tuples, lists and numbers; the result's size is
        worked out from the operands' before it is built."""
        numbers = (int, float)
        sequences = (str, tuple, list)
        if not isinstance(left, numbers + sequences) or not isinstance(right, numbers + sequences):
            raise _Unknown
        if isinstance(left, numbers) and isinstance(right, numbers):
            if isinstance(left, int) and isinstance(right, int):
                bits = max(left.bit_length(), right.bit_length())
                if isinstance(op, ast.Mult):
                    bits = left.bit_length() + right.bit_length()
                if bits > MAX_INT_BITS:
                    raise _Unknown
            return (
                operator.add(left, right) if isinstance(op, ast.Add) else operator.mul(left, right)
            )
        if isinstance(op, ast.Add):
            if type(left) is not type(right):
                raise _Unknown  # str + list and the like: a TypeError at run time
            size = self.measure(left)[0] + self.measure(right)[0]
            if size > MAX_SIZE:
                raise _Unknown
            return self.checked(operator.add(left, right))
        if isinstance(left, int) and isinstance(right, sequences):
            left, right = right, left
        if not isinstance(right, int) or isinstance(left, numbers):
            raise _Unknown  # list * list, str * float: a TypeError at run time
        if self.measure(left)[0] * max(right, 0) > MAX_SIZE:
            raise _Unknown
        return self.checked(operator.mul(left, right))

    def joined(self, node: ast.JoinedStr, depth: int) -> str:
        parts: list[str] = []
        size = 0
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                text = part.value
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                value = self.fold(part.value, depth)
                self.measure(value)
                convert = {ord("r"): repr, ord("a"): ascii}.get(part.conversion, str)
                text = convert(value)
            else:
                raise _Unknown
            size += len(text)
            if size > MAX_SIZE:
                raise _Unknown
            parts.append(text)
        return "".join(parts)

    # ---- names bound by other statements ------------------------------------------------

    def forget(self, node: ast.stmt) -> None:
        """Drop every name the statement may bind or change, other than by a plain
        assignment (which :func:`static_declaration` then records again)."""
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            self.env.clear()
            return
        for name in _bound_names(node):
            self.env.pop(name, None)


def _bound_names(node: ast.stmt) -> set[str]:
    names: set[str] = set()
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    stack: list[ast.AST] = [node]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Global):
            names.update(sub.names)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(
            sub.ctx, (ast.Store, ast.Del)
        ):
            base: ast.expr = sub
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)  # A[0] = 1, A.x = 1 change A
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
            names.add(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            names.add(sub.rest)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
        if isinstance(sub, functions):
            if not isinstance(sub, ast.Lambda):
                names.add(sub.name)
            # a function's own names are local; only its `global` statements reach here
            if not isinstance(sub, ast.Lambda):
                stack.extend(n for n in statements(sub.body) if isinstance(n, ast.Global))
            continue
        stack.extend(ast.iter_child_nodes(sub))
    return names


def definition_line(tree: ast.Module, attribute: str) -> int | None:
    """The line that defines ``f`` or ``Model.apply`` at module level (``def``, ``class``
    or an assignment such as ``step = jax.jit(_step)``)."""
    body: list[ast.stmt] = tree.body
    line = None
    for part in attribute.split("."):
        found: ast.stmt | None = None
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name == part:
                    found = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == part for t in targets):
                    found = node
        if found is None:
            return line
        line = found.lineno
        if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) and found.decorator_list:
            line = found.decorator_list[0].lineno
        body = found.body if isinstance(found, ast.ClassDef) else []
    return line
