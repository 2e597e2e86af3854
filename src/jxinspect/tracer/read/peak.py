"""The memory a compiled program holds per device at its peak, and what holds it.

XLA's buffer assignment (:func:`~jxinspect.tracer.seam.buffer_assignment`, decoded by
:mod:`.xla_protos`; on CPU no dump folder, on a TPU the one its compile dumps) gives
every allocation: the entry parameters (the arguments), the maybe-live-out allocations
(the results, and a tuple result's pointer table), constants and thread-local scalars
(which ``memory_analysis()`` does not count, nor does this) and the temporaries'
allocations, where logical buffers share memory at offsets. Which temporaries are live
together at the peak: XLA's live ranges replayed over the module's schedule
(:class:`_Replay`; tests/tracer/test_memory_peak.py and test_topology.py hold it to XLA's
dumped live ranges); a backend that keeps no assignment and dumped none leaves the live
set unknown, said in one line. Each buffer is
named from the optimized HLO's text (:mod:`.hlo_text`): its instruction, type, source
line, loop, what it is for (from the ``jvp``/``transpose`` of its transformation path)
and, for an argument or a result, the user's pytree path.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jxinspect.core.model import BufferRole, MemoryPeak, PeakBuffer, PeakPoint, SpaceUse
from jxinspect.tracer import seam
from jxinspect.tracer.read import hlo_flow, xla_protos
from jxinspect.tracer.read.frames import UserLine
from jxinspect.tracer.read.hlo_text import HloText, Instruction

_LAYOUT = re.compile(r"\{[^{}]*\}|/\*index=\d+\*/")


@dataclass(frozen=True)
class _Assignment:
    """The decoded assignment, and the module's instruction names and schedule."""

    proto: Any
    names: dict[int, str]
    """Instruction id → name."""
    schedule: dict[str, int]
    """Instruction name → its place in its computation's scheduled sequence."""


def read_peak(
    compiled: Any,
    analysis: Any,
    module: HloText,
    paths: tuple[dict[int, str], list[str]],
    dumped: bytes | None = None,
    code: int | None = None,
) -> MemoryPeak:
    """The peak of ``compiled`` per device and the buffers live there. ``analysis``: its
    ``memory_analysis()`` (:func:`~jxinspect.tracer.seam.memory_analysis`); ``module``:
    its optimized HLO, read; ``paths``: its parameters' paths by number, its results';
    ``code``: the executable's code where the device loads it into the same memory (a
    TPU's HBM), counted in the peak."""
    source = seam.buffer_assignment(compiled, analysis, dumped)
    if source is None:
        said = seam.peak_memory_bytes(analysis)  # the TPU compiler's own: no assignment kept
        return MemoryPeak(said, buffers=None, on_chip=None, unread=_release(
            "keeps no buffer assignment in this executable: the buffers live at the peak are "
            "not read" + ("; the peak is memory_analysis()'s peak_memory_in_bytes" if said
                          else "")))  # fmt: skip
    try:
        assignment = _decode(*source)
        return _Peak(assignment, module, paths, code).read()
    except Exception as err:  # a proto this reader does not know: unknown, never empty
        first = (str(err).strip().splitlines() or [""])[0][:160]
        return MemoryPeak(None, buffers=None, on_chip=None,
                          unread=_release(f"buffer assignment not read ({type(err).__name__}: "
                                          f"{first})"))  # fmt: skip


def _release(what: str) -> str:
    return f"XLA {what} (JAX {seam.jax_version()})"


def _decode(kind: str, data: bytes, module_data: bytes | None) -> _Assignment:
    if kind == "HloProto":
        whole = xla_protos.decode("HloProto", data)
        proto, module = whole.buffer_assignment, whole.hlo_module
    else:
        proto = xla_protos.decode("BufferAssignment", data)
        module = xla_protos.decode("Module", module_data or b"")
    names = {i.id: i.name for c in module.computations for i in c.instructions}
    return _Assignment(proto, names, _sequences(module))


def _sequences(module: Any) -> dict[str, int]:
    """Each scheduled instruction's place in its computation's sequence (one count over
    all sequences: only the order within a computation means anything)."""
    names = {i.id: i.name for c in module.computations for i in c.instructions}
    ids = [i for entry in module.schedule.sequences for i in entry.value.instruction_ids]
    return {names[i]: place for place, i in enumerate(ids) if i in names}


class _Peak:
    """One reading of an assignment against the module's text."""

    def __init__(
        self,
        assignment: _Assignment,
        module: HloText,
        paths: tuple[dict[int, str], list[str]],
        code: int | None = None,
    ) -> None:
        self.assignment = assignment
        self.module = module
        self.paths = paths
        self.code = code
        self.buffers = {b.id: b for b in assignment.proto.logical_buffers}
        self.differentiates = any(
            "transpose(" in (i.op_name or "") for i in module.instructions.values()
        )
        self.counted: dict[int, list[Any]] = {}
        """Each memory space's counted allocations, by its number (XLA's colour)."""
        for allocation in assignment.proto.buffer_allocations:
            if _counted(allocation):
                self.counted.setdefault(allocation.color, []).append(allocation)
        self.replay = self._replay(0)

    def _replay(self, space: int) -> _Replay:
        """The live ranges of the temporaries of one memory space."""
        temporaries = [a for a in self.counted.get(space, ()) if _holds_temporaries(a)]
        return _Replay(self, [b.logical_buffer_id for a in temporaries for b in a.assigned])

    def read(self) -> MemoryPeak:
        counted = self.counted.get(0, [])
        live, at = self.replay.peak() if self.replay.region else ([], None)
        point = self._point(at)
        backward = point is not None and self._role(point.instruction, False) == "backward"
        held = [self._held(a) for a in counted if not _holds_temporaries(a)]
        whole_run = sum(b.bytes for b in held) + (self.code or 0)
        held += [self._temporary(self.buffers[i], backward) for i in live]
        held.sort(key=_largest_first)
        return MemoryPeak(
            sum(b.bytes for b in held) + (self.code or 0),
            sum(a.size for a in counted) + (self.code or 0),
            point,
            tuple(held),
            timeline=tuple(whole_run + t for t in self.replay.timeline),
            code=self.code,
            on_chip=tuple(self._space(space) for space in sorted(self.counted) if space != 0),
        )

    def _space(self, space: int) -> SpaceUse:
        """A memory space other than the main one at its own peak: its whole-run
        allocations and the temporaries live together at its most."""
        replay = self._replay(space) if space != 0 else self.replay
        live, _ = replay.peak() if replay.region else ([], None)
        held = [self._held(a) for a in self.counted[space] if not _holds_temporaries(a)]
        held += [self._temporary(self.buffers[i], False) for i in live]
        held.sort(key=_largest_first)
        return SpaceUse(seam.memory_space_name(space), space, sum(b.bytes for b in held),
                        tuple(held))  # fmt: skip

    def _point(self, name: str | None) -> PeakPoint | None:
        if name is None:
            return None
        instruction = self.module.instructions.get(name)
        at = self.module.located(instruction) if instruction else UserLine(None, None)
        times = self.replay.times
        return PeakPoint(name, at.file, at.line, at.library_file, at.library_line,
                         times.get(name), len(times) or None)  # fmt: skip

    def _name(self, buffer: Any) -> str:
        at = buffer.defined_at
        return self.assignment.names.get(at.instruction_id) or at.instruction_name

    def _held(self, allocation: Any) -> PeakBuffer:
        """An argument's or a result's allocation, whole."""
        if allocation.is_entry_computation_parameter:
            number = allocation.parameter_number
            name = self.module.computations[self.module.entry].parameters.get(number)
            instruction = self.module.instructions.get(name or "")
            return PeakBuffer(
                allocation.size,
                _type(instruction.shape if instruction else "?", allocation.parameter_shape_index),
                "argument",
                path=self.paths[0].get(number),
                instruction=name,
                donated=allocation.maybe_live_out,
            )
        for assigned in allocation.assigned:
            buffer = self.buffers.get(assigned.logical_buffer_id)
            if buffer is None:
                continue
            name = self._name(buffer)
            instruction = self.module.instructions.get(name)
            if instruction is None:
                continue
            index = list(buffer.defined_at.shape_index)
            shape = _type(instruction.shape, index)
            if shape.startswith("(") and allocation.size == assigned.size:
                return PeakBuffer(allocation.size, shape, "result", instruction=name)
            outputs = hlo_flow.outputs_of(self.module, name) if not index else ()
            if outputs:
                paths = self.paths[1]
                path = paths[outputs[0]] if outputs[0] < len(paths) else None
                return PeakBuffer(allocation.size, shape, "result", path, instruction=name)
        first = allocation.assigned[0] if allocation.assigned else None
        name = self._name(self.buffers[first.logical_buffer_id]) if first else None
        instruction = self.module.instructions.get(name or "")
        return PeakBuffer(allocation.size, _type(instruction.shape if instruction else "?", []),
                          "result", instruction=name)  # fmt: skip

    def _temporary(self, buffer: Any, backward: bool) -> PeakBuffer:
        name = self._name(buffer)
        instruction = self.module.instructions.get(name)
        if instruction is None:
            return PeakBuffer(buffer.size, "?", "temporary", instruction=name)
        at = self.module.located(instruction)
        loops, _ = hlo_flow.loops_of(self.module, instruction.computation)
        return PeakBuffer(
            buffer.size,
            _type(instruction.shape, list(buffer.defined_at.shape_index)),
            "collective" if _collective(instruction) else "temporary",
            instruction=name,
            file=at.file,
            line=at.line,
            library_file=at.library_file,
            library_line=at.library_line,
            role=self._role(name, backward),
            loop=loops[-1] if loops else None,
        )

    def _role(self, name: str, peak_in_backward: bool) -> BufferRole | None:
        """What the temporary ``name`` defines is for, where the program differentiates."""
        if not self.differentiates:
            return None
        instruction = self.module.instructions.get(name)
        op_name = (instruction.op_name if instruction else None) or ""
        if "transpose(" in op_name:
            return "backward"
        if "jvp(" in op_name:
            return "residual" if peak_in_backward else "forward"
        place = self.replay.times.get(name)
        first_backward = self._first_backward
        if first_backward is not None and place is not None and place > first_backward:
            return "update"
        return "forward"

    @functools.cached_property
    def _first_backward(self) -> int | None:
        """The schedule's first backward instruction (``transpose(`` in its op name)."""
        times = self.replay.times
        return min(
            (times[i.name] for i in self.module.instructions.values()
             if i.name in times and "transpose(" in (i.op_name or "")),
            default=None,
        )  # fmt: skip


def _largest_first(buffer: PeakBuffer) -> tuple[int, str, str, str]:
    return (-buffer.bytes, buffer.kind, buffer.path or "", buffer.instruction or "")


def _counted(allocation: Any) -> bool:
    """Whether ``memory_analysis()`` counts the allocation: not a thread-local scalar, not
    a constant (part of the program)."""
    return allocation.size > 0 and not (allocation.is_thread_local or allocation.is_constant)


def _holds_temporaries(allocation: Any) -> bool:
    return not (allocation.is_entry_computation_parameter or allocation.maybe_live_out)


def _collective(instruction: Instruction) -> bool:
    """Whether a collective defines the buffer (its ``-done`` too: the result is there)."""
    return hlo_flow.collective_kind(instruction.opcode.removesuffix("-done")) is not None


def _type(shape: str, index: Sequence[int]) -> str:
    """The element at tuple ``index`` of an HLO shape, without layouts (``f32[16,128]``)."""
    text = _LAYOUT.sub("", shape).strip()
    for position in index:
        elements = _elements(text)
        if position >= len(elements):
            return text
        text = elements[position]
    return text


def _elements(tuple_text: str) -> list[str]:
    """A tuple shape's elements (``(f32[2], (s32[], f32[]))`` → two), split at its own
    commas; a non-tuple is one."""
    if not tuple_text.startswith("("):
        return [tuple_text]
    inner = tuple_text[1:-1]
    parts: list[str] = []
    depth = 0
    start = 0
    for i, char in enumerate(inner):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    return [p for p in parts if p]


_FORWARDING = frozenset(("tuple", "get-tuple-element", "bitcast", "call"))
"""Instructions that pass their operands' buffers on without reading them (a ``call``:
to its computation's parameters, read there)."""
_SEQUENTIAL = frozenset(("while", "conditional", "call"))
"""Instructions whose called computations run in the schedule, before them."""


class _Replay:
    """XLA's live ranges, replayed from the schedule over the temporaries' buffers.

    Each buffer is live from the instruction defining it (a called computation's
    parameter: from the computation's start) to the last one reading it, the schedule
    flattened as XLA flattens it (a loop's condition, then its body, then the loop); a
    buffer passed on by a tuple, a ``get-tuple-element``, a ``bitcast``, a loop's state or
    its result is read where those are read; one read by a ``while`` is read at its body's
    parameter; a called computation's root is read just after it ends. A loop's state is
    one buffer through the loop (its initial value, the condition's and the body's
    parameters, the body's root, the loop's result): as XLA's ``HloLiveRange`` does, each
    of its values is live until the next one starts, the last until the latest read of
    any. Buffers at one offset of one allocation are one memory: counted once."""

    def __init__(self, peak: _Peak, held: Sequence[int]) -> None:
        self.reading = peak
        self.module = peak.module
        self.at: dict[tuple[str, tuple[int, ...]], int] = {}
        region: dict[int, tuple[int, int, int]] = {}
        for allocation in peak.assignment.proto.buffer_allocations:
            for assigned in allocation.assigned:
                region[assigned.logical_buffer_id] = (allocation.index, assigned.offset,
                                                      assigned.size)  # fmt: skip
        self.region = {i: region[i] for i in held if i in region and i in peak.buffers}
        for buffer_id in self.region:
            buffer = peak.buffers[buffer_id]
            self.at[(peak._name(buffer), tuple(buffer.defined_at.shape_index))] = buffer_id
        self.found: dict[tuple[str, tuple[int, ...]], int | None] = {}
        self.times, self.spans = self._flatten()
        self.timeline: list[int] = []
        """The temporaries' live bytes at each time (after :meth:`peak`)."""

    def _flatten(self) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
        """Each instruction's time, and each called computation's (first, last) times."""
        times: dict[str, int] = {}
        spans: dict[str, tuple[int, int]] = {}
        schedule = self.reading.assignment.schedule
        sequences: dict[str, list[str]] = {}
        for name in sorted(schedule, key=schedule.__getitem__):
            instruction = self.module.instructions.get(name)
            if instruction is not None:
                sequences.setdefault(instruction.computation, []).append(name)

        def place(computation: str) -> None:
            first = len(times)
            for name in sequences.get(computation, ()):
                instruction = self.module.instructions[name]
                if instruction.opcode in _SEQUENTIAL:
                    called = instruction.called("condition") + instruction.called("body")
                    for callee in called or instruction.called():
                        place(callee)
                times[name] = len(times)
            spans[computation] = (first, len(times) - 1)

        place(self.module.entry)
        return times, spans

    def value(self, name: str, index: tuple[int, ...], depth: int = 0) -> int | None:
        """The temporary's buffer at tuple ``index`` of instruction ``name``'s result."""
        key = (name, index)
        if key in self.at or depth > 256:
            return self.at.get(key)
        if key not in self.found:
            self.found[key] = self._followed(name, index, depth)
        return self.found[key]

    def _followed(self, name: str, index: tuple[int, ...], depth: int) -> int | None:
        """:meth:`value` where ``name`` defines no buffer at ``index``: through what passes
        one on."""
        instruction = self.module.instructions.get(name)
        if instruction is None:
            return None
        op, operands = instruction.opcode, instruction.operands
        if op == "get-tuple-element" and operands and instruction.index is not None:
            return self.value(operands[0], (instruction.index, *index), depth + 1)
        if op in ("bitcast", "while") and operands:
            return self.value(operands[0], index, depth + 1)
        if op in _DONE_ELEMENT and operands:  # an asynchronous pair's result is the start's
            element = _DONE_ELEMENT[op]
            at = index if element is None else (element, *index)
            return self.value(operands[0], at, depth + 1)
        if op == "tuple" and index and index[0] < len(operands):
            return self.value(operands[index[0]], index[1:], depth + 1)
        if op == "call" and instruction.called():
            root = self.module.computations[instruction.called()[0]].root
            return self.value(root, index, depth + 1) if root else None
        if op == "parameter" and instruction.computation != self.module.entry:
            callers = [c for c in self.module.callers.get(instruction.computation, [])
                       if c.opcode in ("while", "call") and c.operands]  # fmt: skip
            if not callers:
                return None
            number = 0 if callers[0].opcode == "while" else instruction.number or 0
            return self.value(callers[0].operands[number], index, depth + 1)
        return None

    def values_under(self, name: str) -> set[int]:
        """Every temporary's buffer in instruction ``name``'s result, at any tuple index."""
        instruction = self.module.instructions.get(name)
        found: set[int] = set()
        for index in _indices(instruction.shape if instruction else ""):
            buffer_id = self.value(name, index)
            if buffer_id is not None:
                found.add(buffer_id)
        return found

    def peak(self) -> tuple[list[int], str | None]:
        """The buffers live at the peak (one per memory region) and the instruction the
        peak is reached at."""
        start = {i: self._start(i) for i in self.region}
        end = dict(start)

        def read(ids: set[int], time: int) -> None:
            for i in ids:
                end[i] = max(end[i], time)

        for name, time in self.times.items():
            instruction = self.module.instructions[name]
            if instruction.opcode == "get-tuple-element":
                read({v for v in [self.value(instruction.operands[0], ())] if v is not None}, time)
            elif instruction.opcode == "while":
                body = [self.module.computations[c] for c in instruction.called("body")]
                entered = self.times.get(body[0].parameters.get(0, ""), time) if body else time
                read(self.values_under(instruction.operands[0]), entered)
            elif instruction.opcode not in _FORWARDING:
                for operand in instruction.operands:
                    read(self.values_under(operand), time)
        for computation, (_, last) in self.spans.items():
            root = self.module.computations[computation].root
            if computation != self.module.entry and root:
                read(self.values_under(root), last + 1)
        for values in self._loop_states():
            ordered = sorted(values, key=lambda i: (start[i], end[i], i))
            for earlier, later in zip(ordered, ordered[1:]):
                end[later] = max(end[earlier], end[later])
                end[earlier] = min(end[earlier], start[later])
        return self._sweep(start, end)

    def _start(self, buffer_id: int) -> int:
        """When a buffer's life starts: at its defining instruction, or where that is a
        called computation's parameter, at the computation's start (XLA's rule)."""
        name = self.reading._name(self.reading.buffers[buffer_id])
        instruction = self.module.instructions.get(name)
        if instruction is not None and instruction.opcode == "parameter":
            span = self.spans.get(instruction.computation)
            if span is not None:
                return span[0]
        return self.times.get(name, 0)

    def _loop_states(self) -> list[set[int]]:
        """The temporaries' buffers that hold one loop state element, joined (XLA's alias
        analysis makes them one buffer): per tuple index of each ``while``, its initial
        value, its condition's and body's parameters, its body's root and its result."""
        joined: dict[int, int] = {}

        def root(i: int) -> int:
            while joined.get(i, i) != i:
                i = joined[i]
            return i

        for instruction in self.module.instructions.values():
            if instruction.opcode != "while" or not instruction.operands:
                continue
            bodies = [self.module.computations[c] for c in instruction.called("body")]
            called = bodies + [self.module.computations[c] for c in instruction.called("condition")]
            names = [instruction.operands[0], instruction.name]
            names += [c.parameters[0] for c in called if 0 in c.parameters]
            names += [c.root for c in bodies if c.root]
            for index in _indices(instruction.shape):
                found = sorted({v for v in (self.value(n, index) for n in names) if v is not None})
                for other in found[1:]:
                    joined[root(other)] = root(found[0])
                if found:
                    joined.setdefault(found[0], found[0])
        groups: dict[int, set[int]] = {}
        for i in joined:
            groups.setdefault(root(i), set()).add(i)
        return [group for group in groups.values() if len(group) > 1]

    def _sweep(self, start: dict[int, int], end: dict[int, int]) -> tuple[list[int], str | None]:
        """The first time the most memory is live, each region counted once over the
        union of its buffers' ranges, the buffers live then (per region, the latest
        defined), and the live bytes at every time."""
        ranges: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
        for i, region in self.region.items():
            ranges.setdefault(region, []).append((start[i], end[i]))
        change = [0] * (len(self.times) + 2)
        for region, spans in ranges.items():
            for first, last in _merged(spans):
                change[first] += region[2]
                change[last + 1] -= region[2]
        live, self.timeline = 0, []
        for time in range(len(self.times)):
            live += change[time]
            self.timeline.append(live)
        best = max(range(len(self.timeline)), key=self.timeline.__getitem__, default=0)
        chosen: dict[tuple[int, int, int], int] = {}
        for i in sorted(self.region, key=lambda i: (-start[i], i)):
            if start[i] <= best <= end[i]:
                chosen.setdefault(self.region[i], i)
        names = {time: name for name, time in self.times.items()}
        return sorted(chosen.values()), names.get(best)


_DONE_ELEMENT: dict[str, int | None] = {
    "copy-done": 0,
    "all-gather-done": 1,
    "collective-permute-done": 1,
    "async-done": 1,
    "all-reduce-done": None,
}
"""The element of its ``-start``'s result that an asynchronous ``-done`` gives (``None``:
the whole), where the ``-done`` defines no buffer of its own (the TPU's ``copy-done`` of
a prefetch): ``copy-start`` is (destination, source, context), a collective's start
(operands, output, ...)."""


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping (first, last) ranges joined."""
    joined: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if joined and first <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], last))
        else:
            joined.append((first, last))
    return joined


def _indices(shape: str) -> list[tuple[int, ...]]:
    """Every tuple index of an HLO shape, itself ``()`` first."""
    found: list[tuple[int, ...]] = [()]
    text = _LAYOUT.sub("", shape).strip()
    if text.startswith("("):
        for position, element in enumerate(_elements(text)):
            found += [(position, *rest) for rest in _indices(element)]
    return found
