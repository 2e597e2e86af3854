"""Shardy's propagation edges: which operation passed each mesh axis on to which value.

XLA writes them beside the origins (``sdy.propagation_edges = #sdy.propagation_edges<[
{step-3 = [{"data" = operand-0 -> [result-0]}]}]>``: at step 3 this operation passed
``data`` from its operand 0 to its result 0). The bindings of 0.12 fail to parse the
attribute as that release's XLA writes it, so :func:`as_strings` makes each one a string
before the module is parsed and :class:`Edges` reads the strings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from jxinspect.tracer import seam
from jxinspect.tracer.read.mlir import string_value

_OPENING = "#sdy.propagation_edges<"
_NAMES = re.compile(r"\bsdy\.(\w*propagation_edges) = ")
EDGES_ATTRIBUTE = "jxinspect.propagation_edges"
"""The name an operation's edges are kept under once a string."""
_STEP = re.compile(r"step-(\d+) = ")
_EDGE = re.compile(r'"((?:[^"\\]|\\.)*)" = (operand|result)-(\d+) -> \[([^\]]*)\]')
_END = re.compile(r"(operand|result)-(\d+)")
_LONGEST = 256
"""The most operations a chain is followed through (a guard against a cycle)."""

ValueKey = tuple[str, int, int]
"""A value: ``("result", position, number)`` of the operation at ``position`` of the
walk, or ``("argument", 0, number)`` of ``@main``."""


def as_strings(text: str) -> str:
    """``text`` with each ``#sdy.propagation_edges<...>`` made a string attribute under a
    name outside Shardy's (whose verifier checks what its attributes hold)."""
    text = _NAMES.sub(r"jxinspect.\1 = ", text)
    out: list[str] = []
    at = 0
    while (start := text.find(_OPENING, at)) >= 0:
        depth, i = 1, start + len(_OPENING)
        while i < len(text) and depth:
            if text[i] == "<":
                depth += 1
            elif text[i] == ">" and text[i - 1] != "-":
                depth -= 1
            i += 1
        body = text[start + len(_OPENING) : i - 1].replace("\\", "\\\\").replace('"', '\\"')
        out += [text[at:start], f'"{body}"']
        at = i
    out.append(text[at:])
    return "".join(out)


class Edges:
    """Where each axis of each value came from: the operation that passed it on, and
    the value it passed it from."""

    def __init__(self, operations: Sequence[Any], main: Any) -> None:
        self._block = main.regions[0].blocks[0]
        self._position = {op.operation: n for n, op in enumerate(operations)}
        self._from: dict[tuple[ValueKey, str], tuple[int, int, ValueKey]] = {}
        for position, op in enumerate(operations):
            if EDGES_ATTRIBUTE in op.attributes:
                self._read(position, op, string_value(op.attributes[EDGES_ATTRIBUTE]))

    def _read(self, position: int, op: Any, text: str) -> None:
        steps = list(_STEP.finditer(text))
        for n, step in enumerate(steps):
            end = steps[n + 1].start() if n + 1 < len(steps) else len(text)
            for edge in _EDGE.finditer(text, step.end(), end):
                source = self._end(position, op, edge[2], int(edge[3]))
                if source is None:
                    continue
                for target in _END.finditer(edge[4]):
                    reached = self._end(position, op, target[1], int(target[2]))
                    known = self._from.get((reached, edge[1])) if reached else None
                    if reached and (known is None or int(step[1]) < known[0]):
                        self._from[(reached, edge[1])] = (int(step[1]), position, source)

    def _end(self, position: int, op: Any, side: str, number: int) -> ValueKey | None:
        if side == "result":
            return ("result", position, number) if number < len(op.results) else None
        return self.key(op.operands[number]) if number < len(op.operands) else None

    def key(self, value: Any) -> ValueKey | None:
        """The key of an SSA value: an operation's result, or an argument of ``@main``
        (``None`` for one of a nested block: a loop's body)."""
        number = seam.block_argument_number(value, self._block)
        if number is not None:
            return ("argument", 0, number)
        made = seam.producer(value)
        if made is None or made[0].operation not in self._position:
            return None
        return ("result", self._position[made[0].operation], made[1])

    def chain(self, value: ValueKey, axis: str) -> list[int]:
        """The positions of the operations that carried ``axis`` to ``value``, from the
        one nearest the declaration to the one that made ``value`` (``[]``: none
        recorded: the value is where the axis was declared)."""
        found: list[int] = []
        seen = {value}
        while (edge := self._from.get((value, axis))) is not None and len(found) < _LONGEST:
            _, position, value = edge
            found.append(position)
            if value in seen:
                break
            seen.add(value)
        return found[::-1]
