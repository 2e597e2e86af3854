"""``jxinspect/schemas/*.schema.json`` against the result types, in process.

The model never imports JAX, so these tests are fast: each shipped schema is what
``jxinspect.core.schemas`` generates from the types today, a valid draft 2020-12 schema
whose enums are the model's ``Literal`` types; a fully populated report is valid, reads
back equal, and every way of breaking it is refused by the schema and by the codec
alike. The JSON the command writes is validated in ``test_e2e_lower.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import typing
from typing import Any

import pytest
from helpers import REPO, assert_valid_report, report_schema, schema_errors

from jxinspect.core import codec, model, schemas
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
TILED = Sharding("tiled", spec=(("data",), ()), mesh=MESH, replicas=2, source="sdy",
                 raw='#sdy.sharding<@mesh, [{"data"}, {}]>')  # fmt: skip
GSPMD_TILES = Sharding("tiled", spec=((), ()), mesh=None, tiles=(8, 1), source="gspmd",
                       raw="{devices=[8,1]<=[8]}")  # fmt: skip


def _compiled() -> Any:
    """A populated ``CompiledInfo`` (``--compile``)."""
    memory = model.MemoryStats(1024, 512, 4096, 100, 512, "xla", None)
    collective = model.Collective(
        kind="all-reduce", operands=(model.Operand((128, 128), "float32"),), bytes=65536,
        axes=("data",), groups=((0, 2, 4, 6), (1, 3, 5, 7)), op_name="jit(f)/psum",
        file="/x/f.py", line=3, computation="main", operand_paths=("params['w']", "result"),
        loops=("while.3", "while.7"), trip_count=12,
    )  # fmt: skip
    unknown = model.Collective("all-gather", (model.Operand((8,), "int32"),), 32, None)
    return model.CompiledInfo(memory, (collective, unknown), ((0, 1),), ("a note",),
                              flops=260.0, bytes_accessed=625.5)  # fmt: skip


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
        donated = dataclasses.replace(donated, compiled_sharding=TILED, compiled_alias=0)
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
                        Sharding("replicated", spec=(), mesh=MESH, replicas=8, source="jax"))),
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
    assert SCHEMA["properties"]["schema"]["enum"] == ["jxinspect.report/1"]


@pytest.mark.parametrize("entry", schemas.shipped(), ids=lambda e: e.file)
def test_shipped_schema_is_generated_from_the_types(entry: schemas.Shipped) -> None:
    """``python -m jxinspect.core.schemas`` writes them again after a change of a type."""
    shipped = (schemas.folder() / entry.file).read_text(encoding="utf-8")
    assert shipped == schemas.text(entry), (
        f"{entry.file} is stale: python -m jxinspect.core.schemas"
    )


def test_schema_ships_with_the_package() -> None:
    """Found through importlib.resources, and matched by pyproject's package-data glob."""
    source = REPO / "src" / "jxinspect" / "schemas" / "report.schema.json"
    assert source.is_file()
    assert '"schemas/*.json"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def _enum(node: dict[str, Any]) -> set[Any]:
    """The values an ``enum`` (or an ``anyOf`` of one and ``null``) allows."""
    if "enum" in node:
        return set(node["enum"])
    return set().union(*(_enum(option) for option in node["anyOf"] if "enum" in option))


def test_enums_are_the_model_literals() -> None:
    def at(name: str, field: str) -> set[Any]:
        return _enum(DEFS[name]["properties"][field])

    assert at("Input", "status") == literal(model.Status)
    assert at("Finding", "severity") == literal(model.Severity)
    assert _enum(SCHEMA["properties"]["reached"]) == literal(model.Reached)
    assert at("Sharding", "kind") == literal(model.ShardingKind)
    assert at("Sharding", "source") == literal(model.ShardingSource)
    assert at("NestedJaxpr", "quality") == literal(model.NestedQuality)
    assert at("ExtraArg", "kind") == literal(typing.get_type_hints(ExtraArg)["kind"])
    from jxinspect.core import vocabulary

    assert _enum(SCHEMA["properties"]["stage"]) == set(vocabulary.STAGES)
    assert SCHEMA["properties"]["stage"]["anyOf"][1] == {"type": "null"}
    assert _enum(SCHEMA["properties"]["partitioner"]) == set(vocabulary.PARTITIONERS)
    source = typing.get_type_hints(model.MemoryStats)["source"]
    assert at("MemoryStats", "source") == literal(source)


def test_every_object_requires_exactly_what_the_codec_writes() -> None:
    """``additionalProperties: false`` and every key required, in every definition."""
    data = codec.plain(full_report())
    assert set(data) == set(SCHEMA["required"]) == set(SCHEMA["properties"])
    assert SCHEMA["additionalProperties"] is False
    for name, node in DEFS.items():
        if node.get("type") == "object":
            assert node["additionalProperties"] is False, name
            assert set(node["required"]) == set(node["properties"]), name
    assert set(data["inputs"][0]) == set(DEFS["Input"]["required"])
    assert set(data["compiled"]) == set(DEFS["CompiledInfo"]["required"])


def test_full_report_is_valid() -> None:
    assert_valid_report(codec.plain(full_report()))


def test_round_trip_of_the_full_report() -> None:
    report = full_report()
    data = codec.plain(report)
    again = codec.decode(codec.dumps(report), Report, source="report.json")
    assert again == report and codec.plain(again) == data
    assert again.mesh is not None and again.abstract_mesh is False


def _broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(codec.plain(full_report()))
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
def test_schema_and_codec_reject(name: str, change: Any) -> None:
    data = _broken(change)
    assert schema_errors(data), f"schema accepted: {name}"
    if name in CODEC_TOLERATES:
        codec.convert(data, Report, source="report.json")
        return
    with pytest.raises(codec.DecodeError) as raised:
        codec.convert(data, Report, source="report.json")
    assert str(raised.value).startswith("report.json: "), str(raised.value)


CODEC_TOLERATES = {
    "extra top-level key": "a newer writer's field",
    "extra input key": "a newer writer's field",
    "extra sharding key": "a newer writer's field",
    "missing input key": "a field with a default",
    "missing top-level key": "a field with a default",
}
"""What the schema refuses but reading accepts, and why: the schema says what is written."""


def test_decode_error_names_the_file_the_path_and_the_expectation() -> None:
    data = _broken(lambda d: d["inputs"][0].update(shape=["8"]))
    with pytest.raises(codec.DecodeError) as raised:
        codec.convert(data, Report, source="saved.json")
    assert str(raised.value) == "saved.json: at $.inputs[0].shape[0]: expected `int`, got `str`"
    with pytest.raises(codec.DecodeError) as raised:
        codec.decode('{"schema": "jxinspect.report/1", "target": ', Report, source="cut.json")
    assert str(raised.value) == "cut.json: input data was truncated"
    other = _broken(lambda d: d.update(schema="jxinspect.report/2"))
    with pytest.raises(codec.DecodeError) as raised:
        codec.convert(other, Report, source="new.json")
    assert str(raised.value) == "new.json: at $.schema: invalid enum value 'jxinspect.report/2'"


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
    data = codec.plain(report)
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


def test_a_mesh_is_a_value_written_as_its_text() -> None:
    """Equal by axes, immutable, pickled and copied whole (lint workers, record), and
    read back from its text, refusing one that is not a mesh."""
    import pickle

    mesh = Mesh((("data", 4), ("model", 2)), abstract=True)
    assert pickle.loads(pickle.dumps(mesh)) == mesh == copy.deepcopy(mesh)
    assert mesh != Mesh(mesh.axes) and hash(mesh) == hash(Mesh(mesh.axes, abstract=True))
    with pytest.raises(AttributeError):
        mesh.abstract = False  # type: ignore[misc]
    assert codec.line(MESH) == '"data=4,model=2"'
    assert codec.decode('"data=4,model=2"', Mesh, source="m") == MESH
    with pytest.raises(codec.DecodeError) as raised:
        codec.decode('"data:4"', Mesh, source="m")
    assert str(raised.value) == ("m: at $: expected a mesh such as 'data=2,model=4', got 'data:4'")


def test_bytes_per_step_are_bytes_times_trips_written_and_read_again() -> None:
    """``bytes_per_step`` is derived (``bytes`` × ``trip_count``; ``bytes`` where the
    count is unknown), written for readers of the JSON and worked out again on reading."""
    looped, unknown = _compiled().collectives
    assert (looped.bytes_per_step, unknown.bytes_per_step) == (65536 * 12, 32)
    written = codec.plain(_compiled())
    assert [c["bytes_per_step"] for c in written["collectives"]] == [65536 * 12, 32]
    written["collectives"][0]["bytes_per_step"] = 0  # derived: read back, worked out again
    read = codec.decode(codec.dumps(written), model.CompiledInfo, source="test")
    assert read == _compiled() and read.collectives[0].bytes_per_step == 65536 * 12


def test_a_report_written_before_leaves_said_one_device_reads_whole() -> None:
    """A saved report of one device whose leaves do not say ``one_device`` (written
    before they did) reads each leaf whole there; on several devices, a leaf with no
    sharding stays unknown."""
    report = json.loads(codec.dumps(_leafy_report(1)))
    for leaf in (*report["inputs"], *report["outputs"]):
        del leaf["one_device"]
    read = codec.decode(json.dumps(report), Report, source="old.json")
    assert [read.inputs[0].bytes_per_device, read.outputs[0].bytes_per_device] == [1024, 1024]
    several = codec.decode(codec.dumps(_leafy_report(8)), Report, source="new.json")
    assert [several.inputs[0].shard_shape, several.outputs[0].shard_shape] == [None, None]


def _leafy_report(devices: int) -> Report:
    one = devices == 1
    leaf = {"path": "x", "status": "ok", "shape": (16, 16), "dtype": "float32", "one_device": one}
    return Report(
        target="t.py:f", stage="jit", reached="lowered", jax_version="0.10.2",
        platform="cpu", num_devices=devices,
        inputs=(Input(index=0, jaxpr_name="x", name="x", **leaf),),  # type: ignore[arg-type]
        outputs=(Output(index=0, jaxpr_path="result", name="result", **leaf),),  # type: ignore[arg-type]
    )  # fmt: skip
