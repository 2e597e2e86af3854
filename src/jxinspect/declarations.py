"""Read a module's ``JXINSPECT`` declaration and its functions' lines without importing it.

A declaration written as one literal is read with :func:`ast.literal_eval`. Declarations
are often built from module constants (``_PARAMS + ", f32[32,784]"``, f-strings,
``dict(args=...)``), so
:func:`static_declaration` also folds those: names bound at module level to literals,
``+``/``*`` on strings, tuples and lists, f-strings of such names and ``dict(key=value)``.
Anything else is left unknown; nothing is evaluated."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jxinspect.errors import UsageError, UserCodeError
from jxinspect.targets import DECLARATION

_MAX_LEN = 1_000_000


class _Unknown(Exception):
    """A value that cannot be folded from the source alone."""


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
    """The module's syntax tree; a syntax error is the user's (exit 3)."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    try:
        return ast.parse(source, filename=str(path))
    except SyntaxError as err:
        raise UserCodeError(
            f"syntax error in {path}:{err.lineno}: {err.msg}; fix the file and run again"
        ) from None


def static_declaration(path: Path, tree: ast.Module | None = None) -> Declaration | None:
    """The module's declaration, or ``None`` when it declares nothing."""
    tree = tree or parse_module(path)
    env: dict[str, Any] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if value is None or not names:
            continue
        if DECLARATION in names:
            return _declaration(path, value, env, node.lineno)
        try:
            folded = _fold(value, env)
        except (_Unknown, TypeError, ValueError, OverflowError, RecursionError):
            for name in names:
                env.pop(name, None)
            continue
        for name in names:
            env[name] = folded
    return None


def _declaration(path: Path, value: ast.expr, env: dict[str, Any], line: int) -> Declaration:
    try:  # what jxinspect.targets.read_declaration accepts: one literal
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        literal = None
    if isinstance(literal, dict):
        return Declaration(tuple(str(k) for k in literal), literal, line)
    try:
        folded = _fold(value, env)
    except (_Unknown, TypeError, ValueError, OverflowError, RecursionError):
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
                entries[str(key.value)] = _fold(item, env)
            except (_Unknown, TypeError, ValueError, OverflowError, RecursionError):
                entries[str(key.value)] = None
        return Declaration(tuple(entries), entries, line)
    raise OpaqueDeclaration(
        f"{path}:{line}: {DECLARATION} is not plain data, so its targets cannot be read "
        "without importing the module; list them under `targets:` in jxinspect.yaml"
    )


def _fold(node: ast.expr, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise _Unknown
        items = [_fold(e, env) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                unpacked = _fold(value, env)
                if not isinstance(unpacked, dict):
                    raise _Unknown
                result.update(unpacked)
            else:
                result[_fold(key, env)] = _fold(value, env)
        return result
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise _Unknown
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        return _binary(node.op, _fold(node.left, env), _fold(node.right, env))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _fold(node.operand, env)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand
        raise _Unknown
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                value = _fold(part.value, env)
                parts.append(repr(value) if part.conversion == ord("r") else str(value))
            else:
                raise _Unknown
        return "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and "dict" not in env
        and not node.args
    ):
        if any(k.arg is None for k in node.keywords):
            raise _Unknown
        return {k.arg: _fold(k.value, env) for k in node.keywords}
    raise _Unknown


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    """``+`` or ``*`` on strings, tuples, lists and numbers, with a cap on the size."""
    allowed = (str, tuple, list, int, float)
    if not isinstance(left, allowed) or not isinstance(right, allowed):
        raise _Unknown
    if isinstance(op, ast.Mult):
        count = right if isinstance(right, int) else left if isinstance(left, int) else 1
        other = left if isinstance(right, int) else right
        if isinstance(other, (str, tuple, list)) and len(other) * abs(count) > _MAX_LEN:
            raise _Unknown
        return operator.mul(left, right)
    return operator.add(left, right)


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
