"""The tests' own reading of an optimized HLO text (``compiled.as_text()``), independent of
jxinspect's: each collective instruction once (an async ``-start``/``-done`` pair once), its
operands sized, its replica groups decoded (lists, iota, the mesh form), and
``input_output_alias``. A TPU's layouts (``{1,0:T(8,128)}``) are read past. And XLA's
dump of a compile (``xla_dump_to``) replayed: the temporaries live at its peak. And a TPU
profiler trace's instruction time by the source line its profiler gives each op."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
BYTES = {"f32": 4, "s32": 4, "bf16": 2, "f16": 2, "f64": 8, "pred": 1, "u32": 4}
LINE = re.compile(r"^\s*(?:ROOT )?%(\S+) = (.*?) ([a-z][a-z0-9-]*)\((.*)$")


def _iota(dims: list[int], perm: list[int] | None) -> list[int]:
    ids = np.arange(math.prod(dims)).reshape(dims)
    return [int(d) for d in (ids.transpose(perm) if perm else ids).reshape(-1)]


def _ints(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def groups_of(attributes: str, total: int) -> list[list[int]] | None:
    """The test's own decoding of one instruction's replica groups (logical ids)."""
    mesh = re.search(r"replica_groups=mesh\[(.*?)\](?:, device_ids=\((.*?\)?)\))? \{(.*?)\}",
                     attributes)  # fmt: skip
    if mesh:
        axes = re.findall(r"'?(\w+)'?=(\d+)", mesh.group(1))
        names, sizes = [a for a, _ in axes], [int(n) for _, n in axes]
        ids = list(range(total))
        if mesh.group(2):
            head = re.match(r"\[([\d,]+)\](?:T\(([\d,]+)\))?", mesh.group(2))
            assert head, mesh.group(2)
            ids = _iota(_ints(head.group(1)), _ints(head.group(2)) if head.group(2) else None)
        # an axis named whole, or a part of one, 'x':(2)4: x cut into (2, 4, the rest)
        refs = re.findall(r"'?(\w+)'?(?::\((\d+)\)(\d+))?", mesh.group(3))
        dims, grouped = [], []
        for name, size in zip(names, sizes, strict=True):
            part = [(int(pre), int(cut)) for ref, pre, cut in refs if ref == name and pre]
            if part:
                ((pre, cut),) = part
                grouped.append(len(dims) + 1)
                dims += [pre, cut, size // (pre * cut)]
            else:
                if any(ref == name for ref, _, _ in refs):
                    grouped.append(len(dims))
                dims.append(size)
        rest = [i for i in range(len(dims)) if i not in grouped]
        size = math.prod(dims[i] for i in grouped)
        array = np.array(ids).reshape(dims).transpose(rest + grouped).reshape(-1, size)
        return array.tolist()  # type: ignore[no-any-return]
    iota = re.search(r"replica_groups=\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?",
                     attributes)  # fmt: skip
    if iota:
        flat = _iota(_ints(iota.group(3)), _ints(iota.group(4)) if iota.group(4) else None)
        return np.array(flat).reshape(int(iota.group(1)), int(iota.group(2))).tolist()  # type: ignore[no-any-return]
    listed = re.search(r"replica_groups=\{(\{[\d,{}]*\})?\}", attributes)
    if listed:
        rows = [_ints(row) for row in re.findall(r"\{([\d,]*)\}", listed.group(1) or "")]
        return rows or [list(range(total))]
    return None


def independent(text: str, total: int = 8) -> dict[str, Any]:
    """Collective instructions (kind, operand bytes, logical groups or pairs) and aliases
    of a program over ``total`` devices."""
    shapes: dict[str, str] = {}
    found = []
    for line in text.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        name, shape, opcode, rest = match.groups()
        shapes[name] = shape
        kind = opcode.removesuffix("-start")
        if kind not in KINDS:
            continue
        operands = re.findall(r"%([\w.\-]+)", rest.split(")")[0])
        size = sum(
            math.prod(_ints(dims) or [1]) * BYTES[dtype]
            for o in operands
            for dtype, dims in re.findall(r"([a-z]\w*)\[([\d,]*)\]", shapes[o])
        )
        pairs = re.search(r"source_target_pairs=(\{.*?\}\})", rest)
        listed = re.findall(r"\{(\d+,\d+)\}", pairs.group(1)) if pairs else []
        pairs_read = [_ints(p) for p in listed]
        found.append({"kind": kind, "bytes": size, "instruction": name,
                      "groups": groups_of(rest, total), "pairs": pairs_read})  # fmt: skip
    header = text.splitlines()[0]
    aliases = re.findall(r"\{(\d*)\}: \((\d+), \{\}", header)
    return {"collectives": found,
            "aliases": sorted([int(p), int(o or 0)] for o, p in aliases)}  # fmt: skip


_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+), (.*)$")
_VALUE = re.compile(r"^ value: <\d+ (\S+?)(\{[\d,]*\})?(?: \(phi\))? @\d+> "
                    r"\(size=(\d+),offset=(\d+)\)")  # fmt: skip
_RANGE = re.compile(r"^    (\S+?)(\{[\d,]*\}):(\d+)-(\d+)$")
_NOT_TEMPORARY = ("parameter", "maybe-live-out", "thread-local", "constant")


def _dumped(folder: Path, what: str) -> str:
    found = sorted(folder.glob(f"*after_optimizations-{what}.txt"))
    return found[0].read_text(encoding="utf-8") if found else ""


def dumped_peak(folder: Path, color: int = 0) -> tuple[int, list[tuple[int, int, int]], list[str]]:
    """XLA's dump replayed: the temporaries' bytes at the first moment where most are
    live, their memory regions (allocation, offset, size) and the names of every value
    live then; of one memory space (``color``: 0 a TPU's HBM and a CPU's only one, 1 a
    TPU's VMEM, ...; the dump writes ``color N`` for any but 0)."""
    assignment = _dumped(folder, "buffer-assignment")
    ranges_text = _dumped(folder, "live-range") or assignment  # up to 0.9: one file
    values: list[tuple[str, tuple[int, int, int]]] = []
    allocation: tuple[int, bool] | None = None
    for line in assignment.split("HloLiveRange", 1)[0].splitlines():
        if found := _ALLOCATION.match(line):
            temporary = not any(kind in found.group(3) for kind in _NOT_TEMPORARY)
            colored = re.search(r"\bcolor (\d+)", found.group(3))
            temporary &= (int(colored.group(1)) if colored else 0) == color
            allocation = (int(found.group(1)), temporary)
        elif (found := _VALUE.match(line)) and allocation is not None and allocation[1]:
            name = found.group(1) + (found.group(2) or "{}")
            values.append((name, (allocation[0], int(found.group(4)), int(found.group(3)))))
    section = ranges_text.split("BufferLiveRange:", 1)[1]
    ranges = {m.group(1) + m.group(2): (int(m.group(3)), int(m.group(4)))
              for m in map(_RANGE.match, section.splitlines()) if m}  # fmt: skip
    steps = int(re.search(r"HloLiveRange \(max (\d+)\)", ranges_text).group(1))  # type: ignore[union-attr]
    best: tuple[int, list[tuple[int, int, int]], list[str]] = (-1, [], [])
    for time in range(steps + 1):
        live = [(n, r) for n, r in values if n in ranges and ranges[n][0] <= time <= ranges[n][1]]
        regions = sorted({r for _, r in live})
        if sum(r[2] for r in regions) > best[0]:
            best = (sum(r[2] for r in regions), regions, [n for n, _ in live])
    return best


def share_by_source(trace: Path, source: str) -> float:
    """The share of a TPU's instruction time that its profiler attributes to ``source``
    (``programs.py:12``) in the trace kept under ``trace`` (XProf's layout): each device
    plane's ``XLA Ops`` event's duration by its metadata's ``source`` stat, read from the
    protobuf directly."""
    from collections import defaultdict

    from jxinspect.tracer.read import xla_protos

    (path,) = trace.glob("plugins/profile/*/*.xplane.pb")
    at: dict[bool, float] = defaultdict(float)
    for plane in xla_protos.decode("XSpace", path.read_bytes()).planes:
        if not plane.name.startswith("/device:TPU"):
            continue
        (stat,) = (e.key for e in plane.stat_metadata if e.value.name == "source")
        sources = {
            entry.key: next((s.str_value for s in entry.value.stats if s.metadata_id == stat), "")
            for entry in plane.event_metadata
        }
        for line in plane.lines:
            if line.name == "XLA Ops":
                for event in line.events:
                    at[sources.get(event.metadata_id, "").endswith(source)] += event.duration_ps
    return at[True] / sum(at.values())
