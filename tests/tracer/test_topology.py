"""``lower --compile --topology NAME``: compiled for a TPU that is not here, by libtpu, equal
to raw JAX's own ahead-of-time compile of the same function for the same topology.

Four programs (data parallel, FSDP, tensor parallel with a reshard, a scan over layers)
on two generations: each is compiled by ``jxinspect lower --memory --format json`` and,
in another process, by plain JAX (``jax.experimental.topologies``, a ``Mesh`` over its
devices, ``ShapeDtypeStruct``s, ``jit(f).lower(...).compile()``), which prints its
``memory_analysis()``, ``cost_analysis()`` and ``as_text()`` and has XLA dump the same
compile: memory per kind, FLOPs, bytes accessed and each collective (kind, bytes, groups,
read by the tests' own reader) must be the same, and the temporaries live at the peak
those of XLA's own live ranges (the TPU's executable keeps no buffer assignment: jxinspect
reads the one its compile dumps). Where libtpu is not installed these skip, saying so
(CI's newest leg installs it: the ``tpu`` extra); the error a user without it gets is
tested everywhere else.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import JAX_RELEASE, RAW_LIBTPU, REPO, WARM_PYTHON, run_python
from hlo_reading import BYTES, dumped_peak, independent

from jxinspect.tracer.seam import libtpu_version

HAS_LIBTPU = libtpu_version() is not None
needs_libtpu = pytest.mark.skipif(not HAS_LIBTPU, reason="libtpu is not installed (the tpu extra)")

PROGRAMS = """
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def dp_step(params, batch):
    def loss(p):
        return ((batch["x"] @ p["w"] + p["b"] - batch["y"]) ** 2).mean()

    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def fsdp_layer(x, w):
    return jnp.tanh(x @ w)


def wide_layer(x, w):
    return jnp.tanh(x @ w)


def tp_resharded(x, w_in, w_out):
    h = jax.nn.relu(x @ w_in)
    h = jax.sharding.reshard(h, P("data", None))
    return h @ w_out


def scan_layers(x, ws):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    h, _ = jax.lax.scan(layer, x, ws)
    return h.sum()
"""

CASES: dict[str, tuple[str, str]] = {
    "dp_step": ("data=4", "{'w': f32[256,128], 'b': f32[128]}, "
                          "{'x': f32[512@data,256], 'y': f32[512@data,128]}"),
    "fsdp_layer": ("fsdp=4", "f32[512@fsdp,1024], f32[1024@fsdp,1024]"),
    "tp_resharded": ("data=2,model=2", "f32[256@data,512], f32[512,2048@model], "
                                       "f32[2048,512@model]"),
    "scan_layers": ("fsdp=4", "f32[256@fsdp,512], f32[4,512@fsdp,512]"),
}  # fmt: skip
"""Each program's mesh and inputs, as ``lower`` takes them."""

RAW = """
import json, sys
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, AxisType
sys.path.insert(0, ".")
import programs

topology = topologies.get_topology_desc(platform="tpu", topology_name=sys.argv[1])
def mesh_of(axes):  # as jax.make_mesh lays them out; a v4's devices (per core) as listed
    sizes, names = tuple(axes.values()), tuple(axes)
    chosen = topology.devices[: int(np.prod(sizes))]
    types = {"axis_types": (AxisType.Explicit,) * len(axes)}
    try:
        return jax.make_mesh(sizes, names, devices=chosen, **types)
    except AssertionError:
        return Mesh(np.array(chosen).reshape(sizes), names, **types)
def A(mesh, shape, *spec):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(mesh, P(*spec)))
def inputs(name, m):
    if name == "dp_step":
        return ({"w": A(m, (256, 128)), "b": A(m, (128,))},
                {"x": A(m, (512, 256), "data"), "y": A(m, (512, 128), "data")})
    if name == "fsdp_layer":
        return A(m, (512, 1024), "fsdp"), A(m, (1024, 1024), "fsdp")
    if name == "tp_resharded":
        return (A(m, (256, 512), "data"), A(m, (512, 2048), None, "model"),
                A(m, (2048, 512), None, "model"))
    return A(m, (256, 512), "fsdp"), A(m, (4, 512, 512), None, "fsdp")
AXES = {"dp_step": {"data": 4}, "fsdp_layer": {"fsdp": 4},
        "tp_resharded": {"data": 2, "model": 2}, "scan_layers": {"fsdp": 4}}
facts = {"devices": len(topology.devices), "kind": topology.devices[0].device_kind}
with jax.default_device(topology.devices[0]):  # what the compiler says a device has
    try:
        jax.jit(lambda x: x).lower(jax.ShapeDtypeStruct((2**40,), jnp.int8)).compile()
    except Exception as err:
        facts["refusal"] = str(err)
for name, axes in AXES.items():
    mesh = mesh_of(axes)
    with jax.set_mesh(mesh):
        lowered = jax.jit(getattr(programs, name)).lower(*inputs(name, mesh))
    compiled = lowered.compile()
    dump = f"dump-{name}"  # XLA's own record of the same compile: the live set's oracle
    lowered.compile(compiler_options={"xla_dump_to": dump})
    stats = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    facts[name] = {
        "memory": {"arguments": stats.argument_size_in_bytes,
                   "outputs": stats.output_size_in_bytes,
                   "temporaries": stats.temp_size_in_bytes,
                   "generated_code": stats.generated_code_size_in_bytes,
                   "aliased": stats.alias_size_in_bytes},
        "peak": getattr(stats, "peak_memory_in_bytes", None),
        "flops": cost.get("flops"), "bytes_accessed": cost.get("bytes accessed"),
        "text": compiled.as_text(),
        "ids": [d.id for d in mesh.devices.flat],
        "dump": dump,
    }
print(json.dumps(facts))
"""

TOPOLOGIES = ("v5e:2x2", "v4:2x2x1")


@pytest.fixture(scope="module", params=TOPOLOGIES)
def compiled(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, run_cli: Any
) -> tuple[str, dict[str, Any], dict[str, Any], Path]:
    """(topology, jxinspect's report per program, raw JAX's facts per program, the folder
    of XLA's dumps)."""
    if not HAS_LIBTPU:
        pytest.skip("libtpu is not installed (the tpu extra)")
    topology = request.param
    folder = tmp_path_factory.mktemp("topology")
    (folder / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    raw = run_python(RAW.replace("sys.argv[1]", repr(topology)), cwd=folder, env=RAW_LIBTPU)
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout.strip().splitlines()[-1])
    reports = {}
    for name, (mesh, args) in CASES.items():
        result = run_cli("lower", f"programs.py:{name}", "--topology", topology, "--mesh", mesh,
                         "--args", args, "--compile", "--memory", "--format", "json",
                         cwd=folder)  # fmt: skip
        assert result.returncode in (0, 1), result.describe()
        reports[name] = json.loads(result.stdout)
    return topology, reports, facts, folder


@needs_libtpu
@pytest.mark.parametrize("name", CASES)
def test_the_compile_is_raw_jaxs_own_for_that_topology(
    name: str, compiled: tuple[str, dict[str, Any], dict[str, Any], Path]
) -> None:
    topology, reports, facts, folder = compiled
    report, raw = reports[name], facts[name]
    assert report["platform"] == "tpu" and report["reached"] == "compiled"
    assert report["topology"]["name"] == topology
    assert report["topology"]["device_kind"] == facts["kind"]
    assert report["topology"]["devices"] == facts["devices"]
    assert report["topology"]["compiler"] == f"libtpu {libtpu_version()}"
    said = re.search(r"available HBM \(([\d.]+)G\)", facts["refusal"])
    assert said, facts["refusal"]
    assert report["topology"]["hbm"] == round(float(said.group(1)) * 2**30)
    info = report["compiled"]
    memory = {kind: info["memory"][kind] for kind in raw["memory"]}
    assert memory == raw["memory"]
    assert (info["flops"], info["bytes_accessed"]) == (raw["flops"], raw["bytes_accessed"])
    peak = info["peak"]
    assert peak["unread"] is None, peak["unread"]
    want, regions, _ = dumped_peak(folder / raw["dump"])
    temporaries = [b for b in peak["buffers"] if b["kind"] in ("temporary", "collective")]
    assert sum(b["bytes"] for b in temporaries) == want
    assert sorted(b["bytes"] for b in temporaries) == sorted(r[2] for r in regions)
    kinds = {kind: sum(b["bytes"] for b in peak["buffers"] if b["kind"] == kind)
             for kind in ("argument", "result")}  # fmt: skip
    assert kinds == {"argument": raw["memory"]["arguments"], "result": raw["memory"]["outputs"]}
    # HBM: its buffers and the code the chip loads there; each on-chip space apart, its
    # temporaries those live at its own peak in XLA's live ranges of that colour
    assert peak["code"] == raw["memory"]["generated_code"] > 0
    assert peak["bytes"] == sum(b["bytes"] for b in peak["buffers"]) + peak["code"]
    for space in peak["on_chip"]:
        assert space["number"] != 0 and space["bytes"] > 0, space
        want, regions, _ = dumped_peak(folder / raw["dump"], space["number"])
        live = [b["bytes"] for b in space["buffers"] if b["kind"] in ("temporary", "collective")]
        assert sum(live) == want, space["space"]
        assert sorted(live) == sorted(r[2] for r in regions)
    hlo = independent(raw["text"], total=len(raw["ids"]))
    got = info["collectives"]
    assert got is not None, info["unread"]
    assert Counter(c["kind"] for c in got) == Counter(c["kind"] for c in hlo["collectives"])
    ids = raw["ids"]
    theirs = {c["instruction"]: c for c in hlo["collectives"]}
    for c in got:
        mine = theirs[c["instruction"]]
        assert (c["kind"], c["bytes"]) == (mine["kind"], mine["bytes"])
        assert {frozenset(g) for g in c["groups"]} == {
            frozenset(ids[d] for d in g) for g in mine["groups"]
        }


@needs_libtpu
def test_each_program_moves_what_its_sharding_says(
    compiled: tuple[str, dict[str, Any], dict[str, Any], Path],
) -> None:
    """Not a vacuous comparison: the TPU's partitioner gathers the FSDP weight, reduces
    the data-parallel gradient, gathers the resharded activation over ``model``, gathers
    each of the four scanned layers' weights once per trip; the FSDP gather's buffer is
    live at the peak."""
    _, reports, _, _ = compiled

    def kinds(name: str) -> set[tuple[str, tuple[str, ...]]]:
        return {(c["kind"], tuple(c["axes"])) for c in reports[name]["compiled"]["collectives"]}

    assert ("all-reduce", ("data",)) in kinds("dp_step")
    assert ("all-gather", ("fsdp",)) in kinds("fsdp_layer")
    assert ("all-gather", ("model",)) in kinds("tp_resharded")
    assert any("w" in c["operand_paths"] for c in reports["fsdp_layer"]["compiled"]["collectives"])
    (layer,) = [c for c in reports["scan_layers"]["compiled"]["collectives"] if c["loops"]]
    assert layer["trip_count"] == 4, layer  # a TPU's loop carries no count: read from it
    assert layer["bytes_per_step"] == 4 * layer["bytes"]
    peak = reports["fsdp_layer"]["compiled"]["peak"]  # the gathered weight: in VMEM
    live = peak["buffers"] + [b for s in peak["on_chip"] for b in s["buffers"]]
    assert any(b["kind"] == "collective" for b in live), live


@needs_libtpu
def test_the_header_names_the_chip_and_libtpu(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    mesh, args = CASES["fsdp_layer"]
    result = run_cli("lower", "programs.py:fsdp_layer", "--topology", "v5e:2x2", "--mesh", mesh,
                     "--args", args, "--compile", "--devices", "8", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert ("topology:     TPU v5 lite, v5e:2x2 (4 devices, 15.8 GiB HBM each), "
            f"libtpu {libtpu_version()}; "
            "not run") in result.stdout  # fmt: skip
    assert "platform:     tpu, 4 devices" in result.stdout
    assert "8 CPU devices were not simulated: compiled over the devices of v5e:2x2" in (
        result.stdout
    )
    assert result.stderr == ""  # libtpu's start-up lines kept out of the terminal


@needs_libtpu
def test_diff_debug_names_the_topology_each_side_was_compiled_for(
    tmp_path: Path, run_cli: Any
) -> None:
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    mesh, args = CASES["fsdp_layer"]
    result = run_cli("diff-debug", "programs.py:fsdp_layer", "programs.py:fsdp_layer",
                     "--topology", "v5e:2x2", "--mesh", mesh, "--args", args, "--compile",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    chip = f"TPU v5 lite, v5e:2x2 (4 devices, 15.8 GiB HBM each), libtpu {libtpu_version()}"
    [row] = [line for line in result.stdout.splitlines() if line.strip().startswith("topology")]
    assert row.split() == ["topology", *f"{chip}; not run".split(), *f"{chip}; not run".split()]


OFFLOAD = """
import jax, jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name


def layer(w, x):
    h = checkpoint_name(jnp.tanh(x @ w), "h")
    return jnp.sum(jnp.tanh(h @ w) ** 2)


POLICY = jax.checkpoint_policies.save_and_offload_only_these_names(
    names_which_can_be_saved=[], names_which_can_be_offloaded=["h"],
    offload_src="device", offload_dst="pinned_host")


def grads(w, x):
    return jax.grad(jax.checkpoint(layer, policy=POLICY))(w, x)
"""


@needs_libtpu
def test_an_offload_the_tpu_compiler_applies_is_no_finding(tmp_path: Path, run_cli: Any) -> None:
    """The remat policy offloads ``h`` (f32[64,256]): libtpu keeps exactly its bytes in
    host memory (XLA's memory analysis) and JX308 is silent; on the CPU it fires."""
    (tmp_path / "offload.py").write_text(OFFLOAD, encoding="utf-8")
    flags = ("lower", "offload.py:grads", "--args", "f32[256,256], f32[64,256]", "--compile",
             "--format", "json")  # fmt: skip
    reports = {
        where: json.loads(run_cli(*flags, *extra, cwd=tmp_path).stdout)
        for where, extra in (("tpu", ("--topology", "v5e:2x2")), ("cpu", ()))
    }
    for report in reports.values():
        assert [(o["name"], o["bytes"]) for o in report["compiled"]["offloads"]] == [("h", 65536)]
    assert reports["tpu"]["compiled"]["memory"]["host"] == 65536
    assert reports["cpu"]["compiled"]["memory"]["host"] == 0
    codes = {where: [f["code"] for f in r["findings"]] for where, r in reports.items()}
    assert "JX308" not in codes["tpu"] and "JX308" in codes["cpu"]


@needs_libtpu
def test_a_name_libtpu_refuses_is_its_own_words(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    result = run_cli("lower", "programs.py:fsdp_layer", "--topology", "bogus", "--args",
                     "f32[8,4], f32[4,4]", "--compile", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert result.stderr.startswith("error: --topology bogus: libtpu says: ")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(HAS_LIBTPU, reason="libtpu is installed: the error is for a machine without")
def test_without_libtpu_one_line_names_the_extra(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    result = run_cli("lower", "programs.py:fsdp_layer", "--topology", "v5e:2x2", "--args",
                     "f32[8,4], f32[4,4]", "--compile", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert result.stderr.strip().splitlines() == [
        "error: --topology v5e:2x2: compiling for a TPU needs libtpu, which is not installed: "
        f'pip install "jxinspect[tpu]" (or "jax[tpu]=={JAX_RELEASE}")'
    ]


@pytest.mark.parametrize(
    ("flags", "clash"),
    [
        (("--abstract",), "--abstract (lowering without devices)"),
        (("--platform", "cpu"), "--platform cpu"),
    ],
)
def test_options_that_cannot_go_with_a_topology_are_named(
    flags: tuple[str, ...], clash: str, tmp_path: Path, run_cli: Any
) -> None:
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    result = run_cli("lower", "programs.py:fsdp_layer", "--topology", "v5e:2x2", "--args",
                     "f32[8,4], f32[4,4]", *flags, cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert result.stderr.strip() == (
        f"error: --topology v5e:2x2 compiles over that TPU topology's devices; {clash} "
        "cannot go with it: leave one out"
    )


LINT = """
budgets:
  hbm_fraction: 50%
targets:
  - target: programs.py:fsdp_layer
    topology: v5e:2x2
    compile: true
    args: "f32[1024,49152], f32[49152,49152]"
  - target: programs.py:wide_layer
    topology: v5e:2x2
    compile: true
    args: "f32[1024,65536], f32[65536,65536]"
"""


@needs_libtpu
def test_lint_fails_a_target_that_does_not_fit_or_is_over_its_share(
    tmp_path: Path, run_cli: Any
) -> None:
    """A 9 GiB weight is over half a v5e's HBM (the budget: lint reads what the program
    allocates to run, the peak's figure on a TPU);
    a 16 GiB one does not fit at all: the compiler's refusal, its figures quoted. Both fail
    the gate (exit 1)."""
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text(LINT, encoding="utf-8")
    result = run_cli("lint", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.describe()
    found = [
        finding["message"]
        for target in json.loads(result.stdout)["targets"]
        for finding in target["findings"]
        if finding["code"] == "JX307"
    ]
    assert len(found) == 2, found
    over, refused = sorted(found)
    assert over == ("9.4 GiB per device (allocated to run it) is over 50% of a TPU v5 lite's "
                    "15.8 GiB of HBM (budgets.hbm_fraction); largest there: w 9.0 GiB, "
                    "x 192.0 MiB, result 192.0 MiB")  # fmt: skip
    assert refused.startswith(
        "does not fit in a TPU v5 lite: the program needs 16.5 GiB per device and the chip "
        "has 15.8 GiB (its compiler refused it)"
    )


@needs_libtpu
def test_a_recorded_call_replays_for_a_topology(tmp_path: Path, run_cli: Any) -> None:
    """A real run recorded on 8 simulated CPU devices, its step replayed for a TPU v4
    topology of 8 devices (``--args-from-record``): its mesh, shardings and donation."""
    train = REPO / "sample_programs" / "record" / "train.py"
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, str(train), "--steps",
                       "1", cwd=tmp_path)  # fmt: skip
    assert recorded.returncode == 0, recorded.describe()
    replay = ("--args-from-record", "runs/train_step", "--topology", "v4:2x2x1")
    result = run_cli("lower", f"{train}:train_step", *replay, "--compile", "--format", "json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert (report["reached"], report["platform"], report["num_devices"]) == ("compiled", "tpu", 8)
    assert report["topology"]["name"] == "v4:2x2x1"
    assert report["mesh"] == "data=4,model=2"
    donated = [leaf for leaf in report["inputs"] if leaf["donated"]]
    assert donated and all(leaf["compiled_alias"] is not None for leaf in donated)


@needs_libtpu
def test_with_libtpu_installed_a_cpu_program_starts_quietly(tmp_path: Path, run_cli: Any) -> None:
    """libtpu installed and no TPU here: plain JAX's start writes libtpu's errors to the
    terminal; jxinspect's own processes tell libtpu there is no host to find."""
    (tmp_path / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    anywhere = {"JAX_PLATFORMS": ""}  # JAX looks for a TPU first (the tests' runs say cpu)
    result = run_cli("lower", "programs.py:fsdp_layer", "--args", "f32[8,4], f32[4,4]",
                     "--compile", cwd=tmp_path, subprocess=True, env=anywhere)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert "platform:     cpu, 1 device" in result.stdout
    assert result.stderr == ""


SLICED = """
import jax.numpy as jnp


def reduce_rows(x):
    return jnp.sum(jnp.sin(x), axis=0)
"""

RAW_SLICED = """
import json, sys
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import mesh_utils, topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, AxisType
sys.path.insert(0, ".")
import programs, sliced

devices = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2",
                                       num_slices=2).devices
def A(mesh, shape, *spec):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(mesh, P(*spec)))
CASES = {  # mesh axes, the slices each spans, the function, its inputs
    "whole": ({"data": 2, "fsdp": 4}, (2, 1), programs.dp_step,
              lambda m: ({"w": A(m, (256, 128), "fsdp"), "b": A(m, (128,))},
                         {"x": A(m, (512, 256), "data"), "y": A(m, (512, 128), "data")})),
    "split": ({"data": 4, "fsdp": 2}, (2, 1), programs.dp_step,
              lambda m: ({"w": A(m, (256, 128), "fsdp"), "b": A(m, (128,))},
                         {"x": A(m, (512, 256), "data"), "y": A(m, (512, 128), "data")})),
    "rows": ({"data": 2, "a": 2, "b": 2}, (2, 1, 1), sliced.reduce_rows,
             lambda m: (A(m, (64, 256), ("data", "a")),)),
}
facts = {}
for name, (axes, split, fun, inputs) in CASES.items():
    within = tuple(size // n for size, n in zip(axes.values(), split))
    grid = mesh_utils.create_hybrid_device_mesh(within, split, devices)
    mesh = Mesh(grid, tuple(axes), axis_types=(AxisType.Explicit,) * len(axes))
    with jax.set_mesh(mesh):
        compiled = jax.jit(fun).lower(*inputs(mesh)).compile()
    stats = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    facts[name] = {
        "memory": [stats.argument_size_in_bytes, stats.output_size_in_bytes,
                   stats.temp_size_in_bytes],
        "flops": cost.get("flops"), "text": compiled.as_text(),
        "ids": [d.id for d in mesh.devices.flat],
        "slices": [d.slice_index for d in mesh.devices.flat],
    }
print(json.dumps(facts))
"""

FSDP_STEP = CASES["dp_step"][1].replace("256,", "256@fsdp,", 1)
SLICED_CASES = {
    "whole": ("programs.py:dp_step", "data=2,fsdp=4", FSDP_STEP),
    "split": ("programs.py:dp_step", "data=4,fsdp=2", FSDP_STEP),
    "rows": ("sliced.py:reduce_rows", "data=2,a=2,b=2", "f32[64@(data,a),256]"),
}
"""Each multi-slice case (``--topology v5e:2x2 --slices 2``): target, mesh, inputs."""


def _across_slices(text: str) -> list[dict[str, Any]]:
    """The test's own reading of a multi-slice program's transfers across slices: each
    ``send`` to libtpu's data-center runtime, its kind, data bytes and device-id groups."""
    found = []
    for line in text.splitlines():
        match = re.match(r"^\s*%(\S+) = \((\w+)\[([\d,]*)\]\S*, .* send\(.*"
                         r'_xla_megascale_transfer_type="?(\w+)', line)  # fmt: skip
        if not match:
            continue
        name, dtype, dims, kind = match.groups()
        listed = re.search(r"_xla_megascale_target=\{(\{[\d,{}]*\})\}", line)
        if listed:
            groups = [
                [int(n) for n in row.split(",")]
                for row in re.findall(r"\{([\d,]+)\}", listed.group(1))
            ]
        else:
            ranged = re.search(r'_xla_megascale_target="\{([\d,]+)\}x\{(\d+):(\d+)\}"', line)
            assert ranged, line
            slices = [int(n) for n in ranged.group(1).split(",")]
            groups = [
                [k * 100_000 + d for k in slices]
                for d in range(int(ranged.group(2)), int(ranged.group(3)) + 1)
            ]
        size = BYTES[dtype] * math.prod(int(d) for d in filter(None, dims.split(",")))
        found.append({"kind": kind.lower().replace("_", "-"), "bytes": size,
                      "instruction": name, "groups": groups})  # fmt: skip
    return found


@pytest.fixture(scope="module")
def sliced(
    tmp_path_factory: pytest.TempPathFactory, run_cli: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(jxinspect's report per multi-slice case, raw JAX's facts per case)."""
    if not HAS_LIBTPU:
        pytest.skip("libtpu is not installed (the tpu extra)")
    folder = tmp_path_factory.mktemp("sliced")
    (folder / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    (folder / "sliced.py").write_text(SLICED, encoding="utf-8")
    raw = run_python(RAW_SLICED, cwd=folder, env=RAW_LIBTPU)
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout.strip().splitlines()[-1])
    reports = {}
    for name, (target, mesh, args) in SLICED_CASES.items():
        result = run_cli("lower", target, "--topology", "v5e:2x2", "--slices", "2", "--mesh",
                         mesh, "--args", args, "--compile", "--format", "json",
                         cwd=folder)  # fmt: skip
        assert result.returncode in (0, 1), result.describe()
        reports[name] = json.loads(result.stdout)
    return reports, facts


@needs_libtpu
@pytest.mark.parametrize("name", SLICED_CASES)
def test_a_multi_slice_compile_is_raw_jaxs_own(
    name: str, sliced: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    """Memory, FLOPs and every collective (kind, bytes, devices) of a program compiled for
    two slices equal raw JAX's compile over ``create_hybrid_device_mesh``'s mesh: each
    slice's collectives on that slice's devices (partition p of slice s: the p-th device
    of s in the assignment), and each transfer across slices on the devices it names."""
    reports, facts = sliced
    report, raw = reports[name], facts[name]
    assert report["topology"]["slices"] == 2 and report["topology"]["devices"] == 8
    info = report["compiled"]
    memory = [info["memory"][k] for k in ("arguments", "outputs", "temporaries")]
    assert (memory, info["flops"]) == (raw["memory"], raw["flops"])
    ids, slice_of = raw["ids"], raw["slices"]
    places = [[ids[i] for i, s in enumerate(slice_of) if s == k] for k in sorted(set(slice_of))]
    within = independent(raw["text"], total=len(places[0]))["collectives"]
    across = _across_slices(raw["text"])
    assert across, "a program over two slices moves data across them"
    want = [(c["kind"], c["bytes"], {frozenset(at[d] for d in g) for at in places
                                     for g in c["groups"]}) for c in within]  # fmt: skip
    want += [(c["kind"], c["bytes"], {frozenset(g) for g in c["groups"]}) for c in across]
    got = [(c["kind"], c["bytes"], {frozenset(g) for g in c["groups"]})
           for c in info["collectives"]]  # fmt: skip
    assert sorted(map(repr, got)) == sorted(map(repr, want))


@needs_libtpu
def test_a_multi_slice_program_names_the_axes_it_crosses(
    sliced: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Not a vacuous comparison: the gradient of the data-parallel step is reduced across
    the slices over ``data`` (a ``send`` to the data-center network), the FSDP weight
    gathered within each slice; where ``data`` spans both (4 = 2 slices × 2 devices) its
    parts are named as Shardy names sub-axes; ``reduce_rows`` reduces over ``data`` across
    slices and ``a`` within them, never over ``b`` (a slice's devices in v5e:2x2's ring
    order 0, 1, 3, 2: partition numbers are not mesh places)."""
    reports, _ = sliced

    def moves(name: str) -> set[tuple[str, tuple[str, ...], bool]]:
        return {(c["kind"], tuple(c["axes"]), c["instruction"].startswith("send"))
                for c in reports[name]["compiled"]["collectives"]}  # fmt: skip

    assert reports["whole"]["topology"]["across_slices"] == ["data"]
    assert ("all-reduce", ("data",), True) in moves("whole")
    assert ("all-gather", ("fsdp",), False) in moves("whole")
    assert ("all-reduce", ("data:(1)2",), True) in moves("split")
    assert {axes for _, axes, _ in moves("rows")} == {("a",), ("data",)}
    assert {across for _, axes, across in moves("rows") if axes == ("data",)} == {True}


@needs_libtpu
def test_slices_that_do_not_fit_the_mesh_are_said(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "sliced.py").write_text(SLICED, encoding="utf-8")
    flags = ("lower", "sliced.py:reduce_rows", "--topology", "v5e:2x2", "--slices", "2",
             "--args", "f32[64@data,256]")  # fmt: skip
    result = run_cli(*flags, "--mesh", "data=3,fsdp=2", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert result.stderr.strip() == (
        "error: a mesh of 3x2 devices does not fill whole slices (4 devices each): use a mesh "
        "of a multiple of 4 devices"
    )
    result = run_cli(*flags, "--mesh", "data=2,fsdp=4", "--compile", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert ("v5e:2x2 × 2 slices (8 devices, 15.8 GiB HBM each; data across slices), "
            f"libtpu {libtpu_version()}; not run") in result.stdout  # fmt: skip


def test_slices_need_a_topology(tmp_path: Path, run_cli: Any) -> None:
    (tmp_path / "sliced.py").write_text(SLICED, encoding="utf-8")
    result = run_cli("lower", "sliced.py:reduce_rows", "--slices", "2", "--args", "f32[64,256]",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert result.stderr.strip() == (
        "error: --slices 2 needs --topology: the TPU topology of each slice, e.g. --topology "
        "v5e:2x2 --slices 2"
    )


KERNELS = (REPO / "tests" / "tpu" / "programs.py").read_text(encoding="utf-8")
"""The chip's programs (tests/tpu/programs.py), whose ``block`` jits JAX's own Pallas TPU
matmul (no cost estimate) and a kernel of the test's own with one; ``estimated_add`` alone
is the estimate and nothing else."""

KERNELS_RAW = """
import json, sys
import jax, jax.numpy as jnp
from jax.experimental import topologies
sys.path.insert(0, ".")
import kernels

topology = topologies.get_topology_desc(platform="tpu", topology_name="v5e:2x2")
a = jax.ShapeDtypeStruct((512, 512), jnp.float32)
facts = {}
for name in ("block", "estimated_add"):
    with jax.default_device(topology.devices[0]):
        lowered = jax.jit(getattr(kernels, name)).lower(a, a)
    compiled = lowered.compile()
    lowered.compile(compiler_options={"xla_dump_to": f"dump-{name}"})
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    stats = compiled.memory_analysis()
    facts[name] = {"flops": cost["flops"], "bytes_accessed": cost["bytes accessed"],
                   "text": compiled.as_text(), "code": stats.generated_code_size_in_bytes,
                   "arguments": stats.argument_size_in_bytes,
                   "outputs": stats.output_size_in_bytes, "dump": f"dump-{name}"}
print(json.dumps(facts))
"""


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.fixture(scope="module")
def kernel_reports(
    tmp_path_factory: pytest.TempPathFactory, run_cli: Any
) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """(jxinspect's JSON report per function, raw JAX's facts per function, the folder)."""
    if not HAS_LIBTPU:
        pytest.skip("libtpu is not installed (the tpu extra)")
    folder = tmp_path_factory.mktemp("kernels")
    (folder / "kernels.py").write_text(KERNELS, encoding="utf-8")
    raw = run_python(KERNELS_RAW, cwd=folder, env=RAW_LIBTPU)
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout.strip().splitlines()[-1])
    reports = {}
    for name in facts:
        result = run_cli("lower", f"kernels.py:{name}", "--topology", "v5e:2x2", "--args",
                         "f32[512,512], f32[512,512]", "--compile", "--memory", "--format",
                         "json", cwd=folder)  # fmt: skip
        assert result.returncode in (0, 1), result.describe()
        reports[name] = json.loads(result.stdout)
    return reports, facts, folder


def _custom_calls(text: str) -> dict[str, str]:
    """The test's own reading: each custom call's instruction name → its line."""
    return {m.group(1): line for line in text.splitlines()
            if (m := re.match(r"^\s*(?:ROOT )?%(\S+) = .* custom-call\(", line))}  # fmt: skip


@needs_libtpu
def test_each_pallas_kernel_is_named_at_the_users_line_with_its_cost(
    kernel_reports: tuple[dict[str, Any], dict[str, Any], Path],
) -> None:
    """Both kernels of the block, by their functions' names, at the user's calls (the
    matmul's library frame beside); the estimate is the one XLA adds to cost_analysis
    (``estimated_add`` alone: exactly it); the matmul has none, so the block's FLOPs are
    unknown and XLA's figure is the part known."""
    reports, facts, _ = kernel_reports
    block = reports["block"]["compiled"]
    calls = _custom_calls(facts["block"]["text"])
    assert sorted(k["instruction"] for k in block["kernels"]) == sorted(calls)
    by_name = {k["name"]: k for k in block["kernels"]}
    assert set(by_name) == {"matmul_kernel", "add_kernel"}
    matmul, add = by_name["matmul_kernel"], by_name["add_kernel"]
    assert all('custom_call_target="tpu_custom_call"' in calls[k["instruction"]]
               for k in (matmul, add))  # fmt: skip
    assert (Path(matmul["file"]).name, matmul["line"]) == (
        "kernels.py",
        _line_of(KERNELS, "pallas_matmul.matmul("),
    )
    assert matmul["library_file"].endswith("pallas/ops/tpu/matmul.py")
    assert (Path(add["file"]).name, add["line"]) == (
        "kernels.py",
        _line_of(KERNELS, "pl.pallas_call("),
    )
    assert add["library_file"] is None
    assert '"cost_estimate":{"flops":"1234567"' in calls[add["instruction"]]
    assert (add["flops"], add["bytes_accessed"]) == (1234567, 7654321)
    assert matmul["flops"] is None and "cost_estimate" not in calls[matmul["instruction"]]
    assert block["flops"] is None
    assert block["flops_known_part"] == facts["block"]["flops"]
    # two 512³ matmuls (the Pallas one, then ``z @ y``): XLA counts only the second
    assert 2 * 512**3 < facts["block"]["flops"] < 2 * (2 * 512**3)
    assert [b["space"] for b in matmul["buffers"]][-1] in ("VMEM", "HBM")
    alone = reports["estimated_add"]["compiled"]
    assert alone["flops"] == facts["estimated_add"]["flops"] == 1234567
    assert alone["flops_known_part"] is None


@needs_libtpu
def test_the_peak_is_hbm_with_the_code_and_vmem_apart(
    kernel_reports: tuple[dict[str, Any], dict[str, Any], Path],
) -> None:
    """The kernels' outputs are in VMEM (their layouts' ``S(1)``): apart from the HBM peak,
    which holds the arguments, the result and the code the chip loads; each space's
    temporaries are those of XLA's own live ranges of that colour."""
    reports, facts, folder = kernel_reports
    for name, report in reports.items():
        peak, raw = report["compiled"]["peak"], facts[name]
        assert peak["code"] == raw["code"] > 0
        hbm = sum(b["bytes"] for b in peak["buffers"])
        assert peak["bytes"] == hbm + raw["code"]
        temporaries = [b["bytes"] for b in peak["buffers"] if b["kind"] == "temporary"]
        want, _, _ = dumped_peak(folder / raw["dump"])
        assert sum(temporaries) == want
        assert hbm - sum(temporaries) == raw["arguments"] + raw["outputs"]
        spaces = {s["space"]: s for s in peak["on_chip"]}
        vmem, _, _ = dumped_peak(folder / raw["dump"], 1)
        assert (spaces["VMEM"]["bytes"] if "VMEM" in spaces else 0) == vmem
        in_vmem = {k["instruction"] for k in report["compiled"]["kernels"]
                   if k["buffers"][-1]["space"] == "VMEM"}  # its layout's S(1)  # fmt: skip
        assert (name == "block") == bool(in_vmem)  # alone, the kernel writes the result
        held = {b["instruction"] for b in spaces.get("VMEM", {}).get("buffers", [])}
        assert in_vmem <= held
        assert not in_vmem & {b["instruction"] for b in peak["buffers"]}


@needs_libtpu
def test_the_text_says_the_flops_are_unknown_and_a_flops_budget_fails(
    tmp_path: Path, run_cli: Any
) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS, encoding="utf-8")
    args = ("--topology", "v5e:2x2", "--args", "f32[512,512], f32[512,512]", "--compile",
            "--memory")  # fmt: skip
    text = run_cli("lower", "kernels.py:block", *args, cwd=tmp_path)
    assert text.returncode == 0, text.describe()
    line = _line_of(KERNELS, "pallas_matmul.matmul(")
    assert re.search(
        r"FLOPs: unknown \([\d.]+ [kMG]?FLOP known; kernel matmul_kernel at "
        rf"\S*kernels\.py:{line} has no cost estimate\)",
        text.stdout,
    ), text.stdout
    assert "on chip (not HBM): VMEM " in text.stdout
    (tmp_path / "jxinspect.yaml").write_text(
        "budgets:\n  flops_per_device: 1000000000000\ntargets:\n"
        "  - target: kernels.py:block\n    topology: v5e:2x2\n    compile: true\n"
        '    args: "f32[512,512], f32[512,512]"\n'
        "  - target: kernels.py:estimated_add\n    topology: v5e:2x2\n    compile: true\n"
        '    args: "f32[512,512], f32[512,512]"\n',
        encoding="utf-8",
    )
    result = run_cli("lint", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.describe()
    found = {target["target"]: [f["message"] for f in target["findings"] if f["code"] == "JX303"]
             for target in json.loads(result.stdout)["targets"]}  # fmt: skip
    (message,) = found["kernels.py:block"]
    assert message.startswith("the FLOPs budget cannot be judged: the cost is unknown (")
    assert "kernel matmul_kernel at " in message and f"kernels.py:{line} has no cost" in message
    assert found["kernels.py:estimated_add"] == []


OWN_MESH = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def step(x):
    return jnp.tanh(x).sum()


def make():  # a mesh of its own, over the devices this process has
    mesh = jax.make_mesh((2, 2), ("data", "model"))
    return (jax.ShapeDtypeStruct((64, 32), jnp.float32, sharding=NamedSharding(mesh, P("data"))),)


def make_on_the_mesh_set_up():  # the hint followed
    mesh = jax.sharding.get_abstract_mesh()
    return (jax.ShapeDtypeStruct((64, 32), jnp.float32, sharding=NamedSharding(mesh, P("data"))),)
"""


@needs_libtpu
def test_a_maker_that_builds_its_own_mesh_is_told_to_build_on_the_one_set_up(
    tmp_path: Path, run_cli: Any
) -> None:
    """Under ``--topology`` the process holds one CPU device, so a maker's own mesh of four
    fails in JAX ("Number of devices 1 must be >= ..."): exit 3, and the line says to
    build the inputs on the mesh jxinspect sets up; the maker that does lowers."""
    (tmp_path / "own_mesh.py").write_text(OWN_MESH, encoding="utf-8")
    flags = ("--topology", "v5e:2x2", "--mesh", "data=2,model=2", "--auto")
    failed = run_cli("lower", "own_mesh.py:step", *flags, "--args-from", "make", cwd=tmp_path)
    assert failed.returncode == 3, failed.describe()
    (line,) = failed.stderr.strip().splitlines()
    assert "must be >= the product of mesh_shape" in line, line
    assert line.endswith(
        "; under --topology the inputs lie on v5e:2x2's devices: build them on the mesh "
        "jxinspect sets up (jax.sharding.get_abstract_mesh(), the ambient mesh), not on a "
        "mesh of your own"
    ), line
    followed = run_cli("lower", "own_mesh.py:step", *flags, "--args-from",
                       "make_on_the_mesh_set_up", cwd=tmp_path)  # fmt: skip
    assert followed.returncode in (0, 1), followed.describe()
