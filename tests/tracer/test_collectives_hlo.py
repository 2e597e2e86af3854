"""Every collective kind XLA emits, in every replica-group spelling the release writes,
read by jxinspect as an independent reading of ``compiled.as_text()`` reads it; and a
program whose optimized HLO cannot be read fails closed.

Each program is compiled twice on 8 simulated CPU devices: by ``jxinspect lower
--compile --format json``, and by plain JAX, which prints ``as_text()``, the partitions'
device ids and the mesh's. The test's own reader (not jxinspect's) counts each collective
instruction once (an async ``-start``/``-done`` pair once), sizes its operands, decodes
its groups (lists, iota, the mesh form) and reads ``input_output_alias``; every
collective's groups must also be the devices the mesh puts along its axes.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import PLAIN_JAX_ON_8_DEVICES, run_python
from hlo_reading import independent

TRANSPOSE = """
from functools import partial
import jax, jax.numpy as jnp
import jax.sharding as js
from jax.sharding import NamedSharding, PartitionSpec as P

_types = {"axis_types": (js.AxisType.Auto,)} if hasattr(js, "AxisType") else {}
MESH = jax.make_mesh((8,), ("x",), **_types)
_S = NamedSharding(MESH, P("x", None))


@partial(jax.jit, in_shardings=_S, out_shardings=_S, donate_argnums=0)
def transpose(a):
    return a.T * 2
"""

GATHERED = """
MESH2 = jax.make_mesh((2, 4), ("data", "model"), **({"axis_types": _types["axis_types"] * 2}
                                                   if _types else {}))


@partial(jax.jit, in_shardings=NamedSharding(MESH2, P(None, "model")),
         out_shardings=NamedSharding(MESH2, P()))
def auto_gather(w):
    return w * 2


@partial(jax.jit, in_shardings=_S, out_shardings=NamedSharding(MESH, P()))
def minor_sum(a):  # rows over x=8 made (2, 4): the sum runs over the minor part of x
    return jnp.sum(a.reshape(2, 4, -1), axis=1)
"""

PROGRAMS = (
    TRANSPOSE
    + GATHERED
    + """


def gather(x):
    return jax.lax.all_gather(x, "model", tiled=True)


def reduce(x):
    return jax.lax.psum(x, "data")


def reduce_all(x):
    return jax.lax.psum(x, ("data", "model"))


def scatter(x):
    return jax.lax.psum_scatter(x, "model", tiled=True)


def to_all(x):
    return jax.lax.all_to_all(x, "model", 0, 0, tiled=True)


def permute(x):
    return jax.lax.ppermute(x, "model", [(i, (i + 1) % 4) for i in range(4)])


def gather_loop(ws):
    out = []
    for w in ws:  # three identical all-gathers from one source line
        out.append(jnp.sum(jax.lax.all_gather(w, "model", tiled=True)))
    return sum(out) + ws[0]


JXINSPECT = {
    **{name: {"devices": 8, "mesh": "data=2,model=4", "stage": "shard_map",
              "args": "f32[16,32]", "in_specs": "P('data', 'model')",
              "out_specs": "P('data', 'model')"}
       for name in ("gather", "reduce", "reduce_all", "scatter", "to_all", "permute")},
    "gather_loop": {"devices": 8, "mesh": "data=2,model=4", "stage": "shard_map",
                    "args": "[f32[8,32], f32[8,32], f32[8,32]]",
                    "in_specs": "[P('model'), P('model'), P('model')]",
                    "out_specs": "P('model')"},
    "auto_gather": {"devices": 8, "args": "f32[16,32]"},
    "minor_sum": {"devices": 8, "args": "f32[8,16]"},
    "transpose": {"devices": 8, "args": "f32[64,64]"},
}
"""
)

RAW = (
    PLAIN_JAX_ON_8_DEVICES
    + r"""
f32 = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)
found = {}
m = mesh_of("data=2,model=4")
spec = P("data", "model")
for name in ("gather", "reduce", "reduce_all", "scatter", "to_all", "permute"):
    f = jax.jit(shard_map(getattr(programs, name), mesh=m, in_specs=spec, out_specs=spec))
    found[name] = (f, (f32(16, 32),), m)
f = jax.jit(shard_map(programs.gather_loop, mesh=m, in_specs=([P("model")] * 3,),
                      out_specs=P("model")))
found["gather_loop"] = (f, ([f32(8, 32)] * 3,), m)
found["auto_gather"] = (programs.auto_gather, (f32(16, 32),), programs.MESH2)
found["transpose"] = (programs.transpose, (f32(64, 64),), programs.MESH)
found["minor_sum"] = (programs.minor_sum, (f32(8, 16),), programs.MESH)
result = {}
for name, (f, args, mesh) in found.items():
    compiled = f.lower(*args).compile()
    shardings = jax.tree_util.tree_leaves(compiled.input_shardings)
    result[name] = {
        "text": compiled.as_text(),
        "partitions": [d.id for d in shardings[0]._device_assignment],
        "mesh": [list(mesh.axis_names), [[int(d.id) for d in row]
                 for row in mesh.devices.reshape(mesh.devices.shape[0], -1)],
                 list(mesh.devices.shape)],
    }
print(json.dumps(result))
"""
)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: Any, run_cli: Any) -> dict[str, tuple[dict[str, Any], Any]]:
    folder = tmp_path_factory.mktemp("collectives")
    (folder / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    raw = run_python(RAW, cwd=folder, warm=True)
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout.strip().splitlines()[-1])
    found = {}
    for name in facts:
        result = run_cli("lower", f"programs.py:{name}", "--compile", "--format", "json",
                         "--devices", "8", cwd=folder)  # fmt: skip
        assert result.returncode in (0, 1), result.describe()
        found[name] = (json.loads(result.stdout), facts[name])
    return found


NAMES = ("gather", "reduce", "reduce_all", "scatter", "to_all", "permute", "gather_loop",
         "auto_gather", "minor_sum", "transpose")  # fmt: skip


def _along(mesh: list[Any], axes: list[str]) -> set[frozenset[int]]:
    """The device groups the mesh puts along ``axes``: its ``devices`` ids, those axes last.
    A part of an axis, ``x:(2)4`` (Shardy's spelling: the 4 devices after every 2 of x's),
    cuts x into (2, 4, the rest) and takes the middle."""
    names, rows, shape = mesh
    dims: list[int] = []
    where: dict[str, int] = {}
    for name, size in zip(names, shape, strict=True):
        parts = [a for a in axes if a.split(":")[0] == name and ":" in a]
        if not parts:
            where[name] = len(dims)
            dims.append(size)
            continue
        (part,) = parts  # one part of an axis per collective here
        pre, cut = (int(n) for n in part.split(":(")[1].split(")"))
        where[part] = len(dims) + 1
        dims += [pre, cut, size // (pre * cut)]
    ids = np.array(rows).reshape(dims)
    chosen = [where[a] for a in axes]
    rest = [i for i in range(len(dims)) if i not in chosen]
    size = math.prod(dims[i] for i in chosen)
    return {
        frozenset(int(d) for d in row) for row in ids.transpose(rest + chosen).reshape(-1, size)
    }


@pytest.mark.parametrize("name", NAMES)
def test_collectives_equal_an_independent_reading(
    name: str, compiled: dict[str, tuple[dict[str, Any], Any]]
) -> None:
    report, raw = compiled[name]
    assert report["compiled"]["unread"] is None, report["compiled"]["unread"]
    hlo = independent(raw["text"])
    got = report["compiled"]["collectives"]
    assert Counter(c["kind"] for c in got) == Counter(c["kind"] for c in hlo["collectives"])
    assert got, f"{name} compiles to no collective: the program tests nothing"
    device = raw["partitions"]
    by_instruction = {c["instruction"]: c for c in hlo["collectives"]}
    for c in got:
        theirs = by_instruction[c["instruction"]]
        assert (c["kind"], c["bytes"]) == (theirs["kind"], theirs["bytes"])
        assert c["trip_count"] == 1 and c["loops"] == []
        if c["kind"] == "collective-permute":
            assert c["pairs"] == [[device[s], device[t]] for s, t in theirs["pairs"]]
            continue
        assert theirs["groups"] is not None, f"{name}: the test cannot read {c['instruction']}"
        groups = {frozenset(g) for g in c["groups"]}
        assert groups == {frozenset(device[d] for d in g) for g in theirs["groups"]}
        if report["mesh"] is None:  # GSPMD (0.4.35) names no mesh for a jitted function
            assert c["axes"] is None, c  # whose devices the groups cannot be axes of
            continue
        assert c["axes"] is not None, c
        assert groups == _along(raw["mesh"], c["axes"]), (c["axes"], c["groups"])
    assert [list(a) for a in report["compiled"]["aliases"]] == hlo["aliases"]


def test_each_collective_of_a_python_loop_counts(
    compiled: dict[str, tuple[dict[str, Any], Any]],
) -> None:
    report, _ = compiled["gather_loop"]
    gathers = [c for c in report["compiled"]["collectives"] if c["kind"] == "all-gather"]
    assert len(gathers) == 3 and len({c["instruction"] for c in gathers}) == 3
    assert all(c["axes"] == ["model"] for c in gathers)
    assert report["compiled"]["collective_bytes_by_axes"]["model"] == sum(
        c["bytes"] for c in gathers
    )


def test_what_the_issue_saw(compiled: dict[str, tuple[dict[str, Any], Any]]) -> None:
    """The all-to-all of a jit transpose is read, and its donated argument aliased (no
    JX301); a weight sharded over ``model`` is gathered over ``model``."""
    report, _ = compiled["transpose"]
    assert [c["kind"] for c in report["compiled"]["collectives"]] == ["all-to-all"]
    assert report["compiled"]["aliases"] == [[0, 0]]
    assert report["inputs"][0]["compiled_alias"] == 0
    assert not [f for f in report["findings"] if f["code"] == "JX301"]
    report, _ = compiled["auto_gather"]
    (gather,) = [c for c in report["compiled"]["collectives"] if c["kind"] == "all-gather"]
    assert gather["axes"] == (["model"] if report["mesh"] is not None else None)
    assert sorted(map(sorted, gather["groups"])) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_a_collective_over_part_of_an_axis_names_that_part(
    compiled: dict[str, tuple[dict[str, Any], Any]],
) -> None:
    """Rows over x=8 made (2, 4) and summed over the 4: an all-reduce over each run of 4
    devices, the minor part of x: ``x:(2)4``, as Shardy names a sub-axis (the groups
    checked against that name by the test's own cut of the mesh above)."""
    report, _ = compiled["minor_sum"]
    reduces = [c for c in report["compiled"]["collectives"] if c["kind"] == "all-reduce"]
    assert [sorted(map(sorted, c["groups"])) for c in reduces] == [[[0, 1, 2, 3], [4, 5, 6, 7]]]
    if report["mesh"] is not None:
        assert reduces[0]["axes"] == ["x:(2)4"]


UNREADABLE = (
    TRANSPOSE
    + '''
_as_text = jax.stages.Compiled.as_text


def _future(self, *args, **kwargs):
    """This module's programs print a replica-group spelling no reader knows yet."""
    text = _as_text(self, *args, **kwargs)
    if "transpose" not in text.split("\\n", 1)[0]:
        return text
    return text.replace("replica_groups=", "replica_groups=future<")


jax.stages.Compiled.as_text = _future
JXINSPECT = {"transpose": {"devices": 8, "args": "f32[64,64]"}}
'''
)

READABLE = UNREADABLE.replace("jax.stages.Compiled.as_text = _future", "")


def _codes(tree: Any) -> list[str]:
    """The codes of every finding (an object with a code and a message) in a JSON tree."""
    if isinstance(tree, dict):
        own = [tree["code"]] if "code" in tree and "message" in tree else []
        return own + [c for value in tree.values() for c in _codes(value)]
    if isinstance(tree, list):
        return [c for value in tree for c in _codes(value)]
    return []


def test_an_unread_program_fails_closed(tmp_path: Path, run_cli: Any) -> None:
    """Collectives and aliasing unknown (null, not empty), no JX301, one line saying
    why; `lint` with `compile: true` fails with JX306; `diff-debug --compile` exits 1
    naming the side that was not read."""
    (tmp_path / "after.py").write_text(UNREADABLE, encoding="utf-8")
    (tmp_path / "before.py").write_text(READABLE, encoding="utf-8")
    result = run_cli("lower", "after.py:transpose", "--compile", "--format", "json",
                     "--devices", "8", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    compiled = report["compiled"]
    assert compiled["collectives"] is None and compiled["aliases"] is None
    assert compiled["collective_bytes_by_axes"] == {}
    assert "\n" not in compiled["unread"] and len(compiled["unread"]) < 300
    assert "replica_groups=future<" in compiled["unread"] and "JAX " in compiled["unread"]
    codes = [f["code"] for f in report["findings"]]
    assert "JX301" not in codes and codes.count("JX306") == 1
    text = run_cli("lower", "after.py:transpose", "--show", "collectives", "--devices", "8",
                   cwd=tmp_path)  # fmt: skip
    assert "collectives: not read: optimized HLO not read" in text.stdout, text.describe()
    assert "aliasing not read" in text.stdout and "not aliased" not in text.stdout
    (tmp_path / "jxinspect.yaml").write_text(
        "compile: true\ndefaults:\n  devices: 8\ntargets:\n  - target: after.py\n", encoding="utf-8"
    )
    lint = run_cli("lint", "--no-cache", "--format", "json", cwd=tmp_path)
    assert lint.returncode == 1, lint.describe()
    found = _codes(json.loads(lint.stdout))
    assert "JX306" in found and "JX301" not in found, found
    diff = run_cli("diff-debug", "--compile", "--devices", "8", "before.py", "after.py",
                   cwd=tmp_path)  # fmt: skip
    assert diff.returncode == 1, diff.describe()
    row = next(line for line in diff.stdout.splitlines() if "unread" in line)
    assert "the after side's compiled program" in row and "optimized HLO not read" in row
    same = run_cli("diff-debug", "--compile", "--devices", "8", "before.py", "before.py",
                   cwd=tmp_path)  # fmt: skip
    assert same.returncode == 0, same.describe()
