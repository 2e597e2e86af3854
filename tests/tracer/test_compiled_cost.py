"""What a compiled program costs per device, with raw JAX as the oracle.

Each program below is compiled twice on 8 simulated CPU devices: by ``jxinspect lower
--compile --format json``, and by a plain JAX script that builds the same mesh,
shardings and inputs and prints ``memory_analysis()``, ``cost_analysis()`` and
``as_text()``. Every collective's kind, bytes, trip count, bytes per step and the paths
it moves must equal an independent count over that HLO text, written here (its own
reader, not jxinspect's); memory must equal ``memory_analysis()`` and FLOPs and bytes
accessed ``cost_analysis()``. Nothing is hard-coded for one JAX release: what XLA does
(gather a weight before or inside a loop, fuse a slice or not) is read from its text.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import PLAIN_JAX_ON_8_DEVICES, run_python

PROGRAMS = """
import jax, jax.numpy as jnp


def dp(params, batch):
    def loss(p):
        return jnp.mean((batch["x"] @ p["w"] + p["b"] - batch["y"]) ** 2)

    grads = jax.grad(loss)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def fsdp(x, w):
    return jnp.tanh(x @ w)


def tp(x, w_in, w_out):
    return jax.nn.relu(x @ w_in) @ w_out


def scan_psum(x):
    def body(c, _):
        c = c * 0.5 + jnp.sum(jnp.tanh(x * c))
        return c, None

    c, _ = jax.lax.scan(body, jnp.float32(1.0), None, length=4)
    return c


def nested_scan(x):
    def outer(c, _):
        def inner(d, _):
            return d * 0.5 + jnp.sum(jnp.tanh(x * d)), None

        d, _ = jax.lax.scan(inner, c, None, length=4)
        return d, None

    c, _ = jax.lax.scan(outer, jnp.float32(1.0), None, length=3)
    return c


def scan_layers(params, x):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    h, _ = jax.lax.scan(layer, x, params["layers"]["w"])
    return h


def gathered(w):
    return w * 1


def shmap(x, w):
    return jax.lax.psum(x @ w, "model")
"""

# name: (mesh, argument shapes (a pytree of shape tuples, f32), in_specs, out_specs, stage)
TABLE: dict[str, tuple[str, Any, str, str | None, str]] = {
    "dp": ("data=8", ({"w": (64, 16), "b": (16,)}, {"x": (256, 64), "y": (256, 16)}),
           "{'w': P(), 'b': P()}, {'x': P('data', None), 'y': P('data', None)}", None, "jit"),
    "fsdp": ("fsdp=8", ((64, 256), (256, 256)), "P('fsdp', None), P('fsdp', None)",
             "P('fsdp', None)", "jit"),
    "tp": ("data=2,model=4", ((32, 128), (128, 512), (512, 128)),
           "P('data', None), P(None, 'model'), P('model', None)", "P('data', None)", "jit"),
    "scan_psum": ("data=8", ((64, 16),), "P('data', None)", None, "jit"),
    "nested_scan": ("data=8", ((64, 16),), "P('data', None)", None, "jit"),
    "scan_layers": ("fsdp=8", ({"layers": {"w": (4, 64, 64)}}, (32, 64)),
                    "{'layers': {'w': P(None, 'fsdp', None)}}, P('fsdp', None)", None, "jit"),
    "gathered": ("fsdp=8", ((64, 16),), "P('fsdp', None)", "P()", "jit"),
    "shmap": ("data=2,model=4", ((16, 1024), (1024, 256)), "P('data', 'model'), P('model', None)",
              "P('data', None)", "shard_map"),
}  # fmt: skip


def _spec(tree: Any) -> str:
    """A pytree of shapes in jxinspect's spec language (``{'w': f32[3,2]}, f32[8]``)."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_spec(v)}" for k, v in tree.items()) + "}"
    if all(isinstance(d, int) for d in tree):
        return f"f32[{','.join(map(str, tree))}]"
    return ", ".join(_spec(t) for t in tree)


def _declarations() -> str:
    entries = {}
    for name, (mesh, args, in_specs, out_specs, stage) in TABLE.items():
        entry = {"devices": 8, "mesh": mesh, "args": _spec(args), "in_specs": in_specs}
        entry["explicit"] = False  # Auto axes, as the plain script's mesh
        entry |= {"stage": stage} | ({"out_specs": out_specs} if out_specs else {})
        entries[name] = entry
    return f"\n\nJXINSPECT = {entries!r}\n"


RAW = (
    PLAIN_JAX_ON_8_DEVICES
    + """
table = json.loads(sys.argv[1])
found = {}
for name, (mesh_text, args, in_specs, out_specs, stage) in table.items():
    mesh = mesh_of(mesh_text)
    leaf = lambda x: isinstance(x, list) and all(isinstance(d, int) for d in x)
    shapes = jax.tree_util.tree_map(lambda s: jax.ShapeDtypeStruct(tuple(s), jnp.float32),
                                    args, is_leaf=leaf)
    specs = eval("(" + in_specs + ",)", {"P": P})
    out = eval(out_specs, {"P": P}) if out_specs else None
    function = getattr(programs, name)
    if stage == "shard_map":
        function = shard_map(function, mesh=mesh, in_specs=specs, out_specs=out)
        jitted = jax.jit(function)
    else:
        named = lambda spec: NamedSharding(mesh, spec)
        ins = jax.tree_util.tree_map(named, specs, is_leaf=lambda x: isinstance(x, P))
        jitted = jax.jit(function, in_shardings=ins,
                         **({"out_shardings": named(out)} if out is not None else {}))
    compiled = jitted.lower(*shapes).compile()
    memory = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    found[name] = {
        "text": compiled.as_text(),
        "memory": [memory.argument_size_in_bytes, memory.output_size_in_bytes,
                   memory.temp_size_in_bytes, memory.alias_size_in_bytes],
        "flops": cost.get("flops"), "bytes_accessed": cost.get("bytes accessed"),
    }
print(json.dumps(found))
"""
)

# ---- the test's own reading of the HLO text --------------------------------------------

_LINE = re.compile(r"^\s*(ROOT )?%(\S+) = (.*?) ([a-z][a-z0-9-]*)\((.*)$")
_BYTES = {"f32": 4, "s32": 4, "u32": 4, "bf16": 2, "f16": 2, "f64": 8, "s64": 8, "pred": 1,
          "s8": 1, "u8": 1}  # fmt: skip
_MOVES = {"copy", "bitcast", "reshape", "convert", "transpose", "bitcast-convert", "slice",
          "dynamic-slice", "copy-start", "copy-done", "optimization-barrier"}  # fmt: skip
_KINDS = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
          "collective-broadcast"}  # fmt: skip


def _split(rest: str) -> tuple[str, str]:
    """The operands (``(s32[], f32[2]) %p`` on old releases: a type may hold parentheses)
    and what follows them."""
    depth = 0
    for i, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return rest[:i], rest[i + 1 :]
    return rest, ""


class Hlo:
    """Instructions by name: (computation, type, opcode, operands, attributes, root)."""

    def __init__(self, text: str) -> None:
        self.at: dict[str, tuple[str, str, str, list[str], str, bool]] = {}
        self.roots: dict[str, str] = {}
        self.entry = ""
        computation = ""
        for line in text.splitlines():
            if line.endswith("{") and "->" in line and not line.startswith(" "):
                computation = line.removeprefix("ENTRY ").split()[0].lstrip("%")
                self.entry = computation if line.startswith("ENTRY") else self.entry
                continue
            found = _LINE.match(line)
            if found and computation:
                root, name, kind, op, rest = found.groups()
                inside, attrs = _split(rest)
                operands = re.findall(r"%([\w.\-]+)", inside) if op != "parameter" else [inside]
                self.at[name] = (computation, kind, op, operands, attrs, bool(root))
                if root:
                    self.roots[computation] = name

    def attr(self, name: str, key: str) -> str | None:
        found = re.search(rf"\b{key}=%?([\w.\-]+)", self.at[name][4])
        return found.group(1) if found else None

    def callers(self, computation: str) -> list[str]:
        keys = ("calls", "to_apply", "body", "condition")
        return [n for n in self.at if any(self.attr(n, k) == computation for k in keys)]

    def bytes(self, name: str) -> int:
        """The bytes of one array instruction's type (``f32[8,16]{1,0}``)."""
        dtype, dims = re.match(r"(\w+)\[([\d,]*)\]", self.at[name][1]).groups()  # type: ignore[union-attr]
        return _BYTES[dtype] * math.prod(int(d) for d in dims.split(",") if d)

    def trips(self, computation: str) -> int | None:
        """How many times a computation runs: each while above it multiplies."""
        total: int | None = 1
        while computation != self.entry:
            (caller,) = self.callers(computation)
            if self.at[caller][2] == "while":
                count = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', self.at[caller][4])
                total = total * int(count.group(1)) if total and count else None
            computation = self.at[caller][0]
        return total

    def plain(self, computation: str) -> int | None:
        """The parameter a fused computation's root only moves."""
        name = self.roots[computation]
        while self.at[name][2] in _MOVES:
            name = self.at[name][3][0]
        return int(self.at[name][3][0]) if self.at[name][2] == "parameter" else None

    def parameter(self, name: str, index: tuple[int, ...] = ()) -> int | None:
        """The entry parameter an instruction's data is, following it back."""
        computation, _, op, operands, _, _ = self.at[name]
        if op == "parameter" and computation == self.entry:
            return int(operands[0]) if not index else None
        if op == "parameter":
            (caller,) = self.callers(computation)
            at = 0 if self.at[caller][2] == "while" else int(operands[0])
            return self.parameter(self.at[caller][3][at], index)
        if op in _MOVES:
            return self.parameter(operands[0], index)
        if op == "get-tuple-element":
            return self.parameter(operands[0], (int(self.attr(name, "index") or 0), *index))
        if op == "tuple" and index:
            return self.parameter(operands[index[0]], index[1:])
        if op == "while" and index:
            body_root = self.roots[self.attr(name, "body") or ""]
            element = self.at[body_root][3][index[0]]
            same = self.at[element][2] == "get-tuple-element" and self.attr(element, "index")
            return self.parameter(operands[0], index) if same == str(index[0]) else None
        if op in ("fusion", "call") and not index:
            at = self.plain(self.attr(name, "calls") or self.attr(name, "to_apply") or "")
            return self.parameter(operands[at]) if at is not None else None
        return None

    def outputs(self, name: str, index: tuple[int, ...] = ()) -> set[int]:
        """The program outputs an instruction's data is, following it forward."""
        computation, kind, _, _, _, root = self.at[name]
        found: set[int] = set()
        if root and computation == self.entry:
            found |= {index[0]} if index else ({0} if not kind.startswith("(") else set())
        elif root:
            (caller,) = self.callers(computation)
            found |= self.outputs(caller, index)
        for user, (_, _, op, operands, _, _) in self.at.items():
            if name not in operands:
                continue
            if (op in _MOVES or op.endswith("-done")) and operands[0] == name:
                found |= self.outputs(user, index)
            elif op == "tuple":
                found |= self.outputs(user, (operands.index(name), *index))
            elif op == "get-tuple-element":
                at = int(self.attr(user, "index") or 0)
                found |= self.outputs(user, index[1:]) if not index or index[0] == at else set()
        return found

    def collectives(self) -> list[tuple[str, str, int]]:
        """(name, kind, bytes) of each collective instruction, once."""
        return [
            (name, op.removesuffix("-start"), sum(self.bytes(o) for o in operands))
            for name, (_, _, op, operands, _, _) in self.at.items()
            if op.removesuffix("-start") in _KINDS
        ]


def _expected(hlo: Hlo, inputs: dict[int, str], outputs: list[str]) -> list[tuple[Any, ...]]:
    rows = []
    for name, kind, size in hlo.collectives():
        params = {hlo.parameter(o) for o in hlo.at[name][3]} - {None}
        paths = [inputs[p] for p in sorted(params) if p is not None]
        paths += [outputs[i] for i in sorted(hlo.outputs(name))]
        trips = hlo.trips(hlo.at[name][0])
        rows.append((kind, size, trips, size * (trips or 1), tuple(paths)))
    return sorted(rows, key=repr)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: Any, run_cli: Any) -> dict[str, tuple[dict[str, Any], Any]]:
    """Per program: jxinspect's JSON report, and raw JAX's facts."""
    folder = tmp_path_factory.mktemp("cost")
    (folder / "programs.py").write_text(PROGRAMS + _declarations(), encoding="utf-8")
    code = f"import sys; sys.argv[1:] = [{json.dumps(TABLE)!r}]\n{RAW}"
    raw = run_python(code, cwd=folder, warm=True)
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout.strip().splitlines()[-1])
    found = {}
    for name in TABLE:
        result = run_cli("lower", f"programs.py:{name}", "--compile", "--format", "json",
                         cwd=folder)  # fmt: skip
        assert result.returncode in (0, 1), result.describe()
        found[name] = (json.loads(result.stdout), facts[name])
    return found


def _readable(report: dict[str, Any]) -> None:
    assert report["compiled"]["unread"] is None, report["compiled"]["unread"]


@pytest.mark.parametrize("name", list(TABLE))
def test_collectives_paths_trips_and_bytes_per_step_equal_the_hlo(
    name: str, compiled: dict[str, tuple[dict[str, Any], Any]]
) -> None:
    report, raw = compiled[name]
    assert report["reached"] == "compiled"
    _readable(report)
    hlo = Hlo(raw["text"])
    inputs = {leaf["main_index"]: leaf["path"] for leaf in report["inputs"]
              if leaf["main_index"] is not None}  # fmt: skip
    outputs = [leaf["path"] for leaf in report["outputs"]]
    got = sorted(
        ((c["kind"], c["bytes"], c["trip_count"], c["bytes_per_step"], tuple(c["operand_paths"]))
         for c in report["compiled"]["collectives"]),
        key=repr,
    )  # fmt: skip
    assert got == _expected(hlo, inputs, outputs)
    assert got, f"{name} compiles to no collective: the program tests nothing"


@pytest.mark.parametrize("name", list(TABLE))
def test_memory_and_cost_equal_xla_analyses(
    name: str, compiled: dict[str, tuple[dict[str, Any], Any]]
) -> None:
    report, raw = compiled[name]
    memory = report["compiled"]["memory"]
    assert memory["source"] == "xla"
    got = [memory["arguments"], memory["outputs"], memory["temporaries"], memory["aliased"]]
    assert got == raw["memory"]
    assert report["compiled"]["flops"] == raw["flops"]
    assert report["compiled"]["bytes_accessed"] == raw["bytes_accessed"]


def test_what_the_programs_show(compiled: dict[str, tuple[dict[str, Any], Any]]) -> None:
    """The facts each program is here for, as the report says them: a loop's collective
    runs once per trip (nested loops multiply), a gathered weight is named by its path
    (a scanned layer's too), a gathered result by the output's."""

    def only(name: str, kind: str) -> dict[str, Any]:
        _readable(compiled[name][0])
        found = [c for c in compiled[name][0]["compiled"]["collectives"] if c["kind"] == kind]
        assert len(found) == 1, found
        return found[0]

    scan = only("scan_psum", "all-reduce")
    assert (scan["trip_count"], scan["bytes_per_step"]) == (4, 4 * scan["bytes"])
    assert len(scan["loops"]) == 1 and scan["operand_paths"] == []
    nested = only("nested_scan", "all-reduce")
    assert (nested["trip_count"], len(nested["loops"])) == (12, 2)
    assert only("fsdp", "all-gather")["operand_paths"] == ["w"]
    layers = only("scan_layers", "all-gather")  # each layer's slice, or all before the loop
    assert layers["operand_paths"] == ["params['layers']['w']"]
    result = compiled["gathered"][0]["outputs"][0]["path"]  # "" up to 0.5: a lone result
    assert only("gathered", "all-gather")["operand_paths"] == ["w", result]
    assert only("shmap", "all-reduce")["axes"] == ["model"]


def test_the_cost_in_text(lower_text: Any, tmp_path: Path) -> None:
    """The header says FLOPs and bytes accessed; the collectives table each one's trips,
    bytes per step and what it moves."""
    text = lower_text("sample_programs/compiled.py:fsdp_layer", "--show", "collectives").stdout
    assert re.search(r"^cost: +[\d.]+ [kMG]?FLOP, [\d.]+ [KMG]?i?B accessed \(per device, XLA "
                     r"cost_analysis\)$", text, re.MULTILINE), text  # fmt: skip
    row = next(line for line in text.splitlines() if "all-gather" in line)
    # its source line follows where the release keeps one (0.12 keeps none for this gather)
    assert re.search(r"all-gather +fsdp +f32\[32,256\] +32\.0 KiB +1 +32\.0 KiB +w( |$)", row), row
    assert "per step: fsdp 32.0 KiB" in text
