"""The jaxpr and the lowered module as JAX prints them, marked for the views.

The texts are JAX's own (``Jaxpr.pretty_print``, ``Lowered.as_text``). Two layout
changes make room for labels: the top-level jaxpr's inputs and outputs, and ``@main``'s
arguments and results, go one per line. Marks (:class:`~jxinspect.core.program.Mark`) then say
which line stands for which input, output, JAX-added value, nested jaxpr (by the same
``where`` as :mod:`jxinspect.tracer.read.nested`) or source line. Nested jaxprs are found by
walking the printed blocks alongside the jaxpr objects, using the printer's layout (a
block's equations are indented four past its ``{ lambda`` line), and every block is
checked against its equations' primitives before its marks are kept.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from jxinspect.core.model import Input
from jxinspect.core.program import Mark, ModuleDialect, Program, ProgramText, TextRequest
from jxinspect.project.targets import describe_exception
from jxinspect.tracer import seam
from jxinspect.tracer.read.mlir import MainSignature
from jxinspect.tracer.staged import Staged, lowered_of

_SHARED = re.compile(r"let (\S+) = \{ lambda ")
_FLAT_SUB = re.compile(r"(\w+)=\{ lambda ")
_REF = re.compile(r"(\w+)=(\w+)(?=[\s\]]|$)")
_BINDER = re.compile(r"[a-z_]+:\S")
_WRAPPED_REPR = re.compile(r"(\d+ +: |Core: )")
"""The lines of a ``Wrapped function:`` parameter (0.5 prints a custom_jvp's and a
custom_vjp's so, from column 0), and blank ones: no part of the jaxpr's structure."""


def program(
    staged: Staged,
    request: TextRequest,
    main: MainSignature | None,
    inputs: Sequence[Input],
) -> Program:
    """The texts ``request`` asks for."""
    jaxpr = annotate_jaxpr(staged.traced.jaxpr, request.source) if request.jaxpr else None
    module, error = None, None
    lowered = lowered_of(staged)
    if request.module is not None and lowered is not None:
        try:
            module = annotate_module(lowered, request.module, request.debug_info, main, inputs)
        except Exception as err:  # e.g. a module XLA cannot convert to HLO
            error = f"no {request.module} text: {describe_exception(err)}"
    return Program(jaxpr, module, error)


# ---- the jaxpr --------------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _source(eqn: seam.Equation, cwd: str) -> str | None:
    if eqn.source is None:
        return None
    path = eqn.source.file
    if path.startswith(cwd + os.sep):
        path = path[len(cwd) + 1 :]
    return f"{path}:{eqn.source.line}"


_Block = tuple[int, seam.Jaxpr, str]
"""A printed block to walk: its first line, its jaxpr object, its ``where``."""


class _Blocks:
    """Walks the printed blocks of a jaxpr alongside the jaxpr objects."""

    def __init__(self, lines: list[str], source: bool) -> None:
        self.lines = lines
        self.source = source
        self.cwd = os.getcwd()
        self.shared = {
            m.group(1): i
            for i, line in enumerate(lines)
            if line.startswith("let ") and (m := _SHARED.match(line))
        }

    def walk(self, top_line: int, jaxpr: seam.Jaxpr) -> list[Mark]:
        """The marks of every block, from the top-level one down."""
        work: list[_Block] = [(top_line, jaxpr, "top")]
        seen: set[int] = set()
        marks: list[Mark] = []
        while work:
            line, sub, where = work.pop()
            if line in seen:  # a shared jaxpr: labelled where it is first used
                continue
            seen.add(line)
            block_marks, children = self.block(line, sub, where)
            marks += block_marks
            work.extend(reversed(children))
        return marks

    def block(self, start: int, jaxpr: seam.Jaxpr, where: str) -> tuple[list[Mark], list[_Block]]:
        """The marks and nested blocks of the block starting at ``start`` (nothing when
        the printed block does not match the jaxpr's equations)."""
        lines, head = self.lines, start
        marks = [Mark(start, "jaxpr", text=where)]
        while head < len(lines) and ". let" not in lines[head]:
            head += 1
        if head == len(lines) or not lines[head].rstrip().endswith(". let"):
            return marks, []  # printed on one line: only the label
        prefix = "" if where == "top" else where + "/"
        base = _indent(lines[start])
        children: list[_Block] = []
        eqn_marks: list[Mark] = []
        eqns = seam.equations(jaxpr, source=self.source)
        k, subs, eqn_where = -1, {}, ""
        tuple_key, tuple_index = "", 0
        for i in range(head + 1, len(lines)):
            line = lines[i]
            indent, text = _indent(line), line.strip()
            if not text or (indent == 0 and _WRAPPED_REPR.match(line)):
                continue
            if indent == base + 2 and text.startswith("in ("):
                break
            if indent < base + 2:
                return marks, []
            if indent == base + 4 and not text.startswith("]"):
                k += 1
                text = self._eqn_head(i, base)
                if k >= len(eqns) or eqns[k].primitive not in text:
                    return marks, []
                eqn = eqns[k]
                subs = dict(eqn.nested)
                eqn_where = f"{prefix}{k}:{eqn.primitive}."
                if self.source and (src := _source(eqn, self.cwd)):
                    eqn_marks.append(Mark(i, "source", text=src))
                for key in _FLAT_SUB.findall(text):
                    if key in subs:
                        children.append((i, subs[key], eqn_where + key))
                children += self._refs(text, subs, eqn_where)
            elif indent == base + 6 and subs:
                key, _, value = text.partition("=")
                tuple_key = key if value == "(" and f"{key}[0]" in subs else ""
                tuple_index = 0
                if value.startswith("{ lambda ") and key in subs:
                    children.append((i, subs[key], eqn_where + key))
                children += self._refs(text, subs, eqn_where)
            elif indent == base + 8 and tuple_key:
                label = f"{tuple_key}[{tuple_index}]"
                if label in subs and text.startswith("{ lambda "):
                    children.append((i, subs[label], eqn_where + label))
                elif label in subs and text in self.shared:
                    children.append((self.shared[text], subs[label], eqn_where + label))
                tuple_index += 1
        if k != len(eqns) - 1:
            return marks, []
        return marks + eqn_marks, children

    def _eqn_head(self, i: int, base: int) -> str:
        """The line holding ``= primitive``: an equation's outputs may wrap."""
        lines, j = self.lines, i
        while (
            " = " not in lines[j]
            and j + 1 < len(lines)
            and _indent(lines[j + 1]) == base + 6
            and _BINDER.match(lines[j + 1].lstrip())
        ):
            j += 1
        return lines[j].strip() if " = " in lines[j] else lines[i].strip()

    def _refs(self, text: str, subs: dict[str, seam.Jaxpr], eqn_where: str) -> list[_Block]:
        """Shared jaxprs named in a parameter line (``jaxpr=inner``)."""
        return [
            (self.shared[name], subs[key], eqn_where + key)
            for key, name in _REF.findall(text)
            if key in subs and name in self.shared
        ]


def _split_binders(text: str) -> tuple[str, list[str]] | None:
    """``{ lambda c:f32[3]; a:f32[2] b:i32[]`` → (``c:f32[3]``, [``a:f32[2]``, ``b:i32[]``])."""
    consts, sep, invars = text.removeprefix("{ lambda ").partition(";")
    return (consts.strip(), invars.split()) if sep else None


def annotate_jaxpr(jaxpr: seam.Jaxpr, source: bool = False) -> ProgramText:
    """The jaxpr as JAX prints it, its inputs and outputs one per line, marked."""
    text = seam.jaxpr_text(jaxpr)
    start = text.rfind("\n{ lambda ") + 1
    lines = text.split("\n")
    top = text.count("\n", 0, start)
    marks = _Blocks(lines, source).walk(top, jaxpr)
    let_end = text.find(". let", start) + len(". let")
    in_start = text.rfind("in (")
    binders = _split_binders(text[start : let_end - len(". let")])
    outs = [v.strip() for v in text[in_start + 4 : text.rfind(")")].split(",") if v.strip()]
    n_in, n_out = seam.arity(jaxpr)
    if (
        let_end < len(". let")
        or in_start < let_end
        or binders is None
        or len(binders[1]) != n_in
        or len(outs) != n_out
    ):
        return ProgramText("jaxpr", text, tuple(m for m in marks if m.line != top))
    head_end, body_start = text.count("\n", 0, let_end), text.count("\n", 0, in_start)
    flat_eqns: tuple[seam.Equation, ...] = ()
    if body_start == head_end:  # the whole jaxpr on one line: one equation per line
        body_text = text[let_end:in_start].strip()
        pieces = body_text.split("; ") if body_text else []
        eqns = seam.equations(jaxpr, source=source)
        if len(pieces) == len(eqns):
            body, flat_eqns = ["    " + piece for piece in pieces], eqns
        else:
            body = ["    " + body_text]
    else:
        body = lines[head_end + 1 : body_start]
    consts, invars = binders
    new = lines[:top] + [f"{{ lambda {consts + ';' if consts else ';'}"]
    new_marks = [m for m in marks if m.line < top]
    new_marks.append(Mark(top, "jaxpr", text="top"))
    for i, binder in enumerate(invars):
        new_marks.append(Mark(len(new), "input", i))
        new.append(f"    {binder}")
    new.append("  . let")
    shift = len(new) - (head_end + 1)
    new_marks += [replace(m, line=m.line + shift) for m in marks if head_end < m.line < body_start]
    if source:
        cwd = os.getcwd()
        new_marks += [Mark(len(new) + k, "source", text=src) for k, eqn in enumerate(flat_eqns)
                      if (src := _source(eqn, cwd))]  # fmt: skip
    new += body
    new.append("  in (")
    for i, out in enumerate(outs):
        new_marks.append(Mark(len(new), "output", i))
        new.append(f"    {out},")
    new.append("  ) }")
    new_marks.sort(key=lambda mark: mark.line)
    return ProgramText("jaxpr", "\n".join(new) + "\n", tuple(new_marks))


# ---- the lowered module -------------------------------------------------------------------


_OPEN, _CLOSE = "([{<", ")]}>"


def split_values(text: str, start: int) -> tuple[list[str], int]:
    """The comma-separated values from ``text[start]`` up to the bracket that closes the
    one before it, and that bracket's index (``-1`` when it never closes)."""
    pieces, depth, i, begin, quoted = [], 0, start, start, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE and not (c == ">" and text[i - 1] == "-"):
            if depth == 0:
                if text[begin:i].strip():
                    pieces.append(text[begin:i].strip())
                return pieces, i
            depth -= 1
        elif c == "," and depth == 0:
            pieces.append(text[begin:i].strip())
            begin = i + 1
        i += 1
    return pieces, -1


def _module_marks(main: MainSignature, inputs: Sequence[Input]) -> tuple[list[Mark], list[Mark]]:
    """One mark per ``@main`` argument and result, to be placed (``line`` -1)."""
    by_main = {leaf.main_index: leaf.index for leaf in inputs if leaf.main_index is not None}
    args = [
        Mark(-1, "extra", a.index, a.jax_kind or "unknown")
        if a.jax_kind is not None or a.index not in by_main
        else Mark(-1, "input", by_main[a.index])
        for a in main.args
    ]
    results, n = [], 0
    for r in main.results:
        if r.jax_kind is not None:
            results.append(Mark(-1, "extra", r.index, r.jax_kind))
        else:
            results.append(Mark(-1, "output", n))
            n += 1
    return args, results


def _layout_main(text: str, args: list[Mark], results: list[Mark]) -> tuple[str, list[Mark]]:
    """``@main``'s signature with one argument and one result per line, marked."""
    at = text.find("func.func public @main(")
    if at < 0:
        return text, []
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    open_at = line.index("@main(") + len("@main(")
    arg_texts, close = split_values(line, open_at)
    if close < 0 or len(arg_texts) != len(args) or not line.startswith(") -> ", close):
        return text, []
    rest_at = close + len(") -> ")
    if line.startswith("(", rest_at):
        result_texts, res_close = split_values(line, rest_at + 1)
        tail = line[res_close + 1 :] if res_close >= 0 else ""
    else:
        end = line.find(" ", rest_at)
        end = len(line) if end < 0 else end
        result_texts, res_close = [line[rest_at:end]], end
        tail = line[end:]
    if res_close < 0 or len(result_texts) != len(results):
        return text, []
    indent = " " * (_indent(line) + 4)
    first = text.count("\n", 0, line_start)
    out = [line[:open_at]]
    marks = []
    blocks = ((arg_texts, args, ") -> ("), (result_texts, results, ")" + tail))
    for values, value_marks, close_text in blocks:
        for j, (value, mark) in enumerate(zip(values, value_marks)):
            marks.append(replace(mark, line=first + len(out)))
            out.append(indent + value + ("," if j < len(values) - 1 else ""))
        out.append(" " * _indent(line) + close_text)
    return text[:line_start] + "\n".join(out) + text[line_end:], marks


def _hlo_marks(text: str, args: list[Mark], results: list[Mark]) -> list[Mark]:
    """Marks on the ENTRY computation's ``parameter(N)`` lines and its ``ROOT`` line."""
    lines = text.split("\n")
    entry = next((i for i, line in enumerate(lines) if line.startswith("ENTRY ")), -1)
    marks: list[Mark] = []
    if entry < 0:
        return marks
    for i in range(entry + 1, len(lines)):
        line = lines[i]
        if line.startswith("}"):
            break
        at = line.find(" parameter(")
        if at >= 0:
            number = line[at + len(" parameter(") : line.find(")", at)]
            if number.isdigit() and int(number) < len(args):
                marks.append(replace(args[int(number)], line=i))
        elif line.lstrip().startswith("ROOT "):
            marks += [replace(mark, line=i) for mark in results]
    return marks


def annotate_module(
    lowered: Any,
    dialect: ModuleDialect,
    debug_info: bool,
    main: MainSignature | None,
    inputs: Sequence[Input],
) -> ProgramText:
    """``lowered.as_text(dialect)`` with ``@main``'s values one per line (StableHLO) and
    each argument and result marked."""
    text = seam.lowered_text(lowered, dialect, debug_info)
    if main is None:
        return ProgramText(dialect, text, (), debug_info)
    args, results = _module_marks(main, inputs)
    if dialect == "hlo":
        return ProgramText("hlo", text, tuple(_hlo_marks(text, args, results)), debug_info)
    text, marks = _layout_main(text, args, results)
    return ProgramText("stablehlo", text, tuple(marks), debug_info)
