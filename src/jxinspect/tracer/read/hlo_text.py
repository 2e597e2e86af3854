"""The optimized HLO module as text (``compiled.as_text()``), read into computations and
instructions: enough to follow data flow (operands, called computations, tuple indices,
a while loop's known trip count) and to read an entry parameter's name.

One line per instruction, ``[ROOT] %name = SHAPE opcode(%a, %b), key=value, ...``, inside
``[ENTRY] %computation (params) -> shape {`` ... ``}``; older releases write a type
before each operand (``f32[8]{0} %a``), which the operand reader skips.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"^(ENTRY\s+)?%?(\S+)\s+\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s+(ROOT\s+)?%?([^\s=]+)\s*=\s*(.+?)\s([a-z][a-z0-9\-]*)\((.*)$")
_OPERAND = re.compile(r"%([^\s,(){}]+)")
_CALLED = re.compile(r"(?:^|, )(calls|to_apply|body|condition)=%?([^\s,{}]+)")
_INDEX = re.compile(r"(?:^|, )index=(\d+)")
_CHANNEL = re.compile(r"(?:^|, )channel_id=(\d+)")
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)")
_TRIP_COUNT = re.compile(r'"known_trip_count":(\{[^{}]*\})')


@dataclass(frozen=True)
class Instruction:
    """One HLO instruction."""

    name: str
    opcode: str
    shape: str
    """Its result type as written (``f32[8,16]{1,0}``, a tuple ``(s32[], f32[])``)."""
    operands: tuple[str, ...]
    """The instructions it reads, by name, in order (a ``parameter``'s number is its own)."""
    attributes: str
    """Everything written after its operands (``index=2, calls=%f, metadata={...}``)."""
    computation: str
    """The computation holding it."""
    number: int | None = None
    """A ``parameter``'s number; ``None`` for any other instruction."""

    def called(self, kind: str | None = None) -> list[str]:
        """The computations it calls (``calls``, ``to_apply``, ``body``, ``condition``), or
        those of one kind."""
        if "=%" not in self.attributes:  # each call names its computation ``=%name``
            return []
        return [name for key, name in _CALLED.findall(self.attributes) if kind in (None, key)]

    @property
    def index(self) -> int | None:
        """A ``get-tuple-element``'s index."""
        found = _INDEX.search(self.attributes)
        return int(found.group(1)) if found else None

    @property
    def channel(self) -> int | None:
        """A collective's ``channel_id``."""
        found = _CHANNEL.search(self.attributes)
        return int(found.group(1)) if found else None

    @property
    def op_name(self) -> str | None:
        """Its ``op_name`` metadata: the jaxpr equation it came from, or for an entry
        parameter the name of ``@main``'s argument."""
        found = _OP_NAME.search(self.attributes)
        return _ESCAPE.sub(r"\1", found.group(1)) if found else None

    @property
    def trip_count(self) -> int | None:
        """A ``while`` loop's trip count where XLA knows it (``backend_config``'s
        ``known_trip_count``)."""
        found = _TRIP_COUNT.search(self.attributes)
        if found is None:
            return None
        n = json.loads(found.group(1)).get("n")
        return int(n) if n is not None else None


@dataclass(frozen=True)
class Computation:
    """One HLO computation: its instructions in order, its root, its parameters."""

    name: str
    entry: bool
    instructions: dict[str, Instruction] = field(default_factory=dict)
    root: str = ""
    parameters: dict[int, str] = field(default_factory=dict)
    """Parameter number → instruction name."""


@dataclass(frozen=True)
class HloText:
    """A module's computations, the instructions by name, and who calls each computation."""

    computations: dict[str, Computation]
    entry: str
    """The entry computation's name."""
    instructions: dict[str, Instruction]
    """Every instruction by name (HLO names are unique in a module)."""
    callers: dict[str, list[Instruction]]
    """Computation name → the instructions calling it."""
    users: dict[str, list[Instruction]]
    """Instruction name → the instructions reading it."""


def _operand_text(rest: str) -> tuple[str, str]:
    """Split ``a, b), attrs`` at the parenthesis closing the operand list."""
    end = rest.find(")")
    if end >= 0 and "(" not in rest[:end] and "{" not in rest[:end]:  # most lines: no nesting
        return rest[:end], rest[end + 3 :] if rest.startswith(", ", end + 1) else rest[end + 1 :]
    depth = 1
    for i, char in enumerate(rest):
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
            if depth == 0:
                return rest[:i], rest[i + 1 :].lstrip(", ")
    return rest, ""


def _instruction(line: str, computation: Computation) -> None:
    found = _INSTRUCTION.match(line)
    if found is None:
        return
    root, name, shape, opcode, rest = found.groups()
    inside, attributes = _operand_text(rest)
    number = int(inside) if opcode == "parameter" and inside.strip().isdigit() else None
    operands = () if number is not None else tuple(_OPERAND.findall(inside))
    instruction = Instruction(name, opcode, shape, operands, attributes, computation.name, number)
    computation.instructions[name] = instruction
    if number is not None:
        computation.parameters[number] = name
    if root:
        object.__setattr__(computation, "root", name)


def parse(text: str) -> HloText:
    """Read an HLO module's text; lines that are no instruction (the stack-frame tables,
    the module header) are skipped."""
    computations: dict[str, Computation] = {}
    current: Computation | None = None
    entry = ""
    for line in text.splitlines():
        if current is None:
            header = _HEADER.match(line)
            if header is not None:
                current = Computation(header.group(2), bool(header.group(1)))
                computations[current.name] = current
                entry = current.name if current.entry else entry
        elif line.startswith("}"):
            current = None
        else:
            _instruction(line, current)
    instructions: dict[str, Instruction] = {}
    callers: dict[str, list[Instruction]] = {}
    users: dict[str, list[Instruction]] = {}
    for computation in computations.values():
        instructions.update(computation.instructions)
        for instruction in computation.instructions.values():
            for called in instruction.called():
                callers.setdefault(called, []).append(instruction)
            for operand in instruction.operands:
                users.setdefault(operand, []).append(instruction)
    return HloText(computations, entry, instructions, callers, users)


def parameter_names(module: HloText) -> list[str | None]:
    """The name each entry parameter carries (its ``op_name`` metadata, where XLA keeps
    ``@main``'s argument names), by parameter number; ``None`` where it has none (the
    pmap of JAX 0.5 to 0.7 keeps none)."""
    entry = module.computations.get(module.entry)
    if entry is None or not entry.parameters:
        return []
    return [
        entry.instructions[entry.parameters[i]].op_name if i in entry.parameters else None
        for i in range(max(entry.parameters) + 1)
    ]
