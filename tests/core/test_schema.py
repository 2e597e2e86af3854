"""``jxinspect/schemas/report.schema.json`` against ``jxinspect.core.model``, in process.

The model never imports JAX, so these tests are fast: the schema is a valid draft
2020-12 schema shipped with the package, its enums are the model's ``Literal`` types,
and every object ``Report.to_dict()`` can write (built here fully populated) is valid,
with exactly the keys the schema requires. The JSON the command writes is validated in
``test_e2e_lower.py``.
"""

from __future__ import annotations

import copy
import typing
from typing import Any

import pytest
from helpers import REPO, assert_valid_report, report_schema, schema_errors

from jxinspect.core import model
from jxinspect.core.model import (
    ExtraArg,
    Finding,
    Input,
    Mesh,
    NestedJaxpr,
    Output,
    Report,
    Sharding,
    StaticArg,
)

SCHEMA = report_schema()
DEFS = SCHEMA["$defs"]

MESH = Mesh((("data", 4), ("model", 2)))
TILED = Sharding("tiled", (("data",), ()), MESH, replicas=2, source="sdy",
                 raw='#sdy.sharding<@mesh, [{"data"}, {}]>')  # fmt: skip
GSPMD_TILES = Sharding("tiled", ((), ()), None, tiles=(8, 1), source="gspmd",
                       raw="{devices=[8,1]<=[8]}")  # fmt: skip


def _compiled() -> Any:
    """A populated ``CompiledInfo`` (``--compile``)."""
    memory = model.MemoryStats(1024, 512, 4096, 100, 512, "xla", None)
    collective = model.Collective(
        kind="all-reduce", operands=(((128, 128), "float32"),), bytes=65536,
        axes=("data",), groups="{{0,2,4,6},{1,3,5,7}}", op_name="jit(f)/psum",
        file="/x/f.py", line=3, computation="main",
    )  # fmt: skip
    unknown = model.Collective("all-gather", (((8,), "int32"),), 32, None)
    return model.CompiledInfo(memory, (collective, unknown), ((0, 1),), ("a note",))


def full_report() -> Report:
    """A report with every kind of object and every optional field set."""
    donated = Input(
        index=0, path="state['w']", jaxpr_name="state['w']", name="state['w']", status="ok",
        shape=(8, 128), dtype="float32", sharding=TILED, donated=True, aliased_output=0,
        buffer_donor=False, memory_kind="device", main_index=1,
    )  # fmt: skip
    extra: dict[str, Any] = {}
    if hasattr(model, "CompiledInfo"):
        extra = {"compiled": _compiled()}
        donated = Input(**{**donated.__dict__, "compiled_sharding": TILED, "compiled_alias": 0})
    pruned = Input(1, "unused", "unused", None, "pruned", (100,), "bfloat16")
    synthetic = Input(2, "x", None, "flat_args[0]", "synthetic", (8, 4), "int8",
                      sharding=GSPMD_TILES, buffer_donor=True)  # fmt: skip
    return Report(
        target="f.py:f", stage="jit", reached="lowered", jax_version="0.10.2",
        platform="cpu", num_devices=8, mesh=MESH, partitioner="gspmd",
        function="f at /x/f.py:3", file="/x/f.py", line=3,
        inputs=(donated, pruned, synthetic),
        static_args=(StaticArg("n", 1, "3"), StaticArg("mode", None, "'a'")),
        outputs=(Output(0, "result['w']", "result['w']", "result['w']", "ok", (8, 128),
                        "float32", TILED, "device"),
                 Output(1, "result[1]", None, None, "missing", (), "float32",
                        Sharding("replicated", (), MESH, replicas=8, source="jax"))),
        extra_args=(ExtraArg(0, "token", "!stablehlo.token", None),),
        jaxpr=NestedJaxpr("top", "jit", "ok", "jit", "f at /x/f.py:3", ("state['w']",),
                          ("result['w']", "result[1]"), 3, 2),
        nested=(NestedJaxpr("0:scan.jaxpr", "scan", "partial", "scan", None, None, None, 2, 1),
                NestedJaxpr("1:cond.branches[0]", "cond", "missing", num_invars=1)),
        findings=(Finding("JX105", "info", "argument unused is unused", "unused", "/x/f.py", 3),
                  Finding("JX108", "error", "lowering failed")),
        error=None, notes=("simulated 8 CPU devices",), **extra,
    )  # fmt: skip


def literal(tp: Any) -> set[str]:
    return set(typing.get_args(tp))


def enum_at(*path: str) -> set[str]:
    node: Any = DEFS
    for key in path:
        node = node[key]
    return set(node["enum"])


def test_schema_is_valid_draft_2020_12() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == "jxinspect.report/1" == model.SCHEMA
    assert SCHEMA["properties"]["schema"] == {"const": "jxinspect.report/1"}


def test_schema_ships_with_the_package() -> None:
    """Found through importlib.resources, and matched by pyproject's package-data glob."""
    source = REPO / "src" / "jxinspect" / "schemas" / "report.schema.json"
    assert source.is_file()
    assert '"schemas/*.json"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_enums_are_the_model_literals() -> None:
    assert enum_at("status") == literal(model.Status)
    assert enum_at("severity") == literal(model.Severity)
    assert set(SCHEMA["properties"]["reached"]["enum"]) == literal(model.Reached)
    assert enum_at("sharding", "properties", "kind") == literal(model.ShardingKind)
    assert enum_at("nestedJaxpr", "properties", "quality") == literal(model.NestedQuality)
    hints = typing.get_type_hints(ExtraArg)
    assert enum_at("extraArg", "properties", "kind") == literal(hints["kind"])
    from jxinspect.core import vocabulary

    # None: read from StableHLO, which does not record the staging API
    assert SCHEMA["properties"]["stage"]["enum"] == [*vocabulary.STAGES, None]
    assert set(SCHEMA["properties"]["partitioner"]["enum"]) == set(vocabulary.PARTITIONERS)
    if hasattr(model, "MemoryStats"):
        source = typing.get_type_hints(model.MemoryStats)["source"]
        assert enum_at("memoryStats", "properties", "source") == literal(source)


def _objects(report: Report) -> list[tuple[str, dict[str, Any]]]:
    """(schema definition, to_dict output) for every object in ``report``."""
    data = report.to_dict()
    found: list[tuple[str, dict[str, Any]]] = [("", data)]
    found += [("input", d) for d in data["inputs"]] + [("output", d) for d in data["outputs"]]
    found += [("sharding", leaf["sharding"]) for leaf in data["inputs"] + data["outputs"]
              if leaf["sharding"]]  # fmt: skip
    found += [("staticArg", d) for d in data["static_args"]]
    found += [("extraArg", d) for d in data["extra_args"]]
    found += [("nestedJaxpr", d) for d in [data["jaxpr"], *data["nested"]]]
    found += [("finding", d) for d in data["findings"]]
    if data.get("compiled"):
        found += [("compiled", data["compiled"]), ("memoryStats", data["compiled"]["memory"])]
        found += [("collective", d) for d in data["compiled"]["collectives"]]
    return found


def test_full_report_is_valid() -> None:
    assert_valid_report(full_report().to_dict())


@pytest.mark.parametrize("definition", ["", "input", "output", "sharding", "staticArg",
                                        "extraArg", "nestedJaxpr", "finding", "compiled",
                                        "memoryStats", "collective"])  # fmt: skip
def test_required_keys_are_exactly_the_written_keys(definition: str) -> None:
    """``additionalProperties: false`` and every key required: the schema lists exactly
    what ``to_dict`` writes, so a field added to the model fails here until the schema
    says what it is."""
    node = SCHEMA if not definition else DEFS[definition]
    assert node["type"] == "object" and node["additionalProperties"] is False
    assert set(node["required"]) == set(node["properties"])
    written = [d for name, d in _objects(full_report()) if name == definition]
    if not written:
        pytest.skip(f"the model writes no {definition!r} objects")
    for data in written:
        assert set(data) == set(node["required"]), definition


def test_round_trip_of_the_full_report() -> None:
    data = full_report().to_dict()
    assert Report.from_dict(data).to_dict() == data


def _broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(full_report().to_dict())
    change(data)
    return data


@pytest.mark.parametrize(
    "name, change",
    [
        ("extra top-level key", lambda d: d.update(extra=1)),
        ("missing top-level key", lambda d: d.pop("findings")),
        ("other schema id", lambda d: d.update(schema="jxinspect.report/2")),
        ("bad reached", lambda d: d.update(reached="linked")),
        ("bad stage", lambda d: d.update(stage="vmap")),
        ("bad mesh text", lambda d: d.update(mesh="data:4")),
        ("zero devices", lambda d: d.update(num_devices=0)),
        ("bad status", lambda d: d["inputs"][0].update(status="degraded")),
        ("extra input key", lambda d: d["inputs"][0].update(color="red")),
        ("missing input key", lambda d: d["inputs"][0].pop("main_index")),
        ("shape of strings", lambda d: d["inputs"][0].update(shape=["8"])),
        ("bad sharding kind", lambda d: d["inputs"][0]["sharding"].update(kind="split")),
        ("extra sharding key", lambda d: d["inputs"][0]["sharding"].update(axes=[])),
        ("bad sharding source", lambda d: d["inputs"][0]["sharding"].update(source="xla")),
        ("bad severity", lambda d: d["findings"][0].update(severity="fatal")),
        ("bad code", lambda d: d["findings"][0].update(code="E101")),
        ("bad quality", lambda d: d["nested"][0].update(quality="good")),
        ("bad extra kind", lambda d: d["extra_args"][0].update(kind="buffer")),
        ("bool as int", lambda d: d["inputs"][0].update(donated=1)),
        ("negative bytes", lambda d: d["outputs"][0].update(bytes_per_device=-4)),
    ],
)
def test_schema_rejects(name: str, change: Any) -> None:
    assert schema_errors(_broken(change)), f"schema accepted: {name}"


def test_symbolic_shape_bytes_are_unknown_not_negative() -> None:
    """Through the Python API (the spec language has no symbolic dims)."""
    import jax
    import jax.numpy as jnp

    export = pytest.importorskip(
        "jax.export", reason="jax.export needs absl-py on JAX 0.4.x, which JAX does not install"
    )

    import jxinspect

    (b,) = export.symbolic_shape("b")
    report = jxinspect.inspect(lambda x: x * 2, args=(jax.ShapeDtypeStruct((b, 4), jnp.float32),))
    data = report.to_dict()
    assert data["inputs"][0]["shape"] == [-1, 4]
    assert data["inputs"][0]["bytes_per_device"] is None
    assert_valid_report(data)


def test_golden_json_files_are_valid() -> None:
    """The committed golden reports are examples of the schema too."""
    import json

    files = sorted((REPO / "tests" / "golden").glob("jax-*/*.json"))
    assert files
    for path in files:
        assert_valid_report(json.loads(path.read_text(encoding="utf-8")), path.name)
