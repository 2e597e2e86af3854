"""The optimized HLO module as text (``compiled.as_text()``), read into computations and
instructions: enough to follow data flow (operands, called computations, tuple indices,
a while loop's known trip count), to read an entry parameter's name, an instruction's
source line and the module's aliasing. This text is what XLA itself prints of the
program it runs, so it is read directly (no conversion to another IR that may not know
an attribute a newer XLA writes).

The module header says the partitions and replicas and ``input_output_alias={ {0}: (1,
{}, may-alias) }``; from 0.10 on, tables (``FileNames``, ``FileLocations``,
``StackFrames``) give each ``stack_frame_id`` its file and line, where older releases
write ``source_file``/``source_line`` in the metadata. One line per instruction,
``[ROOT] %name = SHAPE opcode(%a, %b), key=value, ...``, inside ``[ENTRY] %computation
(params) -> shape {`` ... ``}``; older releases write a type before each operand
(``f32[8]{0} %a``), which the operand reader skips. A line inside a computation that is
no instruction is an error (:class:`UnreadHlo`), never skipped: what was not read is
unknown, not absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from jxinspect.project.targets import is_users_file
from jxinspect.tracer.read.frames import UserLine, locate

_HEADER = re.compile(r"^(ENTRY\s+)?%?(\S+)\s+\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s+(ROOT\s+)?%?([^\s=]+)\s*=\s*(.+?)\s([a-z][a-z0-9\-]*)\((.*)$")
_OPERAND = re.compile(r"%([^\s,(){}]+)")
_CALLED = re.compile(r"(?:^|, )(calls|to_apply|body|condition)=%?([^\s,{}]+)")
_INDEX = re.compile(r"(?:^|, )index=(\d+)")
_CHANNEL = re.compile(r"(?:^|, )channel_id=(\d+)")
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)")
_TRIP_COUNT = re.compile(r'"known_trip_count":(\{[^{}]*\})')
_SOURCE_FILE = re.compile(r'\bsource_file="((?:[^"\\]|\\.)*)"')
_SOURCE_LINE = re.compile(r"\bsource_line=(\d+)")
_FRAME_ID = re.compile(r"\bstack_frame_id=(\d+)")
_ALIASES = re.compile(r"\binput_output_alias=\{(.*?)\}\s*(?:,\s*[a-z_]+=|$)")
_ALIAS = re.compile(r"\{([\d,\s]*)\}:\s*\((\d+),\s*\{[\d,\s]*\}(?:,\s*[a-z-]+)?\)")
_HEADER_COUNT = re.compile(r"\b(num_partitions|replica_count)=(\d+)")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_TABLE_ROW = re.compile(r"^(\d+)\s+(.*)$")
_FIELD = re.compile(r"\b([a-z_]+)=(\d+)")


class UnreadHlo(ValueError):
    """The HLO text holds something this reader does not know: what, in one line."""


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
    """A ``parameter``'s number, or an integer scalar ``constant``'s value (``constant(7)``);
    ``None`` for any other instruction."""

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
    def frame(self) -> int | None:
        """Its metadata's ``stack_frame_id`` (0.10 on)."""
        found = _FRAME_ID.search(self.attributes)
        return int(found.group(1)) if found else None

    @property
    def source_file(self) -> tuple[str | None, int | None]:
        """Its metadata's ``source_file`` and ``source_line`` (up to 0.9)."""
        file, line = _SOURCE_FILE.search(self.attributes), _SOURCE_LINE.search(self.attributes)
        return (
            _ESCAPE.sub(r"\1", file.group(1)) if file else None,
            int(line.group(1)) if line else None,
        )

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
    devices: int = 1
    """Partitions × replicas: the logical device ids collectives name are below it."""
    partitions: int = 1
    """``num_partitions``: a logical id is replica × partitions + partition."""
    aliases: dict[int, int] = field(default_factory=dict)
    """``input_output_alias``: entry parameter number → the output index it is aliased to
    (0 for a program whose one output is no tuple)."""
    frames: dict[int, tuple[str, int]] = field(default_factory=dict)
    """``stack_frame_id`` → (file, line), from the module's tables (0.10 on)."""
    parents: dict[int, int] = field(default_factory=dict)
    """``stack_frame_id`` → its caller's frame (none for the outermost)."""

    def located(self, instruction: Instruction) -> UserLine:
        """Where the user's code made ``instruction``: the innermost frame of its stack in
        the user's files, and the innermost frame where that is a library's (Flax's
        ``linear.py`` called from the user's model); from 0.10 the stack is the module's
        tables, before it the metadata's one ``source_file``/``source_line`` (the user's,
        or a library's with the user's unknown)."""
        frame = instruction.frame
        if frame is None or frame not in self.frames:
            file, line = instruction.source_file
            if file is None or is_users_file(file):
                return UserLine(file, line)
            return UserLine(None, None, file, line)
        return locate(self._stack(frame))

    def _stack(self, frame: int) -> Iterator[tuple[str, int]]:
        """The frames of ``frame``'s stack, innermost first (each once)."""
        seen: set[int] = set()
        at: int | None = frame
        while at is not None and at in self.frames and at not in seen:
            seen.add(at)
            yield self.frames[at]
            at = self.parents.get(at)


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


def _instruction(line: str, at: int, computation: Computation) -> None:
    found = _INSTRUCTION.match(line)
    if found is None:
        raise UnreadHlo(f"line {at} of computation {computation.name} is no instruction "
                        f"this reader knows: {line.strip()[:80]}")  # fmt: skip
    root, name, shape, opcode, rest = found.groups()
    inside, attributes = _operand_text(rest)
    literal = inside.strip()
    counted = opcode in ("parameter", "constant") and literal.removeprefix("-").isdigit()
    number = int(literal) if counted else None
    operands = () if number is not None else tuple(_OPERAND.findall(inside))
    instruction = Instruction(name, opcode, shape, operands, attributes, computation.name, number)
    computation.instructions[name] = instruction
    if number is not None and opcode == "parameter":
        computation.parameters[number] = name
    if root:
        object.__setattr__(computation, "root", name)


def _aliases(header: str) -> dict[int, int]:
    """``input_output_alias={ {0}: (1, {}, may-alias), ... }`` → {1: 0}."""
    if "input_output_alias=" not in header:
        return {}
    found = _ALIASES.search(header)
    entries = _ALIAS.findall(found.group(1)) if found else []
    if found is None or len(entries) != found.group(1).count(":"):
        raise UnreadHlo(
            f"input_output_alias not read: {header[header.find('input_output') :][:80]}"
        )
    return {
        int(parameter): int(output.split(",")[0]) if output.strip() else 0
        for output, parameter in entries
    }


def _tables(rows: dict[str, dict[int, str]]) -> tuple[dict[int, tuple[str, int]], dict[int, int]]:
    """The stack-frame tables → ``stack_frame_id`` → (file, line), and → its caller's.

    The text writes each ``parent_frame_id`` one more than the module's proto holds (its
    outermost frame's "none", 0, as 1; measured on 0.10.2 against
    ``hlo_modules()[0]``'s ``stack_frame_index``: tests/e2e/test_user_frames.py): a frame
    written as its own parent says so, and every parent is then read one less."""
    files = {k: _ESCAPE.sub(r"\1", v.strip().strip('"')) for k, v in rows["FileNames"].items()}
    locations = {k: dict((a, int(b)) for a, b in _FIELD.findall(v))
                 for k, v in rows["FileLocations"].items()}  # fmt: skip
    frames: dict[int, tuple[str, int]] = {}
    for frame, text in rows["StackFrames"].items():
        location = locations.get(int(dict(_FIELD.findall(text)).get("file_location_id", -1)), {})
        if "file_name_id" in location and "line" in location:
            frames[frame] = (files.get(location["file_name_id"], "?"), location["line"])
    written = {frame: int(dict(_FIELD.findall(text)).get("parent_frame_id", 0))
               for frame, text in rows["StackFrames"].items()}  # fmt: skip
    shift = 1 if any(parent == frame for frame, parent in written.items()) else 0
    parents = {frame: parent - shift for frame, parent in written.items() if parent - shift > 0}
    return frames, parents


def parse(text: str) -> HloText:
    """Read an HLO module's text (:class:`UnreadHlo` where it holds what this reader does
    not know)."""
    computations: dict[str, Computation] = {}
    current: Computation | None = None
    entry = ""
    counts = {"num_partitions": 1, "replica_count": 1}
    aliases: dict[int, int] = {}
    rows: dict[str, dict[int, str]] = {table: {} for table in _TABLES}
    table: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if current is not None:
            if line.startswith("}"):
                current = None
            elif line.strip():
                _instruction(line, number, current)
            continue
        header = _HEADER.match(line)
        if header is not None:
            current = Computation(header.group(2), bool(header.group(1)))
            computations[current.name] = current
            entry = current.name if current.entry else entry
            table = None
        elif line.startswith("HloModule "):
            counts.update((k, int(v)) for k, v in _HEADER_COUNT.findall(line))
            aliases = _aliases(line)
        elif line.strip() in _TABLES:
            table = line.strip()
        elif table is not None and (row := _TABLE_ROW.match(line.strip())):
            rows[table][int(row.group(1))] = row.group(2)
        elif line.strip() and (line[0].isspace() or line.startswith(("%", "ENTRY"))):
            raise UnreadHlo(f"line {number} is in no computation this reader knows: "
                            f"{line.strip()[:80]}")  # fmt: skip
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
    if not entry:
        raise UnreadHlo("no ENTRY computation")
    devices = counts["num_partitions"] * counts["replica_count"]
    return HloText(computations, entry, instructions, callers, users, devices,
                   counts["num_partitions"], aliases, *_tables(rows))  # fmt: skip


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
