"""The compiled stage (`--compile`): chosen shardings, memory, aliasing, collectives.

Each sample in sample_programs/compiled.py is compiled for real on 8 simulated CPU
devices; the mapping of replica groups to mesh axes and the memory fallback are also
tested on plain data.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from jxinspect.core.model import Mesh, Operand

COMPILED = "sample_programs/compiled.py"


def _readable(report: dict[str, Any]) -> None:
    assert report["reached"] == "compiled"
    assert report["compiled"]["unread"] is None, report["compiled"]["unread"]


def _collectives(report: dict[str, Any]) -> list[dict[str, Any]]:
    _readable(report)
    return list(report["compiled"]["collectives"])


def test_data_parallel_step_all_reduces_over_data(lower_json: Any) -> None:
    _, report = lower_json(f"{COMPILED}:dp_step", "--compile")
    found = _collectives(report)
    assert found, "a data-parallel gradient needs an all-reduce"
    assert {c["kind"] for c in found} == {"all-reduce"}
    assert all(c["axes"] == ["data"] for c in found)
    assert all(c["file"].endswith("compiled.py") and c["line"] > 0 for c in found)
    assert report["compiled"]["collective_bytes_by_axes"]["data"] == sum(c["bytes"] for c in found)
    memory = report["compiled"]["memory"]
    assert memory["source"] == "xla" and memory["arguments"] > 0


def test_tensor_parallel_mlp_reduces_over_model(lower_json: Any) -> None:
    _, report = lower_json(f"{COMPILED}:tp_mlp", "--compile")
    found = _collectives(report)
    assert found and all(c["axes"] == ["model"] for c in found)
    assert {c["kind"] for c in found} <= {"all-reduce", "reduce-scatter", "all-gather"}
    w_in = report["inputs"][1]
    assert w_in["compiled_sharding"]["readable"] == "P(None, 'model')"
    assert w_in["shard_shape"] == [128, 128]


def test_fsdp_layer_all_gathers_the_weight_over_fsdp(lower_json: Any) -> None:
    _, report = lower_json(f"{COMPILED}:fsdp_layer", "--compile")
    gathers = [c for c in _collectives(report) if c["kind"] == "all-gather"]
    assert gathers and gathers[0]["axes"] == ["fsdp"]
    assert gathers[0]["operands"][0]["shape"] == [32, 256]  # one fsdp shard of w


def test_output_sharding_chosen_by_the_compiler(lower_json: Any, lower_text: Any) -> None:
    _, report = lower_json(f"{COMPILED}:chosen_output", "--compile")
    out = report["outputs"][0]
    assert out["sharding"] is None
    assert out["compiled_sharding"]["kind"] == "tiled"
    assert out["shard_shape"] != out["shape"]
    text = lower_text(f"{COMPILED}:chosen_output", "--compile").stdout
    assert "(chosen)" in text


def test_unusable_donation_is_not_aliased(lower_json: Any) -> None:
    _, report = lower_json(f"{COMPILED}:bad_donation", "--compile")
    scratch = report["inputs"][1]
    assert scratch["donated"] is True
    assert scratch["compiled_alias"] is None
    assert report["compiled"]["aliases"] == []


def test_unusable_donations_are_jx301_with_the_reason(lower_json: Any) -> None:
    _, report = lower_json(f"{COMPILED}:bad_donation", "--compile")
    (jx301,) = [f for f in report["findings"] if f["code"] == "JX301"]
    assert jx301["path"] == "scratch" and "no output is f32[8]" in jx301["message"]
    _, report = lower_json(f"{COMPILED}:reshard_donation", "--compile")
    found = [f for f in report["findings"] if f["code"] == "JX301"]
    if report["inputs"][0]["compiled_alias"] is not None:
        assert found == []  # 0.9's XLA reuses a buffer of the same size in another layout
        return
    (jx301,) = found
    assert "per-shard shapes differ: f32[8,32] per device" in jx301["message"]
    assert "f32[64,4]" in jx301["message"]


def test_usable_donation_is_aliased(lower_json: Any) -> None:
    _, report = lower_json("sample_programs/sharded.py:update", "--compile")
    _readable(report)
    state = [leaf for leaf in report["inputs"] if leaf["path"].startswith("state")]
    assert state and all(leaf["compiled_alias"] is not None for leaf in state)
    assert sorted(leaf["compiled_alias"] for leaf in state) == list(range(len(state)))


def test_show_collectives_table(lower_text: Any) -> None:
    text = lower_text(f"{COMPILED}:dp_step", "--show", "collectives").stdout
    assert "collectives (" in text
    assert "all-reduce  data" in text
    assert "per axis: data" in text


def test_not_compiled_without_the_flag(lower_json: Any) -> None:
    _, report = lower_json(f"{COMPILED}:dp_step")
    assert report["reached"] == "lowered" and report["compiled"] is None


MESH = Mesh((("data", 2), ("model", 4)))


@pytest.mark.parametrize(
    ("groups", "axes"),
    [
        ([[0, 4], [1, 5], [2, 6], [3, 7]], ("data",)),
        ([[0, 1, 2, 3], [4, 5, 6, 7]], ("model",)),
        ([[3, 2, 1, 0], [7, 6, 5, 4]], ("model",)),
        ([list(range(8))], ("data", "model")),
        ([[i] for i in range(8)], ()),
        ([[0, 1], [2, 3], [4, 5], [6, 7]], ("model:(2)2",)),  # the minor half of `model`
        ([[0, 2], [1, 3], [4, 6], [5, 7]], ("model:(1)2",)),  # its major half
        ([[0, 1, 4, 5], [2, 3, 6, 7]], ("data", "model:(2)2")),
        ([[0, 5], [1, 4], [2, 7], [3, 6]], None),  # along no axis nor part of one
    ],
)
def test_replica_groups_map_to_mesh_axes(groups: list[list[int]], axes: Any) -> None:
    from jxinspect.tracer.read.replica_groups import axes_of_groups

    assert axes_of_groups(groups, MESH) == axes


def test_memory_fallback_when_the_backend_reports_nothing() -> None:
    from jxinspect.tracer.read.compiled import memory_from_stats

    zeros = SimpleNamespace(argument_size_in_bytes=0, output_size_in_bytes=0,
                            temp_size_in_bytes=0, generated_code_size_in_bytes=0,
                            alias_size_in_bytes=0)  # fmt: skip
    for stats in (None, zeros, SimpleNamespace(argument_size_in_bytes=-1)):
        memory = memory_from_stats(stats, (1024, 256))
        assert memory.source == "estimate"
        assert (memory.arguments, memory.outputs) == (1024, 256)
        assert memory.temporaries is None and memory.note
    real = SimpleNamespace(argument_size_in_bytes=10, output_size_in_bytes=4,
                           temp_size_in_bytes=2, generated_code_size_in_bytes=-1,
                           alias_size_in_bytes=0)  # fmt: skip
    memory = memory_from_stats(real, (1024, 256))
    assert memory.source == "xla"
    assert (memory.arguments, memory.outputs, memory.temporaries) == (10, 4, 2)
    assert memory.generated_code is None


ASYNC_HLO = """
HloModule m, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%inner (p: f32[4,16]) -> f32[4,16] {
  %p = f32[4,16] parameter(0)
  ROOT %ar = f32[4,16] all-reduce(%p), channel_id=3, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=%add
}

ENTRY %main (x: f32[2,16], y: f32[4,16]) -> (f32[8,16], f32[4,16], f32[4,16]) {
  %x = f32[2,16] parameter(0)
  %y = f32[4,16] parameter(1)
  %ags = (f32[2,16], f32[8,16]) all-gather-start(%x), channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, dimensions={0}, use_global_device_ids=true, metadata={op_name="jit(f)/all_gather" source_file="/tmp/user.py" source_line=12}
  %agd = f32[8,16] all-gather-done(%ags)
  %cp = f32[4,16] collective-permute(%y), channel_id=2, source_target_pairs={{0,4},{4,0},{1,5},{5,1},{2,6},{6,2},{3,7},{7,3}}
  %c = f32[4,16] call(%y), to_apply=%inner
  ROOT %t = (f32[8,16], f32[4,16], f32[4,16]) tuple(%agd, %cp, %c)
}
"""


def test_async_pairs_called_computations_and_permutes_from_hlo_text() -> None:
    """An async all-gather counts once, an all-reduce in a called computation is found,
    iota replica groups and permute pairs map to axes, and old-style source metadata is read."""
    from jxinspect.tracer.read import hlo_text
    from jxinspect.tracer.read.compiled import read_collectives

    found = read_collectives(hlo_text.parse(ASYNC_HLO), MESH)
    by_kind = {c.kind: c for c in found}
    assert sorted(by_kind) == ["all-gather", "all-reduce", "collective-permute"]
    assert len(found) == 3
    gather = by_kind["all-gather"]
    assert gather.axes == ("model",)
    assert gather.operands == (Operand((2, 16), "float32"),) and gather.bytes == 2 * 16 * 4
    assert (gather.op_name, gather.file, gather.line) == ("jit(f)/all_gather", "/tmp/user.py", 12)
    assert by_kind["all-reduce"].axes == ("data",) and by_kind["all-reduce"].computation == "inner"
    assert by_kind["collective-permute"].axes == ("data",)
    assert by_kind["collective-permute"].pairs[:2] == ((0, 4), (4, 0))
    assert by_kind["all-reduce"].groups == ((0, 4), (1, 5), (2, 6), (3, 7))


SCAN = """
import jax, jax.numpy as jnp


def f(x):
    def body(c, _):
        c = c * 0.5 + jnp.sum(jnp.tanh(x * c))
        return c, None

    c, _ = jax.lax.scan(body, jnp.float32(1.0), None, length=4)
    return c


JXINSPECT = {"f": {"args": "f32[64@data,16]", "mesh": "data=8"}}
"""

RAW_SCAN = """
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp, re
from jax.sharding import NamedSharding, PartitionSpec as P
sys.path.insert(0, ".")
from scanned import f
mesh = jax.make_mesh((8,), ("data",), **({"axis_types": (jax.sharding.AxisType.Auto,)}
                                          if hasattr(jax.sharding, "AxisType") else {}))
x = jax.ShapeDtypeStruct((64, 16), jnp.float32, sharding=NamedSharding(mesh, P("data")))
text = jax.jit(f).lower(x).compile().as_text()
print(len(re.findall(r"= \\S+ all-reduce(?:-start)?\\(", text)))
"""


def test_a_collective_in_a_scan_body_counts_once(tmp_path: Any, run_cli: Any) -> None:
    """The module converted from HLO holds a while body twice (its function, and
    inlined in the ``while``): each collective instruction is counted once, as the
    compiled HLO of raw JAX has it."""
    from helpers import run_python

    (tmp_path / "scanned.py").write_text(SCAN, encoding="utf-8")
    raw = run_python(RAW_SCAN, cwd=tmp_path, warm=True)
    assert raw.returncode == 0, raw.describe()
    result = run_cli("lower", "scanned.py:f", "--compile", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.describe()
    import json

    report = json.loads(result.stdout)
    found = [c for c in _collectives(report) if c["kind"] == "all-reduce"]
    assert len(found) == int(raw.stdout.strip().splitlines()[-1]) == 1
    assert len(found[0]["loops"]) == 1 and found[0]["line"] is not None


def test_flows_of_async_pairs_called_computations_and_permutes() -> None:
    """What each collective of :data:`ASYNC_HLO` moves: an async all-gather from a
    parameter to an output, an all-reduce in a called computation from the caller's
    parameter to the output its call feeds; none runs in a loop."""
    from jxinspect.tracer.read import hlo_flow, hlo_text

    module = hlo_text.parse(ASYNC_HLO)
    assert hlo_text.parameter_names(module) == [None, None]
    got = {f.kind: (f.parameters, f.outputs, f.loops, f.trip_count) for f in hlo_flow.flows(module)}
    assert got == {
        "all-gather": ((0,), (0,), (), 1),
        "collective-permute": ((1,), (1,), (), 1),
        "all-reduce": ((1,), (2,), (), 1),
    }


LOOPS_HLO = """
HloModule loops, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%moved (param_0: f32[4,16]) -> f32[64] {
  %param_0 = f32[4,16]{1,0} parameter(0)
  %t = f32[16,4]{0,1} transpose(%param_0), dimensions={1,0}
  ROOT %r = f32[64]{0} reshape(%t)
}

%inner_body (p: (s32[], f32[4,16], f32[64])) -> (s32[], f32[4,16], f32[64]) {
  %p = (s32[], f32[4,16]{1,0}, f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %w = f32[4,16]{1,0} get-tuple-element(%p), index=1
  %f = f32[64]{0} fusion(%w), kind=kLoop, calls=%moved
  %ar = f32[64]{0} all-reduce(%f), channel_id=7, replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=%add, metadata={op_name="jit(f)/psum"}
  ROOT %tup = (s32[], f32[4,16]{1,0}, f32[64]{0}) tuple(%i, %w, %ar)
}

%inner_cond (q: (s32[], f32[4,16], f32[64])) -> pred[] {
  %q = (s32[], f32[4,16]{1,0}, f32[64]{0}) parameter(0)
  ROOT %c = pred[] constant(true)
}

%outer_body (o: (s32[], f32[4,16], f32[64])) -> (s32[], f32[4,16], f32[64]) {
  %o = (s32[], f32[4,16]{1,0}, f32[64]{0}) parameter(0)
  ROOT %inner = (s32[], f32[4,16]{1,0}, f32[64]{0}) while(%o), condition=%inner_cond, body=%inner_body
}

%outer_cond (oc: (s32[], f32[4,16], f32[64])) -> pred[] {
  %oc = (s32[], f32[4,16]{1,0}, f32[64]{0}) parameter(0)
  ROOT %d = pred[] constant(true)
}

ENTRY %main (x: f32[4,16], z: f32[64]) -> f32[64] {
  %x = f32[4,16]{1,0} parameter(0), metadata={op_name="params['w']"}
  %z = f32[64]{0} parameter(1), metadata={op_name="z"}
  %zero = s32[] constant(0)
  %init = (s32[], f32[4,16]{1,0}, f32[64]{0}) tuple(%zero, %x, %z)
  %outer = (s32[], f32[4,16]{1,0}, f32[64]{0}) while(%init), condition=%outer_cond, body=%outer_body, backend_config={"known_trip_count":{"n":"3"}}
  %last = f32[64]{0} get-tuple-element(%outer), index=2
  ROOT %out = f32[64]{0} copy(%last)
}
"""


def test_flows_through_nested_loops_and_a_moving_fusion() -> None:
    """A collective in a loop inside a loop: its operand is a transposed, reshaped loop
    invariant (the entry's ``params['w']``), its result the loop's last value and the
    program's output; the inner loop's count is unknown, so the trips are."""
    from jxinspect.tracer.read import hlo_flow, hlo_text

    module = hlo_text.parse(LOOPS_HLO)
    assert hlo_text.parameter_names(module) == ["params['w']", "z"]
    (flow,) = hlo_flow.flows(module)
    assert (flow.kind, flow.instruction.channel, flow.instruction.op_name) == (
        "all-reduce",
        7,
        "jit(f)/psum",
    )
    assert (flow.parameters, flow.outputs) == ((0,), (0,))
    assert (flow.loops, flow.trip_count) == (("outer", "inner"), None)
    known = LOOPS_HLO.replace(
        "body=%inner_body", 'body=%inner_body, backend_config={"known_trip_count":{"n":"5"}}'
    )
    assert hlo_flow.flows(hlo_text.parse(known))[0].trip_count == 15
