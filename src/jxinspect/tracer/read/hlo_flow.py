"""What each collective of the optimized HLO moves, and how often it runs.

From a collective's operands the data flow is followed back to an entry parameter, and
from its result forward to the entry's ROOT, through instructions that only move or
retype their data (:data:`PASSING`), tuples and ``get-tuple-element``, a ``while`` loop's
unchanged elements, and fusions whose root is such a function of one parameter. A
collective in a ``while`` body (a ``scan`` or ``fori_loop``) runs once per trip: its
loops, outermost first, and their trip counts multiply: XLA's own (``known_trip_count``),
else read from the loop as XLA's while-loop analysis reads a counted one (a TPU's loops
carry no count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jxinspect.core.vocabulary import COLLECTIVE_KINDS
from jxinspect.tracer.read.hlo_text import HloText, Instruction, UnreadHlo

KINDS = COLLECTIVE_KINDS
"""The collectives, as HLO spells them (an asynchronous one adds ``-start``/``-done``)."""

PASSING = frozenset(("copy", "bitcast", "reshape", "convert", "transpose", "bitcast-convert",
                     "slice", "dynamic-slice", "copy-start", "copy-done"))  # fmt: skip
"""Instructions whose result is (part of) their first operand's data, moved or retyped."""

CALLS = frozenset(("fusion", "call", "async-start"))
"""Instructions that run a computation on their operands (parameter k is operand k)."""

Value = tuple[str, tuple[int, ...]]
"""An instruction's result, or an element of its tuple: (instruction name, tuple index)."""


@dataclass(frozen=True)
class Flow:
    """One collective instruction of the HLO text: what it moves, where it runs."""

    kind: str
    """``all-reduce``, ``all-gather``, … (an asynchronous pair counts once)."""
    instruction: Instruction
    """The instruction (an asynchronous pair's ``-start``)."""
    parameters: tuple[int, ...]
    """The entry parameters whose data its operands are, by number."""
    outputs: tuple[int, ...]
    """The program outputs its result is, by index."""
    loops: tuple[str, ...]
    """The ``while`` instructions holding it, outermost first."""
    trip_count: int | None
    """How many times it runs per call: its loops' trip counts multiplied (1 outside any
    loop); ``None`` where a loop's count is not known."""


def collective_kind(opcode: str) -> str | None:
    """The collective an opcode is (an asynchronous one's ``-start`` counts as it);
    ``None`` for any other opcode."""
    base = opcode.removesuffix("-start")
    return base if base in KINDS else None


_MEGASCALE = re.compile(r'\b_xla_megascale_transfer_type="?([A-Z_]+)')
_RENDEZVOUS = re.compile(r'\b_xla_host_transfer_rendezvous="([^"]*)"')


def megascale_kind(instruction: Instruction) -> str | None:
    """The collective a ``send`` across slices is (a multi-slice program's ``send``/``recv``
    pair to the data-center network's runtime, ``_xla_megascale_transfer_type=
    "ALL_REDUCE"``, as libtpu 0.0.42.1 and 0.0.50.1 write it; it counts once, as its
    ``send``); ``None`` for any other instruction. :class:`UnreadHlo` for a transfer
    type not known here: never a collective left out."""
    if instruction.opcode != "send":
        return None
    found = _MEGASCALE.search(instruction.attributes)
    if found is None:
        return None
    kind = found.group(1).lower().replace("_", "-")
    if kind not in KINDS:
        raise UnreadHlo(f"%{instruction.name}: a transfer across slices {found.group(1)} not read")
    return kind


def _received(module: HloText, send: Instruction) -> str | None:
    """The ``recv`` that completes a cross-slice ``send`` (the same rendezvous)."""
    said = _RENDEZVOUS.findall(send.attributes)
    for value in module.instructions.values():
        if value.opcode == "recv" and said and _RENDEZVOUS.findall(value.attributes) == said:
            return value.name
    return None


def _only_caller(module: HloText, computation: str) -> Instruction | None:
    callers = module.callers.get(computation, [])
    return callers[0] if len(callers) == 1 else None


def passes(module: HloText, computation: str) -> int | None:
    """The parameter a called computation's root is a plain function of (through
    :data:`PASSING` instructions only), by number; ``None`` where it computes."""
    inside = module.computations.get(computation)
    name = inside.root if inside is not None else ""
    while name in module.instructions:
        instruction = module.instructions[name]
        if instruction.opcode == "parameter":
            return instruction.number
        if instruction.opcode not in PASSING or not instruction.operands:
            return None
        name = instruction.operands[0]
    return None


def _unchanged(module: HloText, loop: Instruction, element: int) -> bool:
    """Whether a ``while`` loop passes its tuple's ``element`` through every trip."""
    body = module.computations.get(next(iter(loop.called("body")), ""))
    root = module.instructions.get(body.root) if body is not None else None
    if root is None or root.opcode != "tuple" or element >= len(root.operands):
        return False
    value = module.instructions.get(root.operands[element])
    while value is not None and value.opcode == "copy":
        value = module.instructions.get(value.operands[0])
    return (
        value is not None
        and value.opcode == "get-tuple-element"
        and value.index == element
        and module.instructions[value.operands[0]].opcode == "parameter"
    )


def _up(module: HloText, parameter: Instruction) -> str | None:
    """The value a non-entry computation's parameter is, in its only caller."""
    caller = _only_caller(module, parameter.computation)
    number = parameter.number or 0
    if caller is None:
        return None
    if caller.opcode == "while":
        return caller.operands[0] if caller.operands else None
    if caller.opcode in CALLS and number < len(caller.operands):
        return caller.operands[number]
    return None


def _step_back(module: HloText, value: Instruction, index: tuple[int, ...]) -> Value | None:
    """The value ``value`` (at tuple ``index``) is a plain copy of, one step back."""
    op = value.opcode
    if op == "parameter":
        up = _up(module, value)
        return (up, index) if up is not None else None
    if op in PASSING or op == "optimization-barrier":
        return value.operands[0], index
    if op == "get-tuple-element" and value.index is not None:
        return value.operands[0], (value.index, *index)
    if op == "tuple" and index and index[0] < len(value.operands):
        return value.operands[index[0]], index[1:]
    if op == "while" and index and _unchanged(module, value, index[0]):
        return value.operands[0], index
    if op in ("fusion", "call") and not index:
        number = passes(module, next(iter(value.called()), ""))
        if number is not None and number < len(value.operands):
            return value.operands[number], ()
    return None


def parameter_of(module: HloText, name: str) -> int | None:
    """The entry parameter whose data the instruction ``name`` is, by number."""
    index: tuple[int, ...] = ()
    for _ in range(10_000):  # each step moves back: a bound, not a limit met
        value = module.instructions.get(name)
        if value is None:
            return None
        if value.opcode == "parameter" and value.computation == module.entry:
            return value.number if not index else None
        step = _step_back(module, value, index)
        if step is None:
            return None
        name, index = step
    return None


def _root_step(module: HloText, value: Instruction, index: tuple[int, ...]) -> list[Value]:
    """Where a computation's root goes: the instruction that called the computation."""
    caller = _only_caller(module, value.computation)
    if caller is not None and (
        caller.opcode in CALLS or value.computation in caller.called("body")
    ):
        return [(caller.name, index)]
    return []


def _steps_forward(module: HloText, name: str, index: tuple[int, ...]) -> list[Value]:
    """The values that are a plain copy of ``name`` (at tuple ``index``), one step on."""
    found: list[Value] = []
    for user in module.users.get(name, []):
        op = user.opcode
        first = user.operands[0] == name
        if (op in PASSING or op.endswith("-done") or op == "optimization-barrier") and first:
            found.append((user.name, index))
        elif op == "get-tuple-element" and (not index or index[0] == user.index):
            found.append((user.name, index[1:]))
        elif op == "tuple":
            found += [(user.name, (k, *index)) for k, o in enumerate(user.operands) if o == name]
        elif op in ("fusion", "call") and not index:
            number = passes(module, next(iter(user.called()), ""))
            if number is not None and user.operands[number] == name:
                found.append((user.name, ()))
    return found


def outputs_of(module: HloText, name: str) -> tuple[int, ...]:
    """The program outputs that are the instruction ``name``'s data, by index."""
    outputs: set[int] = set()
    work: list[Value] = [(name, ())]
    seen: set[Value] = set()
    while work:
        state = work.pop()
        if state in seen or state[0] not in module.instructions:
            continue
        seen.add(state)
        value, index = module.instructions[state[0]], state[1]
        computation = module.computations[value.computation]
        if computation.root == value.name and computation.entry:
            if index:
                outputs.add(index[0])
            elif not value.shape.startswith("("):
                outputs.add(0)
        elif computation.root == value.name:
            work += _root_step(module, value, index)
        work += _steps_forward(module, value.name, index)
    return tuple(sorted(outputs))


def trip_count(module: HloText, loop: Instruction) -> int | None:
    """How many times a ``while`` loop runs: XLA's count (``known_trip_count``), else, for
    a counted loop, ``ceil((N - start) / step)``: its condition is ``state[k] < N`` of a
    constant ``N``, its state enters with a constant ``start`` at ``k``, and its body adds a
    constant ``step`` there (one written in the body, or a state element the body passes
    on unchanged); ``None`` for any other loop."""
    if loop.trip_count is not None:
        return loop.trip_count
    condition, body = loop.called("condition"), loop.called("body")
    if len(condition) != 1 or len(body) != 1 or len(loop.operands) != 1:
        return None
    test, update = _root(module, condition[0]), _root(module, body[0])
    if test is None or test.opcode != "compare" or "direction=LT" not in test.attributes:
        return None
    k = _state_index(module, test.operands[0])
    if update is None or update.opcode != "tuple" or k is None or k >= len(update.operands):
        return None
    limit = _constant(module, test.operands[1])
    start = _constant(module, _element(module, loop.operands[0], k))
    step = _step(module, update, k, loop.operands[0])
    if limit is None or start is None or step is None or step <= 0:
        return None
    return max(0, -(-(limit - start) // step))


def _root(module: HloText, computation: str) -> Instruction | None:
    found = module.computations.get(computation)
    return found.instructions.get(found.root) if found is not None else None


def _state_index(module: HloText, name: str) -> int | None:
    """``k`` where ``name`` is element ``k`` of its computation's parameter (the state),
    through copies and bitcasts."""
    value = _through_copies(module, name)
    if value is None or value.opcode != "get-tuple-element" or not value.operands:
        return None
    state = module.instructions.get(value.operands[0])
    return value.index if state is not None and state.opcode == "parameter" else None


def _through_copies(module: HloText, name: str) -> Instruction | None:
    """The instruction ``name`` copies or bitcasts, followed back to one that does not."""
    value = module.instructions.get(name)
    while value is not None and value.opcode in ("copy", "bitcast") and value.operands:
        value = module.instructions.get(value.operands[0])
    return value


def _element(module: HloText, name: str, k: int) -> str | None:
    """The operand at element ``k`` of the ``tuple`` ``name``."""
    value = module.instructions.get(name)
    if value is None or value.opcode != "tuple" or k >= len(value.operands):
        return None
    return value.operands[k]


def _constant(module: HloText, name: str | None) -> int | None:
    """An integer constant's value, through copies and bitcasts."""
    value = _through_copies(module, name or "")
    return value.number if value is not None and value.opcode == "constant" else None


def _step(module: HloText, update: Instruction, k: int, entered: str) -> int | None:
    """What the body adds to state element ``k``: ``state[k] + c`` of a constant ``c``, or
    of a state element the body passes on unchanged and the loop enters with a constant."""
    added = module.instructions.get(update.operands[k])
    if added is None or added.opcode != "add" or len(added.operands) != 2:
        return None
    counter = [_state_index(module, operand) for operand in added.operands]
    if k not in counter:
        return None
    other = added.operands[1 - counter.index(k)]
    j = _state_index(module, other)
    if j is None:
        return _constant(module, other)
    unchanged = j < len(update.operands) and _state_index(module, update.operands[j]) == j
    return _constant(module, _element(module, entered, j)) if unchanged else None


def loops_of(module: HloText, computation: str) -> tuple[tuple[str, ...], int | None]:
    """The ``while`` loops that run ``computation``, outermost first, and how many times
    they run it: their trip counts multiplied (``None``: a count XLA does not know, or a
    computation called from more than one place)."""
    loops: list[str] = []
    trips: int | None = 1
    while computation != module.entry:
        caller = _only_caller(module, computation)
        if caller is None:
            return tuple(reversed(loops)), None
        if caller.opcode == "while":
            loops.append(caller.name)
            count = trip_count(module, caller)
            trips = trips * count if trips is not None and count is not None else None
        computation = caller.computation
    return tuple(reversed(loops)), trips


def flows(module: HloText) -> list[Flow]:
    """Every collective instruction of the module, in text order, once."""
    found = []
    for computation in module.computations.values():
        for value in computation.instructions.values():
            kind = collective_kind(value.opcode) or megascale_kind(value)
            if kind is None:
                continue
            parameters = {parameter_of(module, operand) for operand in value.operands}
            loops, trips = loops_of(module, computation.name)
            result = _received(module, value) if value.opcode == "send" else value.name
            found.append(
                Flow(
                    kind=kind,
                    instruction=value,
                    parameters=tuple(sorted(p for p in parameters if p is not None)),
                    outputs=outputs_of(module, result) if result else (),
                    loops=loops,
                    trip_count=trips,
                )
            )
    return found
