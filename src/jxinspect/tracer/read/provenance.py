"""Why each collective is there: the declarations Shardy's propagation carried to the
operation that needs it, axis by axis (``lower --why``).

Shardy records, on every value after propagation, which declaration each mesh axis of its
sharding came from (``sdy.sharding_origins``: ``"self"``, ``"input: N"``, ``"output: N"``,
``"constraint_K"``, ``"mc_K"``); XLA writes that record in a debug run
(:mod:`jxinspect.tracer.partitioner_run`). The module it writes keeps no locations: its
operations are lined up with the lowered module's (the same program, nested calls
inlined as XLA inlines them) by their names in order, and take their lines from there.
``input: N`` is ``@main``'s parameter N (its pytree path from the report), ``output: N``
result N, ``constraint_K`` and ``mc_K`` the operation Shardy named so
(``sdy.sharding_origin_name``), whose line the alignment gives.

A collective carries the line of the operation that needs it (its metadata); its origins
are those of that operation's result and of each of its operands.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from functools import cached_property
from operator import attrgetter
from typing import Any

from jxinspect.core.model import (
    Collective,
    DroppedAxes,
    Hop,
    Origin,
    OriginKind,
    Report,
    ValueOrigins,
)
from jxinspect.tracer import seam
from jxinspect.tracer.read import frames, shardings
from jxinspect.tracer.read.edges import Edges, ValueKey, as_strings
from jxinspect.tracer.read.mlir import attr_dict, declared_meshes, string_value

_SKIPPED = frozenset(
    {"stablehlo.constant", "sdy.constant", "func.return", "stablehlo.return", "sdy.return",
     "func.call", "sdy.named_computation"}
)  # fmt: skip
"""Operations left out of the alignment: constants (XLA folds and dedupes them), returns,
and the calls whose bodies are walked in their place."""
_SAME = {
    "sdy.constant": "stablehlo.constant",
    "stablehlo.dot_general": "stablehlo.dot",
    "sdy.sharding_constraint": "constraint",
    "sdy.reshard": "constraint",
}
"""Names the two modules write differently for one operation."""
_USER_CONSTRAINTS = frozenset(("sharding_constraint", "reshard"))
"""JAX's names for a constraint the code writes (``with_sharding_constraint``,
``jax.sharding.reshard``); over explicit axes JAX also writes one after each operation,
named as that operation (``jit(f)/dot_general``): its type's sharding (0.7 on)."""


@dataclass(frozen=True)
class _Step:
    key: str
    op: Any
    inside: int | None = None
    """The position of the shard_map (``sdy.manual_computation``) it is in, if any."""

    @cached_property
    def shape(self) -> str:
        """Its kind and its results' types, which both modules write alike (the types
        before partitioning)."""
        return " ".join((self.key, *(str(result.type) for result in self.op.results)))

    @cached_property
    def signature(self) -> str:
        """Its shape and what makes each operand (an operation's kind, or an argument):
        what the alignment compares (a constraint of ``w`` from one of ``0.1``'s
        broadcast)."""
        made = (seam.producer(operand) for operand in self.op.operands)
        return " ".join((self.shape, *(_key(m[0].operation) if m else "arg" for m in made)))


@dataclass(frozen=True)
class _Where:
    """Where a lowered operation came from: its file, line and JAX's name for it
    (``jit(step)/transpose(jvp())/mul``, as the compiled HLO's ``op_name`` writes it)."""

    file: str | None
    line: int | None
    name: str | None = None
    library_file: str | None = None
    """The innermost frame where it is a library's: ``file``/``line`` are the user's."""
    library_line: int | None = None

    @property
    def operation(self) -> str | None:
        """JAX's name for the operation alone (``mul``)."""
        return self.name.rsplit("/", 1)[-1] if self.name else None


def typed_operation(key: str, where: _Where | None) -> str | None:
    """The operation a constraint JAX wrote for its type (explicit axes) follows
    (``dot_general``); ``None`` for any other step, a constraint of the code's included."""
    last = where.operation if key == "constraint" and where is not None else None
    return None if last in _USER_CONSTRAINTS else last


def _key(op: Any) -> str:
    name = str(op.operation.name)
    if name == "stablehlo.custom_call":
        target = string_value(op.attributes["call_target_name"])
        return "constraint" if target == "Sharding" else f"custom_call {target}"
    return _SAME.get(name, name)


def _functions(module: Any) -> dict[str, Any]:
    return {
        string_value(op.attributes["sym_name"]): op
        for op in module.body.operations
        if op.operation.name == "func.func"
    }


def _walk(op: Any, functions: dict[str, Any]) -> list[_Step]:
    """The operations of ``op``'s regions in order, a called function's in place of the
    call (as XLA inlines it), each with the shard_map it is in."""
    steps: list[_Step] = []

    def visit(op: Any, depth: int, inside: int | None) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    name = str(inner.operation.name)
                    if name == "func.call" and depth < 64:
                        callee = string_value(inner.attributes["callee"]).lstrip("@")
                        if callee in functions:
                            visit(functions[callee], depth + 1, inside)
                        continue
                    within = inside
                    if name not in _SKIPPED:
                        steps.append(_Step(_key(inner), inner, inside))
                        if name == "sdy.manual_computation":
                            within = len(steps) - 1
                    visit(inner, depth, within)

    visit(op, 0, None)
    return steps


def _where(location: Any) -> _Where:
    """Where an operation came from: the innermost frame of its location in the user's
    files, the library's innermost frame beside it (:mod:`.frames`), and the outermost
    name (JAX's name for the operation)."""
    name, stack = _stack(location, None)
    at = frames.locate(stack)
    return _Where(at.file, at.line, name, at.library_file, at.library_line)


def _stack(location: Any, name: str | None) -> tuple[str | None, list[tuple[str, int]]]:
    """The outermost name of a location (else ``name``) and its frames, innermost first:
    a call site's callee, then its caller; of a name or a fusion, the first child's that
    has any."""
    read = seam.read_location(location)
    if read.kind == "file":
        return name, [(read.filename or "", read.line or 0)]
    if read.kind == "name" and name is None:
        name = read.name
    if read.kind == "callsite":
        stack: list[tuple[str, int]] = []
        for child in read.children:
            name, more = _stack(child, name)
            stack += more
        return name, stack
    if read.kind in ("name", "fused"):
        for child in read.children:
            named, stack = _stack(child, name)
            if stack:
                return named, stack
    return name, []


_DECLARING = ("constraint", "sdy.manual_computation")
"""The operations Shardy names declarations after (``constraint_K``, ``mc_K``), numbering
them in the order of the module it is given: the lowered module's, calls inlined."""


def _lines(dumped: list[_Step], lowered: list[_Step]) -> dict[int, _Where]:
    """Where each dumped operation came from, by its position, where the alignment of
    the two modules' operations (their signatures) pairs it with a lowered one. A span
    the alignment replaced (XLA moved a train step's operations) is aligned again, none
    left out as too common; in it, those still unpaired of one signature, then of one
    shape, are paired by rank where both sides hold as many, and the rest by an
    alignment of their kinds alone (XLA changed a loop's carried values); then, in the
    whole module, by rank as inside a span. A constraint or shard_map left unpaired is
    paired by its rank among its kind, as Shardy numbers them, where both modules hold
    as many."""
    ours, jaxs = [s.signature for s in dumped], [s.signature for s in lowered]
    # autojunk leaves the operations of a large module that are everywhere (broadcasts,
    # multiplies) to the spans, each aligned again whole: linear where one pass is not
    matcher = difflib.SequenceMatcher(None, ours, jaxs)
    pairs: dict[int, int] = {}
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            pairs.update(zip(range(a0, a1), range(b0, b1)))
        elif tag == "replace":
            inner = difflib.SequenceMatcher(None, ours[a0:a1], jaxs[b0:b1], autojunk=False)
            for block in inner.get_matching_blocks():
                pairs.update((a0 + block.a + k, b0 + block.b + k) for k in range(block.size))
            _pair_by_rank(dumped, lowered, range(a0, a1), range(b0, b1), pairs)
            _pair_by_kind(dumped, lowered, range(a0, a1), range(b0, b1), pairs)
    _pair_by_rank(dumped, lowered, range(len(dumped)), range(len(lowered)), pairs)
    taken = set(pairs.values())
    for key in _DECLARING:
        mine = [i for i, step in enumerate(dumped) if step.key == key]
        theirs = [j for j, step in enumerate(lowered) if step.key == key]
        if len(mine) == len(theirs):
            pairs.update((i, j) for i, j in zip(mine, theirs) if i not in pairs and j not in taken)
    return {i: _where(lowered[j].op.location) for i, j in pairs.items()}


def _pair_by_rank(
    dumped: list[_Step], lowered: list[_Step], mine: range, theirs: range, pairs: dict[int, int]
) -> None:
    """Pair the unpaired operations of ``mine`` and ``theirs`` in order among those of
    one signature, then of one shape, where both hold as many."""
    for by in (attrgetter("signature"), attrgetter("shape")):
        taken = set(pairs.values())
        left: dict[str, list[int]] = {}
        right: dict[str, list[int]] = {}
        for i in mine:
            if i not in pairs:
                left.setdefault(by(dumped[i]), []).append(i)
        for j in theirs:
            if j not in taken:
                right.setdefault(by(lowered[j]), []).append(j)
        for key, found in left.items():
            if len(found) == len(right.get(key, ())):
                pairs.update(zip(found, right[key]))


def _pair_by_kind(
    dumped: list[_Step], lowered: list[_Step], mine: range, theirs: range, pairs: dict[int, int]
) -> None:
    """Pair the unpaired operations of ``mine`` and ``theirs`` by the alignment of their
    kinds alone (XLA changed a loop's carried values, so its types)."""
    taken = set(pairs.values())
    left = [i for i in mine if i not in pairs]
    right = [j for j in theirs if j not in taken]
    matcher = difflib.SequenceMatcher(
        None, [dumped[i].key for i in left], [lowered[j].key for j in right], autojunk=False
    )
    for block in matcher.get_matching_blocks():
        pairs.update((left[block.a + k], right[block.b + k]) for k in range(block.size))


_READ_LIMIT = 100_000
"""The most operations followed back from one operation to the arguments it reads."""

_SHARD_MAP_SIDE = re.compile(r"^(mc_\d+)_(?:input|output): \d+$")


class _Origins:
    """Reads one dumped module's origins into :class:`Origin`s."""

    def __init__(
        self, module: Any, main: Any, report: Report, lines: dict[int, _Where], steps: list[_Step]
    ) -> None:
        self.meshes = declared_meshes(module)
        self.per_value = seam.sdy().TensorShardingPerValueAttr
        self.main = main
        self.arg_paths = {i.main_index: i.path for i in report.inputs if i.main_index is not None}
        self.result_paths = {o.index: o.path for o in report.outputs}
        self.steps, self.lines = steps, lines
        self.edges = Edges([step.op for step in steps], main)
        self.named: dict[str, tuple[_Where, str, str | None]] = {}
        counts = dict.fromkeys(_DECLARING, 0)
        for position, step in enumerate(steps):
            attrs = step.op.attributes
            where = lines.get(position, _Where(None, None))
            if "sdy.sharding_origin_name" in attrs:
                name = string_value(attrs["sdy.sharding_origin_name"])
            elif step.key in counts:  # 0.7.1 names none: Shardy numbers them in order
                name = f"{'constraint' if step.key == 'constraint' else 'mc'}_{counts[step.key]}"
            else:
                continue
            if step.key in counts:
                counts[step.key] += 1
            typed = typed_operation(step.key, where)
            self.named.setdefault(name, (where, step.key, typed))

    def declaration(self, origin: str, own: tuple[OriginKind, str | None]) -> Origin:
        """The declaration an origin names (``own``: what ``"self"`` is here)."""
        if origin == "self":
            kind, path = own
            return Origin("", "", kind, "", path=path)
        head, _, number = origin.partition(": ")
        if head == "input" and number.isdigit():
            return Origin("", "", "argument", "", path=self.arg_paths.get(int(number)))
        if head == "output" and number.isdigit():
            return Origin("", "", "result", "", path=self.result_paths.get(int(number)))
        shard_map = _SHARD_MAP_SIDE.match(origin)  # mc_0_input: 1, one of its operands
        where, key, typed = self.named.get(
            shard_map[1] if shard_map else origin, (_Where(None, None), "", None)
        )
        if where.line is None and where.library_line is None:
            return Origin("", "", "unknown", "")  # one Shardy added (a loop's operand), or
            # none the program shows
        if typed is not None:  # JAX's constraint of an operation's type (explicit axes)
            return _placed(Origin("", "", "type", "", path=typed), where)
        named: OriginKind = "shard_map" if key == "sdy.manual_computation" else "constraint"
        return _placed(Origin("", "", named, ""), where)

    def of_value(self, value: str, sharding: Any, origins: Any, own: Any) -> list[Origin]:
        """One :class:`Origin` per axis of a value's ``origins`` dictionary that its
        sharding still has (Shardy keeps the origin of an axis propagation later dropped:
        a reshape that cannot keep it)."""
        return self._axes(value, sharding, origins, own, kept=True)

    def dropped(self, value: str, sharding: Any, origins: Any) -> list[Origin]:
        """One :class:`Origin` per axis of ``origins`` that the sharding no longer has,
        where the code declared it (a declaration Shardy added is not the code's)."""
        found = self._axes(value, sharding, origins, ("unknown", None), kept=False)
        return [o for o in found if o.kind != "unknown"]

    def _axes(
        self, value: str, sharding: Any, origins: Any, own: Any, *, kept: bool
    ) -> list[Origin]:
        """The origins of the axes of ``origins`` the sharding has (``kept``), or of those
        it does not have."""
        if sharding is None or origins is None:
            return []
        read = shardings.from_sdy(sharding, self.meshes)
        has = {axis for entry in read.spec for axis in entry}
        found = []
        for named in seam.ir().DictAttr(origins):
            if (named.name in has) != kept:
                continue
            declared = self.declaration(string_value(named.attr), own)
            found.append(replace(declared, value=value, axis=named.name, sharding=read.readable))
        return found

    def routed(self, found: list[Origin], value: ValueKey | None) -> list[Origin]:
        """``found`` (the origins of ``value``) each with the operations that carried its
        axis there: one hop per source line, leaving out constraints (declarations, the
        code's or JAX's), what a shard_map's body does, and the operation that made
        ``value``."""
        if value is None:
            return found
        made = value[1] if value[0] == "result" else None
        routed = []
        for origin in found:
            hops: list[Hop] = []
            for position in self.edges.chain(value, origin.axis):
                step = self.steps[position]
                if position == made or step.key == "constraint" or step.inside is not None:
                    continue
                where = self.lines.get(position, _Where(None, None))
                name = where.operation or step.key.removeprefix("stablehlo.")
                if hops and _at(hops[-1]) == _at(where):
                    if name not in hops[-1].operations:
                        hops[-1] = replace(hops[-1], operations=(*hops[-1].operations, name))
                    continue
                hops.append(Hop((name,), *_at(where)))
            routed.append(replace(origin, via=tuple(hops)))
        return routed

    def readable(self, sharding: Any) -> str:
        """``P('data', None)`` of an ``sdy.sharding``; ``replicated`` of none (after
        propagation, a value Shardy gave no sharding is replicated)."""
        return (
            "replicated" if sharding is None else shardings.from_sdy(sharding, self.meshes).readable
        )

    def result_sharding(self, op: Any, number: int) -> Any:
        """The ``sdy.sharding`` of ``op``'s result ``number`` (``None``: it has none)."""
        attrs = op.attributes
        if op.operation.name == "sdy.reshard" and number == 0:
            return attrs["sharding"]
        if "sdy.sharding" not in attrs:
            return None
        values = list(self.per_value(attrs["sdy.sharding"]).shardings)
        return values[number] if number < len(values) else None

    def _parameter_attrs(self, number: int) -> dict[str, Any]:
        """The attributes of ``@main``'s parameter ``number``."""
        attrs = self.main.attributes
        return attr_dict(attrs["arg_attrs"] if "arg_attrs" in attrs else None, number)

    def returned(self) -> list[Any]:
        """The values ``@main`` returns, in result order."""
        return list(list(self.main.regions[0].blocks[0].operations)[-1].operands)

    def result_attrs(self, index: int) -> dict[str, Any]:
        """The attributes of ``@main``'s result ``index``."""
        attrs = self.main.attributes
        return attr_dict(attrs["res_attrs"] if "res_attrs" in attrs else None, index)

    def parameter_sharding(self, number: int) -> Any:
        return self._parameter_attrs(number).get("sdy.sharding")

    def own_axes(self, sharding: Any, value: str, declared: Origin) -> list[Origin]:
        """A sharding that is its own declaration (``declared``, less value, axis and
        sharding): one origin per axis of it, where Shardy records none (0.7.1 writes none
        on a constraint itself; 0.10.2 none on some arguments over explicit axes)."""
        read = shardings.from_sdy(sharding, self.meshes)
        return [
            replace(declared, value=value, axis=axis, sharding=read.readable)
            for axis in dict.fromkeys(a for entry in read.spec for a in entry)
        ]

    def per_result(self, op: Any) -> list[tuple[Any, Any]]:
        """Each result's ``sdy.sharding`` and its origins dictionary, of an operation
        that has both (``[]`` for one that has not)."""
        attrs = op.attributes
        if "sdy.sharding" not in attrs or "sdy.sharding_origins" not in attrs:
            return []
        ir, origins = seam.ir(), attrs["sdy.sharding_origins"]
        listed = list(ir.ArrayAttr(origins)) if isinstance(origins, ir.ArrayAttr) else []
        return list(zip(self.per_value(attrs["sdy.sharding"]).shardings, listed))

    def of_result(self, op: Any, number: int, value: str) -> list[Origin]:
        attrs = op.attributes
        if "sdy.sharding_origins" not in attrs:
            return []
        origins = attrs["sdy.sharding_origins"]
        if "sdy.sharding" in attrs:
            pairs = self.per_result(op)
            if number >= len(pairs):
                return []
            found = self.of_value(value, *pairs[number], ("unknown", None))
            return self.routed(found, self.edges.key(op.results[number]))
        if op.operation.name == "sdy.reshard":  # its own sharding, declared here
            named = attrs["sdy.sharding_origin_name"] if "sdy.sharding_origin_name" in attrs else ""
            where, _, typed = self.named.get(string_value(named), (_Where(None, None), "", None))
            own: tuple[OriginKind, str | None] = ("type", typed) if typed else ("constraint", None)
            found = self.of_value(value, attrs["sharding"], origins, own)
            return [_placed(o, where) if o.kind == own[0]
                    and o.line is None else o for o in found]  # fmt: skip
        return []

    def of_parameter(self, number: int, value: str) -> list[Origin]:
        """The origins of ``@main``'s parameter ``number`` (its own: the argument)."""
        attrs = self._parameter_attrs(number)
        path = self.arg_paths.get(number)
        own: tuple[OriginKind, str | None] = ("argument", path)
        sharding, origins = attrs.get("sdy.sharding"), attrs.get("sdy.sharding_origins")
        if sharding is not None and origins is None:  # its own declaration, recorded as none
            return self.own_axes(sharding, value, Origin("", "", "argument", "", path=path))
        found = self.of_value(value, sharding, origins, own)
        return self.routed(found, ("argument", 0, number))

    def of_argument(self, path: str) -> list[Origin]:
        """The origins of the argument at ``path`` (a collective that reshards it)."""
        numbers = [n for n, p in self.arg_paths.items() if p == path]
        return self.of_parameter(numbers[0], "moved") if numbers else []

    def of_returned(self, path: str) -> list[Origin]:
        """The origins of the value returned as the result at ``path`` (a collective
        that reshards it into the result's layout)."""
        numbers = [n for n, p in self.result_paths.items() if p == path]
        returned = self.returned()
        if not numbers or numbers[0] >= len(returned):
            return []
        return self.of_operand(returned[numbers[0]], "moved")

    def arguments_read(self, op: Any) -> set[str]:
        """The paths of the ``@main`` arguments ``op`` reads, through the operations that
        make its operands (what a call's body reads stops at its parameters)."""
        return self._upstream(list(op.operands))[1]

    def feeding(self, paths: set[str]) -> set[Any]:
        """The operations whose values the results at ``paths`` are made of."""
        returned = self.returned()
        values = [returned[n] for n, path in self.result_paths.items()
                  if path in paths and n < len(returned)]  # fmt: skip
        return self._upstream(values)[0] if values else set()

    def _upstream(self, values: list[Any]) -> tuple[set[Any], set[str]]:
        """The operations that make ``values``, followed back, and the paths of the
        ``@main`` arguments they reach."""
        block = self.main.regions[0].blocks[0]
        found: set[str] = set()
        visited: set[Any] = set()
        todo = list(values)
        while todo and len(visited) < _READ_LIMIT:
            value = todo.pop()
            number = seam.block_argument_number(value, block)
            if number is not None:
                path = self.arg_paths.get(number)
                found.update((path,) if path is not None else ())
                continue
            made = seam.producer(value)
            if made is not None and made[0] not in visited:
                visited.add(made[0])
                todo.extend(made[0].operands)
        return visited, found

    def of_operand(self, operand: Any, value: str) -> list[Origin]:
        number = seam.block_argument_number(operand, self.main.regions[0].blocks[0])
        if number is not None:
            return self.of_parameter(number, value)
        made = seam.producer(operand)
        return self.of_result(made[0], made[1], value) if made is not None else []


def with_origins(
    report: Report, dumped: str, lowered_module: Any, asked: tuple[str, ...] = ()
) -> Report:
    """``report`` with each collective's origins read from ``dumped`` (the module after
    Shardy's propagation, text) lined up with ``lowered_module`` (the lowered module,
    with its locations), and those of each value ``asked`` about (``--why-of``)."""
    compiled = report.compiled
    if compiled is None or compiled.collectives is None:
        return report
    module = seam.parse_module(as_strings(dumped))
    with module.context:
        functions = _functions(module)
        steps = _walk(functions["main"], functions)
    with lowered_module.context:
        lowered_functions = _functions(lowered_module)
        theirs = _walk(lowered_functions["main"], lowered_functions)
        with module.context:
            lines = _lines(steps, theirs)
    with module.context:
        reader = _Origins(module, functions["main"], report, lines, steps)
        at: dict[tuple[str | None, int | None, str | None], list[int]] = {}
        for position, where in lines.items():
            at.setdefault((where.file, where.line, where.name), []).append(position)
            at.setdefault((where.file, where.line, None), []).append(position)
            at.setdefault((None, None, where.name), []).append(position)
        collectives = tuple(
            replace(c, origins=_collective_origins(c, steps, lines, at, reader))
            for c in compiled.collectives
        )
        why_of = tuple(v for a in asked for v in _asked_origins(a, report, steps, lines, reader))
        dropped = (
            *_dropped_by_operations(steps, lines, reader),
            *_dropped_by_results(report, reader),
        )
    return replace(
        report,
        compiled=replace(compiled, collectives=collectives, why_of=why_of, dropped=dropped),
    )


def _dropped_by_operations(
    steps: list[_Step], lines: dict[int, _Where], reader: _Origins
) -> list[DroppedAxes]:
    """The values operations make without an axis a declaration gave them; a constraint
    (its sharding is the code's) and what a shard_map's body makes (manual) are not."""
    found = []
    for position, step in enumerate(steps):
        if step.inside is not None or step.key == "constraint":
            continue
        where = lines.get(position, _Where(None, None))
        value = where.name or step.key
        for sharding, named in reader.per_result(step.op):
            lost = reader.dropped(value, sharding, named)
            if lost:
                readable = reader.readable(sharding)
                found.append(DroppedAxes(value, readable, tuple(lost), None, *_at(where)))
    return found


def _dropped_by_results(report: Report, reader: _Origins) -> list[DroppedAxes]:
    """The results whose sharding the code left to the compiler that it made without an
    axis a declaration gave the value returned (a declared result's is the code's)."""
    found = []
    for output in report.outputs:
        if output.sharding is not None:
            continue
        own = reader.result_attrs(output.index)
        sharding = own.get("sdy.sharding")
        lost = reader.dropped(output.path, sharding, own.get("sdy.sharding_origins"))
        if lost:
            found.append(
                DroppedAxes(output.path, reader.readable(sharding), tuple(lost), output.path)
            )
    return found


_LINE = re.compile(r"^(?:(?P<file>.+):)?(?P<line>\d+)$")


def _asked_origins(
    asked: str, report: Report, steps: list[_Step], lines: dict[int, _Where], reader: _Origins
) -> list[ValueOrigins]:
    """Why the value ``asked`` names is sharded as it is: an argument's or a result's
    path, else each operation at ``FILE:LINE`` (``LINE``: in the target's file)."""
    for leaf in report.inputs:
        if leaf.path == asked and leaf.main_index is not None:
            value = f"argument {leaf.path}"
            sharding = reader.parameter_sharding(leaf.main_index)
            origins = reader.of_parameter(leaf.main_index, value)
            return [ValueOrigins(asked, value, reader.readable(sharding), tuple(origins),
                                 declared=sharding is not None)]  # fmt: skip
    for output in report.outputs:
        if output.path == asked:
            return [_result_origins(asked, output.index, reader)]
    match = _LINE.match(asked.strip())
    if match is None:
        return [_unfound(asked, "no argument or result of the function has this path")]
    file, line = match["file"], int(match["line"])
    found: list[ValueOrigins] = []
    for position, where in sorted(lines.items()):
        if where.line != line or not _same_file(where.file, file or report.file):
            continue
        step = steps[position]
        if not step.op.results or typed_operation(step.key, where) is not None:
            continue  # JAX's constraint of an operation's type: that operation says it
        value = f"{where.name or step.key} at {where.file}:{line}"
        if step.inside is not None:
            manual = _inside_shard_map(steps[step.inside].op, lines.get(step.inside))
            said = ValueOrigins(asked, value, "manual (inside a shard_map)", manual)
        else:
            own = reader.result_sharding(step.op, 0)
            origins = reader.of_result(step.op, 0, value)
            declared = step.key == "constraint" and own is not None
            if not origins and declared:
                here = _placed(Origin("", "", "constraint", ""), where)
                origins = reader.own_axes(own, value, here)  # 0.7.1 records none
            said = ValueOrigins(asked, value, reader.readable(own), tuple(origins), declared)
        found.append(said)
    if not found:
        place = f"{file or report.file}:{line}"
        return [_unfound(asked, f"no operation of the program is at {place}")]
    return list(dict.fromkeys(found))  # operations alike at one line said once


def _result_origins(asked: str, index: int, reader: _Origins) -> ValueOrigins:
    """Result ``index`` of ``@main``: its own declared sharding's origins, else those of
    the value returned."""
    value = asked  # a result's path says it is one: result, result['loss']
    own = reader.result_attrs(index)
    if "sdy.sharding" in own:
        origins = reader.of_value(
            value, own["sdy.sharding"], own.get("sdy.sharding_origins"), ("result", asked)
        )
        readable = reader.readable(own["sdy.sharding"])
        return ValueOrigins(asked, value, readable, tuple(origins), declared=True)
    returned = reader.returned()
    if index >= len(returned):
        return _unfound(asked, "the program returns no such result")
    operand = returned[index]
    number = seam.block_argument_number(operand, reader.main.regions[0].blocks[0])
    made = seam.producer(operand)
    sharding = (
        reader.parameter_sharding(number) if number is not None
        else reader.result_sharding(*made) if made is not None else None
    )  # fmt: skip
    return ValueOrigins(
        asked, value, reader.readable(sharding), tuple(reader.of_operand(operand, value))
    )


def _unfound(asked: str, why: str) -> ValueOrigins:
    return ValueOrigins(asked, None, unfound=why)


def _same_file(found: str | None, wanted: str | None) -> bool:
    """Whether a location's file is the one asked for: the same path, or one ending in
    the path as the user wrote it (``model.py``, ``pkg/model.py``)."""
    if found is None or wanted is None:
        return False
    found, wanted = found.replace("\\", "/"), wanted.replace("\\", "/")
    return found == wanted or found.endswith("/" + wanted.lstrip("./"))


def _collective_origins(
    collective: Collective,
    steps: list[_Step],
    lines: dict[int, _Where],
    at: dict[tuple[str | None, int | None, str | None], list[int]],
    reader: _Origins,
) -> tuple[Origin, ...] | None:
    """The origins of the operation that needs the collective: among the operations at
    its line, those JAX named as the collective's ``op_name`` says first, the first with
    a sharding (its result's origins, then its operands'); where none is at its line
    (0.8 can write a caller's line), the one operation JAX named so. One inside a
    shard_map is the shard_map's own, over its manual axes. ``None`` (not known) where
    no operation lined up with the record so and it moves no argument that says its
    own."""
    if collective.line is None:  # a reshard of an argument (0.12) or into a result
        moved = [o for path in collective.operand_paths for o in reader.of_argument(path)]
        moved = moved or [o for path in collective.operand_paths for o in reader.of_returned(path)]
        if moved:
            return tuple(moved)
    where = (collective.file, collective.line)  # (None, None): by JAX's name alone
    names = operation_names(collective.op_name)
    named = list(dict.fromkeys(p for name in names for p in at.get((*where, name), [])))
    at_line = sorted(at.get((*where, None), [])) if collective.line is not None else []
    if not named and not at_line:
        alone = {p for name in names for p in at.get((None, None, name), [])}
        named = list(alone) if len(alone) == 1 else []
    # the arguments it moves say their own where its line's operations cannot: none has
    # origins in the record (over explicit axes JAX's own constraints can keep them from
    # it), or alike ones say different origins and none reads what it moves (0.8.3's
    # compiled frame table can place an operation at another line of its function: a
    # gradient's transposed dot that gathers an argument at the next line's)
    own = tuple(o for path in collective.operand_paths for o in reader.of_argument(path))
    left_out: set[int] = set()
    if len(named) > 1:  # several alike at one line (q, k, v through one library line)
        chosen = _reading_what_it_moves(named, collective, steps, lines, reader)
        if chosen is None:  # they say different origins, and what it moves tells none apart
            return own or None
        left_out, named = set(named) - set(chosen), chosen
    for position in [*named, *(p for p in at_line if p not in left_out)]:
        found = _needing(position, collective, steps, lines, reader)
        if found:
            return tuple(found)
    return own if own or named or at_line else None


_COMBINED = re.compile(r"^(?:(?P<prefix>.*?)/)?\((?P<parts>.*)\)$")


def operation_names(op_name: str | None) -> list[str]:
    """The operations a compiled instruction's ``op_name`` names: one, or each of those
    XLA combined into it (several gradients' all-reduces in one): ``a;b`` (0.11 on) or
    their common prefix and the rest of each, ``jit(step)/(transpose(jvp())/dot_general:
    jvp()/reduce_sum)`` (before)."""
    names = [name for name in (op_name or "").split(";") if name]
    if len(names) != 1 or (combined := _COMBINED.match(names[0])) is None:
        return names
    parts = _top_level_split(combined["parts"], ":")
    if len(parts) < 2:
        return names
    prefix = f"{combined['prefix']}/" if combined["prefix"] else ""
    return [prefix + part for part in parts]


def _top_level_split(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _needing(
    position: int,
    collective: Collective,
    steps: list[_Step],
    lines: dict[int, _Where],
    reader: _Origins,
) -> list[Origin]:
    """The origins of the operation at ``position`` as the one that needs ``collective``:
    its result's, then its operands'; inside a shard_map, the shard_map's manual axes."""
    step = steps[position]
    if step.inside is not None:
        manual = _inside_shard_map(steps[step.inside].op, lines.get(step.inside))
        return [o for o in manual if not collective.axes or o.axis in collective.axes]
    found = reader.of_result(step.op, 0, "result")
    for n, operand in enumerate(step.op.operands):
        found += reader.of_operand(operand, f"operand {n}")
    return found


def _reading_what_it_moves(
    positions: list[int],
    collective: Collective,
    steps: list[_Step],
    lines: dict[int, _Where],
    reader: _Origins,
) -> list[int] | None:
    """Of operations alike at the collective's line (one line and one name), those that
    read an argument it moves or make a result it moves (its ``moves``, from the compiled
    program's data flow);
    where it moves none that tells them apart, all of them if they say the same origins,
    else (an all-reduce) those that sum over its axes if they say the same, else those
    whose values are sharded over each of its axes if they say the same, else ``None``:
    which one needs it is not known."""
    moved = set(collective.operand_paths) & set(reader.arg_paths.values())
    feeding = reader.feeding(set(collective.operand_paths) & set(reader.result_paths.values()))
    reading = [p for p in positions
               if moved & reader.arguments_read(steps[p].op) or steps[p].op in feeding]  # fmt: skip
    if reading and len(reading) < len(positions):
        return reading
    said = {p: _declared(_needing(p, collective, steps, lines, reader)) for p in positions}
    said = {p: origins for p, origins in said.items() if origins}
    if len(set(said.values())) <= 1:
        return positions
    axes = set(collective.axes or ())
    if collective.kind == "all-reduce" and axes:  # the one that sums over its axes
        summing = [p for p, origins in said.items() if _sums_over(origins, axes)]
        if summing and len({said[p] for p in summing}) == 1:
            return summing
    # the one whose values are sharded over its axes
    over = [p for p, origins in said.items() if axes and axes <= {o[1] for o in origins}]
    return over if over and len({said[p] for p in over}) == 1 else None


def _sums_over(origins: frozenset[tuple[Any, ...]], axes: set[str]) -> bool:
    """Whether an operation with these origins (:func:`_declared`) sums over ``axes``:
    its operands are split over them and its result is not (a dot contracting them, a
    reduction along them): what an all-reduce over them completes."""
    operands = {axis for value, axis, *_ in origins if value.startswith("operand")}
    result = {axis for value, axis, *_ in origins if value == "result"}
    return axes <= operands and not axes & result


def _declared(origins: list[Origin]) -> frozenset[tuple[Any, ...]]:
    """What ``origins`` say, less the routes (one declaration reaches alike operations by
    routes of their own): each value's axis and the declaration it came from."""
    return frozenset((o.value, o.axis, o.kind, o.path, o.file, o.line) for o in origins)


def _inside_shard_map(op: Any, where: _Where | None) -> tuple[Origin, ...]:
    """A collective the body of a shard_map makes: the user's own, one origin per manual
    axis, at the shard_map's line."""
    axes = re.findall(r'"((?:[^"\\]|\\.)*)"', str(op.attributes["manual_axes"]))
    place = where or _Where(None, None)
    return tuple(
        _placed(Origin("shard_map body", axis, "shard_map", "manual"), place) for axis in axes
    )


def _at(where: _Where | Hop) -> tuple[str | None, int | None, str | None, int | None]:
    """The user's file and line, then the library's (the fields' order)."""
    return where.file, where.line, where.library_file, where.library_line


def _placed(origin: Origin, where: _Where) -> Origin:
    """``origin`` at ``where``: the user's line, the library's beside it."""
    file, line, library_file, library_line = _at(where)
    return replace(origin, file=file, line=line, library_file=library_file,
                   library_line=library_line)  # fmt: skip
