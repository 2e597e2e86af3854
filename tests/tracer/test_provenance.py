"""Why each collective is there (``lower --why``), with XLA's own record of the same
compile as the oracle.

A plain JAX script compiles each program on 8 simulated CPU devices with the dump
options that make XLA write Shardy's propagation record, and prints the module after
propagation; this test reads it independently (regular expressions over its text): each
``@main`` argument's own axes, every ``axis = "origin"`` pair, the constraints Shardy
named. Every origin the command reports must be one that record holds, by the argument
number, result number or constraint line the test knows; the tensor-parallel program's
are checked whole. Releases before 0.7 (GSPMD by default) must say plainly that they
keep no provenance.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from importlib.metadata import version as installed
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    PLAIN_JAX_ON_8_DEVICES,
    REPO,
    needs_gspmd,
    run_cli,
    run_cli_once,
    run_python,
)

from jxinspect.core.vocabulary import release_key

SHARDY_BY_DEFAULT = release_key(installed("jax")) >= release_key("0.7.0")
FRAMES_AT_THEIR_LINES = release_key(installed("jax")) >= release_key("0.10.0")
"""The compiled frame table gives each operation its own line (0.8.3's can give one the
line of another of its function)."""

PROGRAMS = """
import jax
import jax.numpy as jnp
import numpy as np
from functools import partial
from jax.sharding import NamedSharding, PartitionSpec as P
import optax

OPT = optax.adam(1e-3)

def mesh():
    return jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))


def constrained(w, x):
    h = jnp.tanh(x @ w)
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh(), P(None, "model")))
    return jnp.sum(h * h)


def tp_mlp(x, w_in, w_out):
    h = jax.nn.relu(x @ w_in)
    return h @ w_out


def scan_layers(ws, x):
    def body(h, w):
        return jnp.tanh(h @ w), None

    return jnp.sum(jax.lax.scan(body, x, ws)[0])


def _shard_map(f, **kw):
    if hasattr(jax, "shard_map"):
        return jax.shard_map(f, **kw)
    from jax.experimental.shard_map import shard_map
    return shard_map(f, **kw)


def _loss(p, x):
    h = jnp.tanh(x @ p["w1"])
    return jnp.mean((h @ p["w2"]) ** 2)


def fsdp_grad(p, x):
    return jax.grad(_loss)(p, x)


def column_sums(x, w):
    return jnp.sum(x @ w, axis=0)


def shard_map_psum(x, w):
    body = lambda x, w: jax.lax.psum(x @ w, "data")
    return _shard_map(body, mesh=mesh(), in_specs=(P("data", None), P()), out_specs=P())(x, w)


def silently_replicated(x, w):
    return jnp.sin((x @ w).reshape(16, 64))


def uneven_table(flat):
    table = jnp.sin(flat).reshape(17, 16)
    table = jax.lax.with_sharding_constraint(table, NamedSharding(mesh(), P("data", None)))
    return table * 2


def _embed_loss(params, batch):
    rows = jax.lax.with_sharding_constraint(params["embed"], NamedSharding(mesh(), P("data")))
    h = jnp.tanh(rows[batch["ids"]] @ params["w"])
    return jnp.mean((h - batch["y"]) ** 2)


def embed_step(params, opt_state, batch):
    updates, opt_state = OPT.update(jax.grad(_embed_loss)(params, batch), opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def uneven_rows(x, w):
    return jnp.sum(jnp.tanh(x[:30] @ w), axis=0)


def explicit_reshard(x, w):
    h = jnp.tanh(x @ w)
    h = jax.sharding.reshard(h, P(None, "model"))
    return h.sum(axis=0)


def explicit_grad(w1, w2, x):
    def loss(w1, w2):
        h = jnp.tanh(x @ w1)
        return jnp.sum(h @ w2)

    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
    return w1 - 0.1 * g1, w2 - 0.1 * g2


def scan_and_shard_map(ws, x):
    layer = jax.shard_map(lambda w, h: jnp.tanh(h @ w), mesh=mesh(),
                          in_specs=(P(None, "model"), P("data", None)),
                          out_specs=P("data", "model"))
    h = jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)[0]
    return layer(ws[0], h)


_MESH = {"devices": 8, "mesh": "data=4,model=2", "explicit": False}
JXINSPECT = {
    "constrained": {**_MESH, "args": "f32[64,128], f32[16,64]",
                    "in_specs": "P('data', None), P('data', None)"},
    "tp_mlp": {**_MESH, "args": "f32[32,128], f32[128,512], f32[512,128]",
               "in_specs": "P('data', None), P(None, 'model'), P('model', None)",
               "out_specs": "P('data', None)"},
    "scan_layers": {**_MESH, "args": "f32[4,32,32], f32[8,32]",
                    "in_specs": "P(None, 'data', None), P('data', None)"},
    "fsdp_grad": {**_MESH, "args": "{'w1': f32[64,128], 'w2': f32[128,32]}, f32[16,64]",
                  "in_specs": "{'w1': P('data', None), 'w2': P('data', None)}, P('data', None)"},
    "column_sums": {**_MESH, "args": "f32[64,32], f32[32,16]",
                    "in_specs": "P('data', None), P(None, 'model')"},
    "shard_map_psum": {**_MESH, "args": "f32[64,32], f32[32,16]",
                       "in_specs": "P('data', None), P()"},
    "silently_replicated": {**_MESH, "args": "f32[64,32], f32[32,16]",
                            "in_specs": "P('data', None), P(None, 'model')"},
    "uneven_table": {**_MESH, "args": "f32[272]"},
    "embed_step": {**_MESH,
                   "args": "{'embed': f32[17,64], 'w': f32[64,16]}, "
                           "(optax.ScaleByAdamState(count=i32[], mu={'embed': f32[17,64], "
                           "'w': f32[64,16]}, nu={'embed': f32[17,64], 'w': f32[64,16]}), "
                           "optax.EmptyState()), {'ids': i32[32], 'y': f32[32,16]}",
                   "in_specs": "{'embed': P(), 'w': P(None, 'model')}, None, "
                               "{'ids': P('data'), 'y': P('data', None)}"},
    "uneven_rows": {**_MESH, "args": "f32[64,32], f32[32,16]",
                    "in_specs": "P('data', None), P(None, 'model')"},
    "explicit_reshard": {**_MESH, "explicit": True, "args": "f32[64,32], f32[32,16]",
                         "in_specs": "P('data', None), P(None, 'model')"},
    "explicit_grad": {**_MESH, "explicit": True, "args": "f32[32,64], f32[64,16], f32[64,32]",
                      "in_specs": "P(None, 'model'), P(None, 'model'), P('data', None)"},
    "scan_and_shard_map": {**_MESH, "args": "f32[4,64,64], f32[16,64]",
                           "in_specs": "P(None, None, 'model'), P('data', None)"},
}
"""

SCRIPT = (
    PLAIN_JAX_ON_8_DEVICES
    + """
import contextlib, glob, tempfile
m = programs.mesh()
S = lambda *spec: NamedSharding(m, P(*spec))
A = lambda shape: jax.ShapeDtypeStruct(shape, jnp.float32)
CASES = {
    "constrained": (programs.constrained, (A((64, 128)), A((16, 64))),
                    dict(in_shardings=(S("data", None), S("data", None)))),
    "tp_mlp": (programs.tp_mlp, (A((32, 128)), A((128, 512)), A((512, 128))),
               dict(in_shardings=(S("data", None), S(None, "model"), S("model", None)),
                    out_shardings=S("data", None))),
    "scan_layers": (programs.scan_layers, (A((4, 32, 32)), A((8, 32))),
                    dict(in_shardings=(S(None, "data", None), S("data", None)))),
    "fsdp_grad": (programs.fsdp_grad, ({"w1": A((64, 128)), "w2": A((128, 32))}, A((16, 64))),
                  dict(in_shardings=({"w1": S("data", None), "w2": S("data", None)},
                                     S("data", None)))),
    "column_sums": (programs.column_sums, (A((64, 32)), A((32, 16))),
                    dict(in_shardings=(S("data", None), S(None, "model")))),
    "shard_map_psum": (programs.shard_map_psum, (A((64, 32)), A((32, 16))),
                       dict(in_shardings=(S("data", None), S()))),
    "silently_replicated": (programs.silently_replicated, (A((64, 32)), A((32, 16))),
                            dict(in_shardings=(S("data", None), S(None, "model")))),
    "uneven_table": (programs.uneven_table, (A((272,)),), {}),
    "embed_step": (programs.embed_step,
                   ({"embed": A((17, 64)), "w": A((64, 16))},
                    jax.eval_shape(programs.OPT.init, {"embed": A((17, 64)), "w": A((64, 16))}),
                    {"ids": jax.ShapeDtypeStruct((32,), jnp.int32), "y": A((32, 16))}),
                   dict(in_shardings=({"embed": S(), "w": S(None, "model")}, None,
                                      {"ids": S("data"), "y": S("data", None)}))),
    "uneven_rows": (programs.uneven_rows, (A((64, 32)), A((32, 16))),
                    dict(in_shardings=(S("data", None), S(None, "model")))),
}
out = {}
explicit = js.Mesh(m.devices, m.axis_names, axis_types=(js.AxisType.Explicit,) * 2)
E = lambda *spec: NamedSharding(explicit, P(*spec))
CASES["explicit_reshard"] = (programs.explicit_reshard, (A((64, 32)), A((32, 16))),
                             dict(in_shardings=(E("data", None), E(None, "model"))))
CASES["explicit_grad"] = (programs.explicit_grad, (A((32, 64)), A((64, 16)), A((64, 32))),
                          dict(in_shardings=(E(None, "model"), E(None, "model"), E("data", None))))
in_mesh = getattr(jax, "set_mesh", None) or js.use_mesh
for name, (f, args, keywords) in CASES.items():
    folder = tempfile.mkdtemp(dir=".")
    with in_mesh(explicit) if name.startswith("explicit") else contextlib.nullcontext():
        jax.jit(f, **keywords).lower(*args).compile(compiler_options={
            "xla_dump_to": folder, "xla_dump_hlo_pass_re": "shardy-verbose",
            "xla_dump_hlo_module_re": "^$"})
    found = glob.glob(folder + "/shardy/*/02.after_propagation.mlir")
    out[name] = open(found[0]).read() if found else None
print(json.dumps(out))
"""
)
CASES = ("constrained", "tp_mlp", "scan_layers", "fsdp_grad", "column_sums", "shard_map_psum",
         "silently_replicated", "uneven_table", "embed_step", "uneven_rows",
         "explicit_reshard", "explicit_grad")  # fmt: skip

_ARG = re.compile(
    r"%arg(\d+): tensor<[^>]*> \{sdy\.sharding = #sdy\.sharding<[^>]*>, "
    r"sdy\.sharding_origins = \{([^}]*)\}"
)
_PAIR = re.compile(
    r'(?<![.\w])(\w+) = "(self|input: \d+|output: \d+|constraint_\d+'
    r'|mc_\d+(?:_(?:input|output): \d+)?)"'
)
_NAMED = re.compile(r'sdy\.sharding_origin_name = "(constraint_\d+|mc_\d+)"')


def record(text: str) -> tuple[dict[int, set[str]], set[tuple[str, str]], set[str]]:
    """XLA's record read without the tool: each argument's own (``self``) axes, every
    ``(axis, origin)`` pair, and the constraints Shardy named."""
    own = {int(m.group(1)): {a for a, o in _PAIR.findall(m.group(2)) if o == "self"}
           for m in _ARG.finditer(text)}  # fmt: skip
    return own, set(_PAIR.findall(text)), set(_NAMED.findall(text))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("why")
    (folder / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def dumped(folder: Path) -> dict[str, str | None]:
    return json.loads(run_python(SCRIPT, cwd=folder).stdout)


def why(folder: Path, case: str, *extra: str) -> dict[str, Any]:
    """``lower --why`` of ``case`` as JSON: run once per command line (several tests read
    each program's)."""
    result = run_cli_once("lower", f"programs.py:{case}", "--why", "--format", "json", *extra,
                          cwd=folder)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def line_of(text: str) -> int:
    """The line of ``PROGRAMS`` (the file the command reads) that holds ``text``."""
    return next(n for n, line in enumerate(PROGRAMS.splitlines(), 1) if text in line)


def constraint_lines() -> set[int]:
    """The lines of the constraints: ``with_sharding_constraint`` and ``reshard``."""
    return {n for n, line in enumerate(PROGRAMS.splitlines(), 1)
            if "with_sharding_constraint(" in line or "jax.sharding.reshard(" in line}  # fmt: skip


def explicit_lines() -> set[int]:
    """The lines of the functions staged over explicit axes."""
    start = line_of("def explicit_reshard(")
    return set(range(start, line_of("def scan_and_shard_map(")))


def constraint_line() -> int:
    return line_of("with_sharding_constraint(h")


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
@pytest.mark.parametrize("case", CASES)
def test_each_origin_is_one_xlas_record_holds(
    case: str, folder: Path, dumped: dict[str, str | None]
) -> None:
    report = why(folder, case)
    compiled = report["compiled"]
    text = dumped[case]
    assert text is not None and compiled["origins_unread"] is None
    own, pairs, named = record(text)
    main_index = {i["path"]: i["main_index"] for i in report["inputs"]}
    result_index = {o["path"]: o["index"] for o in report["outputs"]}
    checked = 0
    for collective in compiled["collectives"]:
        if collective["origins"] is None:  # not known: 0.8 can write a caller's line, 0.11
            # none (a gather of an intermediate whose metadata names two operations), or alike
            # operations at its line (a gradient's two transposed dots) say different origins,
            # and it moves no argument or result that tells them apart
            in_programs = (collective["file"] or "").endswith("programs.py")
            assert not in_programs or not collective["operand_paths"], collective
            continue
        for origin in collective["origins"]:
            axis, kind = origin["axis"], origin["kind"]
            if kind == "argument":
                n = main_index[origin["path"]]
                assert axis in own.get(n, set()) or (axis, f"input: {n}") in pairs, origin
            elif kind == "result":
                assert (axis, f"output: {result_index[origin['path']]}") in pairs, origin
            elif kind == "constraint":
                assert origin["line"] in constraint_lines(), origin
                assert any(a == axis and o.startswith("constraint_") for a, o in pairs), origin
            elif kind == "type":  # JAX's constraint of an operation's type, a constraint_K
                assert origin["path"] and origin["line"] in explicit_lines(), origin
                assert any(a == axis and o.startswith("constraint_") for a, o in pairs), origin
            elif kind == "shard_map":  # the shard_map Shardy named mc_K, at its call's line
                assert origin["line"] == line_of("return _shard_map(body"), origin
                assert "sdy.manual_computation" in text, origin
            else:  # one Shardy added itself: named in the record, at no line of the program
                assert kind == "unknown" and any(o.startswith("constraint_") for _, o in pairs)
            passed_on = re.compile(rf'"{re.escape(axis)}" = (?:operand|result)-\d+ -> \[')
            for hop in origin["via"]:  # each a passing on of this axis the record holds
                assert hop["operations"] and passed_on.search(text), origin
            checked += 1
    assert checked > 0 or not compiled["collectives"]
    unexplained = [c["instruction"] for c in compiled["collectives"] if c["origins"] == []]
    assert unexplained == []


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_the_route_of_an_axis_is_the_records_propagation_edges(
    folder: Path, dumped: dict[str, str | None]
) -> None:
    """``model`` reaches ``x @ w`` from the constraint on the next line backwards through
    ``tanh``: the record's edge on the tanh (its result passed ``model`` to its operand) is
    the route the collective's value is said to have come by, at the tanh's line."""
    text = dumped["constrained"]
    assert text is not None
    (tanh,) = [line for line in text.splitlines() if "stablehlo.tanh" in line]
    assert '"model" = result-0 -> [operand-0]' in tanh
    tanh_line = line_of("h = jnp.tanh(x @ w)")
    report = why(folder, "constrained")
    routes = [
        (o["via"], o["line"])
        for c in report["compiled"]["collectives"]
        for o in c["origins"]
        if o["axis"] == "model" and o["via"]
    ]
    assert routes, report["compiled"]["collectives"]
    hop = {"operations": ["tanh"], "file": str(folder / "programs.py"), "line": tanh_line,
           "library_file": None, "library_line": None}  # fmt: skip
    assert all(via == [hop] and line == constraint_line() for via, line in routes), routes
    said = f"via tanh at programs.py:{tanh_line}"  # the text: relative to the working folder
    assert said in run_cli("lower", "programs.py:constrained", "--why", cwd=folder).stdout
    page = run_cli("lower", "programs.py:constrained", "--why", "--format", "html", cwd=folder)
    assert f"<span class=via> {html.escape(said)}</span>" in page.stdout


DROPPING = ("silently_replicated", "uneven_table", "embed_step")
"""The programs whose partitioner drops an axis a declaration gave: a reshape that cannot
keep ``model``, 17 rows that ``data=4`` does not divide (alone, and in an optax train
step, whose updated table and Adam moments XLA returns replicated)."""
_OP = re.compile(r"= (?:\"?)([\w.]+)")
_PER_VALUE = re.compile(r"<@\w+, \[([^\]]*)\]")


def dropped_in_record(text: str) -> set[tuple[str, str, str]]:
    """XLA's record read without the tool: ``(value, axis, origin)`` for each axis a value's
    origins name that its sharding does not have; ``value`` is the operation's name
    (``reshape``) or ``result N``. Constraints, and what a shard_map's body makes, are
    left out (their shardings are the code's)."""
    found: set[tuple[str, str, str]] = set()
    manual: int | None = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if manual is not None and indent <= manual and line.strip().startswith("}"):
            manual = None
            continue
        if "sdy.manual_computation" in line:
            manual = indent
        if manual is not None or "sdy.sharding_origins" not in line:
            continue
        if line.lstrip().startswith("func.func"):  # the results: after "->"
            results = line.split(") -> (", 1)[1] if ") -> (" in line else ""
            for n, part in enumerate(_top_level(results)):
                found |= _lost(part, f"result {n}")
            continue
        if "sdy.sharding_constraint" in line or "sdy.reshard" in line:
            continue
        name = _OP.search(line)
        value = name[1].rsplit(".", 1)[-1] if name else "?"
        shardings = line.split("sdy.sharding = ", 1)[1] if "sdy.sharding = " in line else ""
        origins = line.split("sdy.sharding_origins = [", 1)[1].split("]", 1)[0]
        for has, named in zip(_PER_VALUE.findall(shardings), re.findall(r"\{[^}]*\}", origins)):
            found |= {(value, a, o) for a, o in _PAIR.findall(named)
                      if f'"{a}"' not in has}  # fmt: skip
    return found


def _top_level(results: str) -> list[str]:
    """``tensor<..> {..}, tensor<..>) {`` split at its top-level commas, up to the
    parenthesis that closes it: one entry per result, with or without attributes."""
    parts, depth, current = [], 0, ""
    for previous, char in zip(" " + results, results):
        if char in "<{([":
            depth += 1
        elif char in ">})]" and previous != "-":
            depth -= 1
        if depth < 0 or (char == "," and depth == 0):
            parts.append(current)
            current = ""
            if depth < 0:
                return parts
            continue
        current += char
    return [*parts, current] if current else parts


def _lost(part: str, value: str) -> set[tuple[str, str, str]]:
    has = _PER_VALUE.search(part)
    origins = part.split("sdy.sharding_origins = ", 1)[-1] if has else ""
    return (
        {(value, a, o) for a, o in _PAIR.findall(origins) if f'"{a}"' not in has[1]}
        if has
        else set()
    )


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
@pytest.mark.parametrize("case", CASES)
def test_each_dropped_axis_is_one_xlas_record_holds(
    case: str, folder: Path, dumped: dict[str, str | None]
) -> None:
    """JX204's facts: the values Shardy's record shows without an axis that a declaration
    of the code gave them, a declared result's excepted (its sharding is the code's)."""
    report = why(folder, case)
    text = dumped[case]
    assert text is not None
    main_index = {i["path"]: i["main_index"] for i in report["inputs"]}
    declared = {f"result {o['index']}" for o in report["outputs"] if o["sharding"] is not None}
    index = {o["path"]: o["index"] for o in report["outputs"]}
    expected = {d for d in dropped_in_record(text) if d[0] not in declared}
    got = set()
    for value in report["compiled"]["dropped"]:
        name = f"result {index[value['path']]}" if value["path"] else value["value"].rsplit("/")[-1]
        for origin in value["dropped"]:
            if origin["kind"] == "argument":
                got.add((name, origin["axis"], f"input: {main_index[origin['path']]}"))
            else:
                assert origin["kind"] == "constraint" and origin["line"] in constraint_lines()
                said = {o for v, a, o in expected if (v, a) == (name, origin["axis"])}
                assert len(said) == 1 and said.pop().startswith("constraint_"), origin
                got |= {(v, a, o) for v, a, o in expected if (v, a) == (name, origin["axis"])}
    assert got == expected
    assert bool(expected) == (case in DROPPING), expected
    findings = [f for f in report["findings"] if f["code"] == "JX204"]
    assert len(findings) == len(report["compiled"]["dropped"])


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_a_table_the_axis_does_not_divide_is_said_replicated_with_its_gather(folder: Path) -> None:
    """jax-ml/jax#26946: a constraint shards 17 rows over data=4; the result is replicated,
    and JX204 names the constraint and the all-gather that replicates it."""
    report = why(folder, "uneven_table")
    (value,) = report["compiled"]["dropped"]
    assert (value["value"], value["sharding"], value["path"]) == ("result", "replicated", "result")
    (origin,) = value["dropped"]
    assert (origin["axis"], origin["kind"], origin["line"]) == (
        "data", "constraint", line_of("with_sharding_constraint(table"))  # fmt: skip
    (finding,) = [f for f in report["findings"] if f["code"] == "JX204"]
    (gather,) = report["compiled"]["collectives"]
    assert gather["kind"] == "all-gather" and gather["axes"] == ["data"]
    assert (
        f"all-gather over data moving result, {gather['bytes']} B per device" in finding["message"]
    )
    assert finding["path"] == "result"


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_lint_with_why_fails_on_a_silent_replication(folder: Path, tmp_path: Path) -> None:
    """``why: true`` (here one target's): lint reads the partitioner's record too, and
    JX204 fails the run; the target linted without it is not asked, and says nothing."""
    shutil.copy(folder / "programs.py", tmp_path / "programs.py")
    (tmp_path / "jxinspect.yaml").write_text(
        "fail_on: warning\nselect: [JX204]\ntargets:\n"
        "  - {target: programs.py:uneven_table, why: true}\n"
        "  - {target: programs.py:silently_replicated}\n",
        encoding="utf-8",
    )
    result = run_cli("lint", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    targets = {t["target"]: t for t in json.loads(result.stdout)["targets"]}
    (finding,) = targets["programs.py:uneven_table"]["findings"]
    assert finding["code"] == "JX204" and finding["path"] == "result"
    lined = f"with_sharding_constraint at programs.py:{line_of('with_sharding_constraint(table')}"
    assert lined in finding["message"]
    assert targets["programs.py:silently_replicated"]["findings"] == []


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_the_tensor_parallel_reduction_is_explained_whole(folder: Path) -> None:
    """The all-reduce after the second matmul: its result is sharded as the declared
    output, its operands as the arguments that fed them."""
    (collective,) = why(folder, "tp_mlp")["compiled"]["collectives"]
    got = {(o["value"], o["axis"], o["kind"], o["path"]) for o in collective["origins"]}
    assert got == {("result", "data", "result", "result"),
                   ("operand 0", "data", "argument", "x"),
                   ("operand 0", "model", "argument", "w_in"),
                   ("operand 1", "model", "argument", "w_out")}  # fmt: skip
    assert collective["kind"] == "all-reduce" and collective["axes"] == ["model"]


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_over_explicit_axes_an_operations_type_is_said_so(folder: Path) -> None:
    """Over explicit axes JAX writes a constraint after each operation, named as that
    operation: an axis that came from one is said to come from that operation's type at
    its line (never a ``with_sharding_constraint`` the code does not have), and ``--why-of``
    lists each operation at a line once, not beside JAX's constraint of it."""
    lines = {line_of("h = jnp.tanh(x @ w1)"), line_of("return jnp.sum(h @ w2)"),
             line_of("return w1 - 0.1 * g1")}  # fmt: skip
    line = min(lines)
    report = why(folder, "explicit_grad", "--why-of", str(line))
    origins = [o for c in report["compiled"]["collectives"] for o in c["origins"]]
    typed = [o for o in origins if o["kind"] == "type"]
    assert typed, origins
    assert all(o["line"] in lines and o["path"] for o in typed), typed
    assert not [o for o in origins if o["kind"] == "constraint" and o["line"] in lines]
    values = [v["value"] for v in report["compiled"]["why_of"]]
    assert values and all(v.endswith(f"programs.py:{line}") for v in values), values
    assert len(values) == len(set(values)), values
    assert not any("sharding_constraint" in v for v in values), values


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_the_html_report_draws_each_collectives_declarations_linked(folder: Path) -> None:
    """``--format html``: under each collective, each value's sharding and the declaration
    of each axis, as the JSON of the same command says: an argument's or a result's linked
    to its row of the page, a constraint's line shown; the ``--why-of`` values listed."""
    line = constraint_line()
    report = why(folder, "constrained", "--why-of", str(line))
    result = run_cli("lower", "programs.py:constrained", "--why", "--why-of", str(line),
                     "--format", "html", cwd=folder)  # fmt: skip
    assert result.returncode == 0, result.describe()
    page = result.stdout
    rows = {i: f'<tr id="in-{i}"' in page for i in range(len(report["inputs"]))}
    assert all(rows.values()), rows
    anchors = {("argument", leaf["path"]): f"in-{i}" for i, leaf in enumerate(report["inputs"])}
    anchors |= {("result", leaf["path"]): f"out-{i}" for i, leaf in enumerate(report["outputs"])}
    collectives = report["compiled"]["collectives"]
    assert collectives, "the program has no collective: the page shows nothing to test"
    for i, collective in enumerate(collectives):
        drawn = re.search(rf'<tr class=why id="why-{i}">(.*?)</tr>', page)
        assert drawn is not None, i
        for origin in collective["origins"]:
            if origin["kind"] in ("argument", "result"):
                anchor = anchors[origin["kind"], origin["path"]]
                assert f'<a href="#{anchor}">' in drawn.group(1), (origin, drawn.group(1))
                assert f'id="{anchor}"' in page
            elif origin["kind"] == "constraint":
                shown = os.path.relpath(origin["file"], folder)  # where the command ran
                where = html.escape(f"{shown}:{origin['line']}")
                assert f"<code>{where}</code>" in drawn.group(1), (origin, drawn.group(1))
    listed = re.search(r"<ul id=why-of>(.*?)</ul>", page)
    assert listed is not None
    assert listed.group(1).count("<li>") == len(report["compiled"]["why_of"])


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_why_of_a_path_and_a_line_is_what_xlas_record_holds(
    folder: Path, dumped: dict[str, str | None]
) -> None:
    """``--why-of``: an argument's path gets its own axes, as the record's ``self``; each
    operation at the constraint's line the constraint for ``model``, named in the record;
    a path or line the program does not have is said not found."""
    line = constraint_line()
    report = why(folder, "constrained", "--why-of", "x", "--why-of", str(line),
                 "--why-of", "programs.py:1", "--why-of", "params['nope']")  # fmt: skip
    own, pairs, _ = record(dumped["constrained"] or "")  # 0.7.1 names no constraint
    asked: dict[str, list[dict[str, Any]]] = {}
    for value in report["compiled"]["why_of"]:
        asked.setdefault(value["asked"], []).append(value)
    main_index = {i["path"]: i["main_index"] for i in report["inputs"]}
    [x] = asked["x"]
    assert (x["value"], x["sharding"]) == ("argument x", "P('data', None)")
    recorded = {(axis, "argument", "x") for axis in own[main_index["x"]]}
    assert {(o["axis"], o["kind"], o["path"]) for o in x["origins"]} == recorded
    assert recorded == {("data", "argument", "x")}
    at_line = asked[str(line)]
    assert at_line and all(f"programs.py:{line}" in v["value"] for v in at_line)
    constrained = [v for v in at_line if v["sharding"] == "P(None, 'model')"]
    assert constrained, at_line
    for value in constrained:
        [model] = [o for o in value["origins"] if o["axis"] == "model"]
        assert (model["kind"], model["line"]) == ("constraint", line)
    assert any(a == "model" and o.startswith("constraint_") for a, o in pairs)
    for unknown in ("programs.py:1", "params['nope']"):
        [value] = asked[unknown]
        assert value["value"] is None and value["unfound"]
    # a result declared replicated is said so, never "no declaration reaches it"
    replicated = why(folder, "column_sums", "--out-specs", "P()", "--why-of", "result")
    [result] = replicated["compiled"]["why_of"]
    assert (result["sharding"], result["origins"], result["declared"]) == ("replicated", [], True)
    assert replicated["outputs"][0]["sharding"]["readable"] == "replicated"  # as @main says
    text = run_cli("lower", "programs.py:constrained", "--why-of", "x", cwd=folder)
    assert text.returncode == 0, text.stderr
    assert "why these values are sharded so" in text.stdout
    assert "  argument x\n    P('data', None): data ← argument `x`" in text.stdout


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_a_constraint_is_named_by_its_line_in_the_text_view(folder: Path) -> None:
    result = run_cli("lower", "programs.py:constrained", "--why", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "why each collective" in result.stdout
    assert (
        f"with_sharding_constraint at {folder / 'programs.py'}:{constraint_line()}"
        in (result.stdout)
        or f"programs.py:{constraint_line()}" in result.stdout
    )


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_a_crash_of_the_partitioners_debug_run_leaves_the_report(folder: Path) -> None:
    """XLA's verbose propagation segfaults on a scan with a shard_map (0.10.2, 0.12): the
    report is whole, with its collectives, and says why it has no provenance; where the
    release does not crash, the origins are there."""
    report = why(folder, "scan_and_shard_map")
    compiled = report["compiled"]
    assert compiled["collectives"]
    unread = [f for f in report["findings"] if f["code"] == "JX306"]
    if compiled["origins_unread"] is not None:
        assert (
            "the partitioner's debug run crashed (signal 11, SIGSEGV)"
            in (compiled["origins_unread"])
        )
        assert all(c["origins"] is None for c in compiled["collectives"])
        assert compiled["dropped"] is None  # unknown, never "none dropped"
        (finding,) = unread  # a gate that cannot see does not pass
        assert finding["severity"] == "error" and compiled["origins_unread"] in finding["message"]
    else:
        assert all(c["origins"] is not None for c in compiled["collectives"])
        assert compiled["dropped"] is not None and unread == []


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_a_collective_whose_operation_did_not_line_up_is_said_unknown(folder: Path) -> None:
    """A collective none of whose line's operations lined up with the record (0.8 writes a
    caller's line for an optax step's) has origins ``None``: the text view and the page say
    "not known", never "the record names none" (``[]``), nor "not asked for"."""
    from dataclasses import replace

    from jxinspect.core.codec import decode
    from jxinspect.core.model import Report
    from jxinspect.render.report import cost_html, provenance_view

    said = why(folder, "constrained")
    report = decode(json.dumps(said), Report, source="lower --why")
    assert report.compiled is not None and report.compiled.collectives
    first, *rest = report.compiled.collectives
    unknown = replace(report, compiled=replace(
        report.compiled, collectives=(replace(first, origins=None), *rest)))  # fmt: skip
    text = provenance_view.render(unknown)
    assert f"     {provenance_view.UNMATCHED}" in text.split("#1 ")[0]
    assert "not asked for" not in text
    page = cost_html.section(unknown)
    assert 'id="why-0"><td colspan' in page and html.escape(provenance_view.UNMATCHED) in page
    asked_not = replace(unknown, compiled=replace(unknown.compiled, dropped=None))
    assert "not asked for (lower --why)" in provenance_view.render(asked_not)


@needs_gspmd
def test_gspmd_keeps_no_provenance_and_says_so(folder: Path) -> None:
    report = why(folder, "tp_mlp", "--partitioner", "gspmd")
    compiled = report["compiled"]
    assert compiled["origins_unread"].startswith("the GSPMD partitioner keeps no record")
    assert compiled["collectives"] and all(c["origins"] is None for c in compiled["collectives"])
    assert compiled["dropped"] is None
    assert [f["code"] for f in report["findings"] if f["severity"] == "error"] == ["JX306"]


@needs_gspmd
def test_lint_with_why_fails_where_the_partitioner_keeps_no_record(
    folder: Path, tmp_path: Path
) -> None:
    """``why: true`` over GSPMD, which keeps no record: JX204 cannot judge, and the gate
    fails (JX306), never passes blind."""
    shutil.copy(folder / "programs.py", tmp_path / "programs.py")
    (tmp_path / "jxinspect.yaml").write_text(
        "targets:\n  - {target: programs.py:uneven_table, why: true, partitioner: gspmd}\n",
        encoding="utf-8",
    )
    result = run_cli("lint", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (target,) = json.loads(result.stdout)["targets"]
    assert [(f["code"], f["severity"]) for f in target["findings"]] == [("JX306", "error")]
    assert "the GSPMD partitioner keeps no record" in target["findings"][0]["message"]


def test_without_why_nothing_is_asked_for(folder: Path) -> None:
    result = run_cli("lower", "programs.py:tp_mlp", "--compile", "--format", "json", cwd=folder)
    compiled = json.loads(result.stdout)["compiled"]
    assert compiled["origins_unread"] is None
    assert all(c["origins"] is None for c in compiled["collectives"])
    assert (
        "why each collective"
        not in run_cli("lower", "programs.py:tp_mlp", "--compile", cwd=folder).stdout
    )


def test_the_docs_show_the_flag() -> None:
    assert "--why" in (REPO / "docs" / "commands" / "lower.md").read_text(encoding="utf-8")


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_an_axis_the_value_no_longer_has_is_not_said(folder: Path) -> None:
    """A reshape that cannot keep ``model`` gathers it: the value made is said sharded as
    it is, with the origin of each axis it still has, not of the one it lost (Shardy's
    record keeps that one too)."""
    (collective,) = why(folder, "silently_replicated")["compiled"]["collectives"]
    assert collective["kind"] == "all-gather" and collective["axes"] == ["model"]
    for origin in collective["origins"]:
        kept = re.findall(r"'(\w+)'", origin["sharding"])
        assert origin["axis"] in kept, origin


SETS_ITS_OWN_DEVICES = """
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def step(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", None)))
    return jnp.sum(jnp.tanh(x @ w), axis=0)


JXINSPECT = {"step": {"args": "f32[16,32], f32[32,64]"}}
"""


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_the_debug_run_stages_on_the_devices_the_module_set_itself(tmp_path: Path) -> None:
    """A module that sets ``XLA_FLAGS`` itself (8 devices, a 2×4 mesh): the debug run
    stages on the same 8 devices with no flag, as the report does (it once had 1, its
    own ``XLA_FLAGS`` set before the module's ``setdefault``), and Shardy's record names
    the constraint."""
    (tmp_path / "selfset.py").write_text(SETS_ITS_OWN_DEVICES, encoding="utf-8")
    result = run_cli("lower", "selfset.py:step", "--why", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["num_devices"] == 8
    compiled = report["compiled"]
    assert compiled["origins_unread"] is None, compiled["origins_unread"]
    assert compiled["collectives"] and all(c["origins"] for c in compiled["collectives"])
    assert not [f for f in report["findings"] if f["code"] == "JX306"]


DIFFERS_ON_SECOND_IMPORT = """
import os
import pathlib
seen = pathlib.Path(__file__).with_name("imported-once")
count = 2 if seen.exists() else 8  # the report's run: 8 devices; any later import: 2
seen.write_text("")
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={count}"
""" + SETS_ITS_OWN_DEVICES.replace(
    'os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")', ""
)


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_a_failed_debug_run_names_what_it_staged_under_otherwise(tmp_path: Path) -> None:
    """A module whose import does something else the second time (here: sets 2 devices
    where it set 8) fails in the debug run: the report says what differed, the devices
    and the variable."""
    (tmp_path / "once.py").write_text(DIFFERS_ON_SECOND_IMPORT, encoding="utf-8")
    result = run_cli("lower", "once.py:step", "--why", "--format", "json", cwd=tmp_path)
    unread = json.loads(result.stdout)["compiled"]["origins_unread"]
    assert unread is not None and "the partitioner's debug run failed" in unread
    assert "it staged with 2 devices where the report's run had 8" in unread
    assert (
        "XLA_FLAGS='--xla_force_host_platform_device_count=2' where the report's run "
        "had '--xla_force_host_platform_device_count=8'"
    ) in unread


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
@pytest.mark.parametrize(
    "name",
    ["with space", "two  spaces\tand a tab", "q\"uote's $(x) `y`; \\back\\slash\\", "new\nline"],
    ids=["space", "spaces and tab", "shell and quotes", "newline"],
)
def test_a_temporary_folder_with_spaces_or_quotes_keeps_the_dump_inside(
    folder: Path, tmp_path: Path, name: str
) -> None:
    """The debug run's dump folder reaches XLA quoted: unquoted, a space ended the flag,
    the flags after it were lost and XLA dumped every pass where the first word pointed,
    outside the private folder, and the report had no provenance."""
    shutil.copy(folder / "programs.py", tmp_path / "programs.py")
    temporary = tmp_path / "tmp" / name
    temporary.mkdir(parents=True)
    result = run_cli("lower", "programs.py:constrained", "--why", "--format", "json",
                     cwd=tmp_path, env={"TMPDIR": str(temporary)})  # fmt: skip
    assert result.returncode == 0, result.describe()
    compiled = json.loads(result.stdout)["compiled"]
    assert compiled["origins_unread"] is None, compiled["origins_unread"]
    assert any(c["origins"] for c in compiled["collectives"]), compiled["collectives"]
    assert [p.name for p in (tmp_path / "tmp").iterdir()] == [name]  # nothing dumped beside
    assert list(temporary.iterdir()) == []  # the private folder removed, nothing left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["programs.py", "tmp"]


def test_xla_flags_read_a_quoted_folder_as_one_value() -> None:
    from jxinspect.tracer.seam import xla_flags

    flag = '--xla_dump_to="/tmp/a b/\\"q\\"\\\\z $(x)\n;"'
    given = f' --a=1\t{flag}  --b=\'x y\' --c="p\\" q" rest --d'
    assert xla_flags.tokens(given) == ["--a=1", flag, "--b='x y'", '--c="p\\" q"', "rest --d"]


PROJECTION = "def proj(x, w):\n    return x @ w\n"
"""A library's one line that several of the user's operations go through."""

QKV = """
from projection import proj


def f(frozen_vars, x):
    q = proj(x, frozen_vars[0])
    k = proj(x, frozen_vars[1])
    v = proj(x, frozen_vars[2])
    return q * k + v
"""


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
@pytest.mark.parametrize(
    ("weights", "moves_a_weight"),
    [("f32[32,64@model], f32[32@data,64@model], f32[32,64@model]", True),
     ("f32[32,64@model], f32[32,64@data], f32[32,64@model]", False)],
    ids=["one-moves-its-weight", "intermediates"],
)  # fmt: skip
def test_alike_operations_at_one_line_are_told_apart_by_what_they_read(
    tmp_path: Path, weights: str, moves_a_weight: bool
) -> None:
    """Three projections through one library line, one ``op_name``: a collective's
    origins are those of the projection that reads the weight it moves (its ``moves``
    column), never another's; where what it moves tells them apart not, not known."""
    (tmp_path / "projection.py").write_text(PROJECTION, encoding="utf-8")
    (tmp_path / "qkv.py").write_text(QKV, encoding="utf-8")
    result = run_cli("lower", "qkv.py:f", "--devices", "8", "--mesh", "data=2,model=4",
                     "--auto", "--args", f"[{weights}], f32[8@data,32]", "--why",
                     "--format", "json", cwd=tmp_path)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    at_line = [c for c in json.loads(result.stdout)["compiled"]["collectives"]
               if (c["file"] or "").endswith("projection.py") and c["line"] == 2]  # fmt: skip
    if not at_line:  # 0.12.1 places the collectives at the user's calls, not the shared line
        pytest.skip("this release places no collective at the line the projections share")
    for collective in at_line:
        moved = set(collective["operand_paths"])
        weighed = {o["path"] for o in collective["origins"] or ()
                   if o["kind"] == "argument" and o["path"].startswith("frozen_vars")}  # fmt: skip
        assert weighed <= moved, collective  # never a weight it does not move
    moving = [c for c in at_line if any(p.startswith("frozen_vars") for p in c["operand_paths"])]
    assert bool(moving) == moves_a_weight, at_line
    for collective in moving:  # the projection that reads it: its weight's origins
        assert collective["origins"], collective


@pytest.mark.skipif(not SHARDY_BY_DEFAULT, reason="GSPMD partitions by default before 0.7")
def test_each_all_reduce_of_the_guides_model_is_explained_by_an_operation_summing_over_it() -> None:
    """The guide's model (docs/your-own-model.md): an all-reduce completes a sum over its
    axes, so the operation said to need it has operands split over them and a result that
    is not (the forward dot of ``down`` for the one over ``model`` at its line; the
    backward dot into ``up``'s input for the one at ``up``'s line, not the dot beside it
    that makes ``up``'s gradient). The gradients' all-reduce XLA combined from several
    operations (its ``op_name`` names each) takes none of them alone, and never the
    forward dot whose line it shares."""
    if not FRAMES_AT_THEIR_LINES:
        pytest.skip("before 0.10 the compiled frame table can give an operation another line "
                    "of its function (0.8.3: the down projection's dot at the up "
                    "projection's line), so the operation at the collective's line is not "
                    "always the one that needs it")  # fmt: skip
    result = run_cli("lower", "sample_programs/own_model.py:train_step", "--args-from", "make",
                     "--why", "--format", "json", cwd=REPO)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    collectives = json.loads(result.stdout)["compiled"]["collectives"]
    reducing = [c for c in collectives if c["kind"] == "all-reduce"]
    assert reducing, collectives
    for collective in reducing:
        axes = set(collective["axes"])
        origins = collective["origins"] or ()
        result_axes = {o["axis"] for o in origins if o["value"] == "result"}
        operand_axes = {o["axis"] for o in origins if o["value"].startswith("operand")}
        assert not origins or (axes <= operand_axes and not axes & result_axes), collective
    backward = [c for c in reducing if "transpose(" in c["op_name"] and c["axes"] == ["model"]]
    assert backward and all(c["origins"] for c in backward), backward


def test_a_combined_instructions_op_name_names_each_operation() -> None:
    """XLA's combined all-reduce names each operation it took in: ``a;b`` (0.11 on), or
    their common prefix and the rest of each in parentheses (as 0.10.2 writes the guide's
    model's gradients' one)."""
    from jxinspect.tracer.read.provenance import operation_names

    combined = "jit(step)/(transpose(jvp())/reduce_sum:transpose(jvp())/dot_general:jvp()/mul)"
    assert operation_names(combined) == [
        "jit(step)/transpose(jvp())/reduce_sum",
        "jit(step)/transpose(jvp())/dot_general",
        "jit(step)/jvp()/mul",
    ]
    assert operation_names("jit(f)/a;jit(f)/b") == ["jit(f)/a", "jit(f)/b"]
    assert operation_names("jit(step)/transpose(jvp())/dot_general") == [
        "jit(step)/transpose(jvp())/dot_general"
    ]
    assert operation_names("jit(f)/(a)") == ["jit(f)/(a)"]
    assert operation_names(None) == []
