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
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from jxinspect.core.model import Collective, Origin, OriginKind, Report
from jxinspect.tracer import seam
from jxinspect.tracer.read import shardings
from jxinspect.tracer.read.mlir import string_value

_SKIPPED = frozenset(
    {"stablehlo.constant", "sdy.constant", "func.return", "stablehlo.return", "sdy.return",
     "func.call", "sdy.named_computation"}
)  # fmt: skip
"""Operations left out of the alignment: constants (XLA folds and dedupes them), returns,
and the calls whose bodies are walked in their place."""
_SAME = {
    "stablehlo.dot_general": "stablehlo.dot",
    "sdy.sharding_constraint": "constraint",
    "sdy.reshard": "constraint",
}
"""Names the two modules write differently for one operation."""


@dataclass(frozen=True)
class _Step:
    key: str
    op: Any


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


def _walk(op: Any, functions: dict[str, Any], depth: int = 0) -> Iterator[_Step]:
    """The operations of ``op``'s regions in order, a called function's in place of the
    call (as XLA inlines it)."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = str(inner.operation.name)
                if name == "func.call" and depth < 64:
                    callee = string_value(inner.attributes["callee"]).lstrip("@")
                    if callee in functions:
                        yield from _walk(functions[callee], functions, depth + 1)
                    continue
                if name not in _SKIPPED:
                    yield _Step(_key(inner), inner)
                yield from _walk(inner, functions, depth)


def _file_line(location: Any) -> tuple[str | None, int | None]:
    """The innermost frame's file and line of an operation's location."""
    read = seam.read_location(location)
    if read.kind == "file":
        return read.filename, read.line
    if read.kind in ("name", "callsite", "fused"):
        for child in read.children:
            found = _file_line(child)
            if found[0] is not None:
                return found
    return None, None


def _lines(dumped: list[_Step], lowered: list[_Step]) -> dict[int, tuple[str | None, int | None]]:
    """Each dumped operation's (file, line), by its position, where the alignment pairs
    it with a lowered one."""
    matcher = difflib.SequenceMatcher(
        None, [s.key for s in dumped], [s.key for s in lowered], autojunk=False
    )
    found: dict[int, tuple[str | None, int | None]] = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            found[block.a + k] = _file_line(lowered[block.b + k].op.location)
    return found


class _Origins:
    """Reads one dumped module's origins into :class:`Origin`s."""

    def __init__(self, module: Any, report: Report, lines: dict[int, Any], steps: list[_Step]):
        sdy = seam.sdy()
        self.meshes = {
            string_value(op.attributes["sym_name"]): shardings.mesh_from_sdy(op.attributes["mesh"])
            for op in module.body.operations
            if op.operation.name == "sdy.mesh"
        }
        self.per_value = sdy.TensorShardingPerValueAttr
        self.main = _functions(module)["main"]
        self.arg_paths = {i.main_index: i.path for i in report.inputs if i.main_index is not None}
        self.result_paths = {o.index: o.path for o in report.outputs}
        self.named: dict[str, tuple[str | None, int | None, str]] = {}
        for position, step in enumerate(steps):
            attrs = step.op.attributes
            if "sdy.sharding_origin_name" in attrs:
                name = string_value(attrs["sdy.sharding_origin_name"])
                file, line = lines.get(position, (None, None))
                self.named[name] = (file, line, step.key)

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
        file, line, key = self.named.get(origin, (None, None, ""))
        if line is None:  # one Shardy added (a loop's operand), or none the program shows
            return Origin("", "", "unknown", "")
        named: OriginKind = "shard_map" if key == "sdy.manual_computation" else "constraint"
        return Origin("", "", named, "", file=file, line=line)

    def of_value(self, value: str, sharding: Any, origins: Any, own: Any) -> list[Origin]:
        """One :class:`Origin` per axis of a value's ``origins`` dictionary."""
        if sharding is None or origins is None:
            return []
        readable = shardings.from_sdy(sharding, self.meshes).readable
        ir = seam.ir()
        found = []
        for named in ir.DictAttr(origins):
            declared = self.declaration(string_value(named.attr), own)
            found.append(replace(declared, value=value, axis=named.name, sharding=readable))
        return found

    def of_result(self, op: Any, number: int, value: str) -> list[Origin]:
        attrs = op.attributes
        if "sdy.sharding_origins" not in attrs:
            return []
        origins = attrs["sdy.sharding_origins"]
        if "sdy.sharding" in attrs:
            values = list(self.per_value(attrs["sdy.sharding"]).shardings)
            ir = seam.ir()
            listed = list(ir.ArrayAttr(origins)) if isinstance(origins, ir.ArrayAttr) else []
            if number >= len(values) or number >= len(listed):
                return []
            return self.of_value(value, values[number], listed[number], ("unknown", None))
        if op.operation.name == "sdy.reshard":  # its own sharding, declared here
            named = attrs["sdy.sharding_origin_name"] if "sdy.sharding_origin_name" in attrs else ""
            name = string_value(named)
            file, line, _ = self.named.get(name, (None, None, ""))
            own = Origin("", "", "constraint", "", file=file, line=line)
            found = self.of_value(value, attrs["sharding"], origins, ("constraint", None))
            return [replace(o, file=own.file, line=own.line) if o.kind == "constraint"
                    and o.line is None else o for o in found]  # fmt: skip
        return []

    def of_operand(self, operand: Any, value: str) -> list[Origin]:
        block = self.main.regions[0].blocks[0]
        number = seam.block_argument_number(operand, block)
        if number is not None:
            attrs = _arg_attrs(self.main, number)
            own: tuple[OriginKind, str | None] = ("argument", self.arg_paths.get(number))
            return self.of_value(
                value, attrs.get("sdy.sharding"), attrs.get("sdy.sharding_origins"), own
            )
        made = seam.producer(operand)
        return self.of_result(made[0], made[1], value) if made is not None else []


def _arg_attrs(func: Any, number: int) -> dict[str, Any]:
    ir = seam.ir()
    if "arg_attrs" not in func.attributes:
        return {}
    array = ir.ArrayAttr(func.attributes["arg_attrs"])
    if number >= len(array):
        return {}
    return {named.name: named.attr for named in ir.DictAttr(array[number])}


_EDGES = "#sdy.propagation_edges<"
_EDGE_NAMES = re.compile(r"\bsdy\.(\w*propagation_edges) = ")


def without_edges(text: str) -> str:
    """``text`` with each ``#sdy.propagation_edges<...>`` (unused here; the bindings of
    0.12 fail to parse them as that release's XLA writes them) made ``unit``, under a
    name outside Shardy's (whose verifier checks what its attributes hold)."""
    text = _EDGE_NAMES.sub(r"jxinspect.\1 = ", text)
    out: list[str] = []
    at = 0
    while (start := text.find(_EDGES, at)) >= 0:
        depth, i = 1, start + len(_EDGES)
        while i < len(text) and depth:
            if text[i] == "<":
                depth += 1
            elif text[i] == ">" and text[i - 1] != "-":
                depth -= 1
            i += 1
        out += [text[at:start], "unit"]
        at = i
    out.append(text[at:])
    return "".join(out)


def with_origins(report: Report, dumped: str, lowered_module: Any) -> Report:
    """``report`` with each collective's origins read from ``dumped`` (the module after
    Shardy's propagation, text) lined up with ``lowered_module`` (the lowered module,
    with its locations)."""
    compiled = report.compiled
    if compiled is None or compiled.collectives is None:
        return report
    module = seam.parse_module(without_edges(dumped))
    with module.context:
        steps = list(_walk(_functions(module)["main"], _functions(module)))
    with lowered_module.context:
        functions = _functions(lowered_module)
        theirs = list(_walk(functions["main"], functions))
        with module.context:
            lines = _lines(steps, theirs)
    with module.context:
        reader = _Origins(module, report, lines, steps)
        at_line: dict[tuple[str | None, int | None], list[int]] = {}
        for position, where in lines.items():
            at_line.setdefault(where, []).append(position)
        collectives = tuple(
            replace(c, origins=_collective_origins(c, steps, at_line, reader))
            for c in compiled.collectives
        )
    return replace(report, compiled=replace(compiled, collectives=collectives))


def _collective_origins(
    collective: Collective,
    steps: list[_Step],
    at_line: dict[tuple[str | None, int | None], list[int]],
    reader: _Origins,
) -> tuple[Origin, ...]:
    """The origins of the operation at the collective's line: the first there that has
    a sharding, its result's then its operands'."""
    if collective.line is None:
        return ()
    for position in sorted(at_line.get((collective.file, collective.line), [])):
        op = steps[position].op
        found = reader.of_result(op, 0, "result")
        for n, operand in enumerate(op.operands):
            found += reader.of_operand(operand, f"operand {n}")
        if found:
            return tuple(found)
    return ()
