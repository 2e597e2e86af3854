"""The peak's live set (``lower --memory``), with XLA's own dump of the same compile as the
oracle.

Each program below is compiled once by a plain JAX script on 8 simulated CPU devices, with
``compiler_options={"xla_dump_to": ...}``; the script reads that compiled executable with
jxinspect's reader (no dump: the buffer assignment ``memory_analysis()`` carries, the
module's proto and text). This test then replays XLA's dump independently: the
allocations and the sizes and offsets of their values (``*-buffer-assignment.txt``), the
flattened schedule and every value's live range (``*-live-range.txt``, or the buffer
assignment's own ``HloLiveRange`` section up to 0.9), each memory region counted once.
The temporaries live at the first moment where most are must be the reader's, byte for
byte; arguments, results and what XLA allocated must equal ``memory_analysis()``.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version as installed
from pathlib import Path
from typing import Any

import pytest
from helpers import PLAIN_JAX_ON_8_DEVICES, run_cli, run_python
from hlo_reading import dumped_peak

from jxinspect.core.vocabulary import release_key

PROGRAMS = """
import jax, jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name


def loss(p, x):
    h = jnp.tanh(x @ p["w1"])
    return jnp.sum((h @ p["w2"]) ** 2)


def fsdp(p, x):
    g = jax.grad(loss)(p, x)
    return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)


def data_parallel(p, x):
    return jax.grad(loss)(p, x)


def tensor_parallel(w, x, constrain):
    h = constrain(x @ w)
    return jnp.sum(h * h)


def scan_layers(ws, x):
    def body(h, w):
        return jnp.tanh(h @ w), None

    def f(ws, x):
        return jnp.sum(jax.lax.scan(body, x, ws)[0])

    return jax.grad(f)(ws, x)


def nested_scans(ws, x):
    def inner(h, w):
        return jnp.tanh(h @ w), None

    def outer(h, ws2):
        return jax.lax.scan(inner, h, ws2)[0], None

    return jax.lax.scan(outer, x, ws)[0]


def remat(p, x):
    f = jax.checkpoint(loss, policy=jax.checkpoint_policies.nothing_saveable)
    return jax.grad(f)(p, x)


def offloaded(p, x):
    def named_loss(p, x):
        h = checkpoint_name(jnp.tanh(x @ p["w1"]), "h")
        return jnp.mean((h @ p["w2"]) ** 2)

    policy = jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["h"],
        offload_src="device", offload_dst="pinned_host")
    return jax.grad(jax.checkpoint(named_loss, policy=policy))(p, x)
"""

SCRIPT = (
    PLAIN_JAX_ON_8_DEVICES
    + """
import dataclasses, re, tempfile
from jxinspect.tracer.read import hlo_text, peak

mesh = mesh_of("d=8")
S = lambda *spec: NamedSharding(mesh, P(*spec))
A = lambda shape, *spec: jax.ShapeDtypeStruct(shape, jnp.float32, sharding=S(*spec))
params = {"w1": A((64, 128), "d"), "w2": A((128, 32), "d")}
CASES = {
    "fsdp": (programs.fsdp, (params, A((16, 64))), {}),
    "data_parallel": (programs.data_parallel, ({"w1": A((64, 128)), "w2": A((128, 32))},
                                               A((16, 64), "d")), {}),
    "tensor_parallel": (lambda w, x: programs.tensor_parallel(
        w, x, lambda h: jax.lax.with_sharding_constraint(h, S(None, "d"))),
        (A((64, 128)), A((16, 64), "d")), {}),
    "scan_layers": (programs.scan_layers, (A((4, 32, 32)), A((8, 32), "d")), {}),
    "nested_scans": (programs.nested_scans, (A((2, 3, 32, 32)), A((8, 32), "d")), {}),
    "remat": (programs.remat, (params, A((16, 64))), {}),
    "donated": (programs.fsdp, (params, A((16, 64))), {"donate_argnums": 0}),
    "offloaded": (programs.offloaded, (params, A((16, 64))), {}),
}
out = {}
for name, (f, args, keywords) in CASES.items():
    folder = tempfile.mkdtemp(dir=".")
    compiled = jax.jit(f, **keywords).lower(*args).compile(
        compiler_options={"xla_dump_to": folder})
    stats = compiled.memory_analysis()
    text = compiled.as_text()
    read = peak.read_peak(compiled, stats, hlo_text.parse(text), ({}, []))
    out[name] = {"folder": folder, "peak": dataclasses.asdict(read),
                 "differentiates": bool(re.search(r'op_name="[^"]*transpose[(]', text)),
                 "memory": [stats.argument_size_in_bytes, stats.output_size_in_bytes,
                            stats.temp_size_in_bytes, stats.alias_size_in_bytes]}
print(json.dumps(out))
"""
)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("peak")
    (folder / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    return folder, json.loads(run_python(SCRIPT, cwd=folder).stdout)


CASES = ("fsdp", "data_parallel", "tensor_parallel", "scan_layers", "nested_scans", "remat",
         "donated", "offloaded")  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_the_peak_is_xlas_own_live_ranges(case: str, compiled: tuple[Path, dict[str, Any]]) -> None:
    """The temporaries live at the peak are those of XLA's own live ranges for the same
    compile, region for region; the point named is one that defines one of them."""
    folder, results = compiled
    result = results[case]
    peak = result["peak"]
    want_bytes, regions, names = dumped_peak(folder / result["folder"])
    temporaries = [b for b in peak["buffers"] if b["kind"] in ("temporary", "collective")]
    assert peak["unread"] is None
    assert sum(b["bytes"] for b in temporaries) == want_bytes
    assert sorted(b["bytes"] for b in temporaries) == sorted(r[2] for r in regions)
    live_instructions = {name.split("{")[0] for name in names}
    assert {b["instruction"] for b in temporaries} <= live_instructions
    if temporaries:
        assert peak["at"]["instruction"] in {b["instruction"] for b in temporaries}
        assert max(peak["timeline"]) == peak["bytes"]
        assert peak["timeline"][peak["at"]["position"]] == peak["bytes"]


@pytest.mark.parametrize("case", CASES)
def test_arguments_and_results_are_what_memory_analysis_counts(
    case: str, compiled: tuple[Path, dict[str, Any]]
) -> None:
    """Every argument's and result's allocation is live the whole run: their bytes are
    ``memory_analysis()``'s, and what XLA allocated is arguments, outputs and temporaries
    less what donation aliases."""
    _, results = compiled
    peak = results[case]["peak"]
    arguments, outputs, temporaries, aliased = results[case]["memory"]
    kinds: dict[str, int] = {}
    for b in peak["buffers"]:
        kinds[b["kind"]] = kinds.get(b["kind"], 0) + b["bytes"]
    assert kinds["argument"] == arguments
    donated = sum(b["bytes"] for b in peak["buffers"] if b["donated"])
    assert kinds.get("result", 0) + donated == outputs
    assert peak["allocated"] == arguments + outputs + temporaries - aliased
    assert peak["bytes"] == sum(kinds.values()) <= peak["allocated"]
    assert (donated > 0) == (case == "donated")


def test_loop_temporaries_say_their_loop(compiled: tuple[Path, dict[str, Any]]) -> None:
    """A buffer defined inside a scan's body says the loop it lives in."""
    _, results = compiled
    loops = {b["loop"] for case in ("scan_layers", "nested_scans")
             for b in results[case]["peak"]["buffers"] if b["loop"]}  # fmt: skip
    assert loops and all(loop.startswith("while") for loop in loops)


def test_lower_memory_names_each_argument_and_result_by_its_path() -> None:
    """``lower --memory``: each argument's and result's buffer carries the report's own
    path and per-device bytes; the text shows the peak and the table."""
    target = "sample_programs/compiled.py:dp_step"
    report = json.loads(run_cli("lower", target, "--memory", "--format", "json").stdout)
    peak = report["compiled"]["peak"]
    inputs = {leaf["path"]: leaf["bytes_per_device"] for leaf in report["inputs"]}
    outputs = {leaf["path"]: leaf["bytes_per_device"] for leaf in report["outputs"]}
    arguments = {b["path"]: b["bytes"] for b in peak["buffers"] if b["kind"] == "argument"}
    results = {b["path"]: b["bytes"] for b in peak["buffers"]
               if b["kind"] == "result" and b["path"] is not None}  # fmt: skip
    assert arguments == inputs
    assert results == outputs
    text = run_cli("lower", target, "--memory").stdout
    assert "memory at the peak:" in text and "per kind: argument" in text
    assert re.search(r"^peak: +\S+ \S+ per device", text, re.MULTILINE)
    shown = run_cli("lower", target, "--show", "memory").stdout
    assert "memory at the peak:" in shown


def test_roles_come_from_the_transformation_path(compiled: tuple[Path, dict[str, Any]]) -> None:
    """Where the optimized program's op names keep ``transpose(`` (a differentiating step,
    as the release names it), its temporaries say what they are for; else none guesses."""
    _, results = compiled
    for case in ("fsdp", "data_parallel", "remat", "nested_scans"):
        result = results[case]
        roles = {b["role"] for b in result["peak"]["buffers"] if b["kind"] != "argument"}
        if result["differentiates"]:
            assert "backward" in roles, case
            assert roles <= {None, "forward", "residual", "backward", "update"}
        else:
            assert roles == {None}, case
    assert results["nested_scans"]["differentiates"] is False


def test_lint_gates_the_peak_with_its_largest_buffers(tmp_path: Path) -> None:
    """``budgets: peak_per_device``: lint reads the peak of each compiled target and JX303
    names what is largest there; a budget above the peak passes."""
    source = Path(__file__).resolve().parents[2] / "sample_programs" / "compiled.py"
    (tmp_path / "compiled.py").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    config = "targets: [{target: compiled.py:dp_step}]\ncompile: true\nignore: [JX202]\nbudgets:\n"
    report = json.loads(run_cli("lower", source.as_posix() + ":dp_step", "--memory",
                                "--format", "json").stdout)  # fmt: skip
    peak = report["compiled"]["peak"]["bytes"]
    (tmp_path / "jxinspect.yaml").write_text(config + f"  peak_per_device: {peak - 1}\n")
    failed = run_cli("lint", "--no-cache", cwd=tmp_path)
    assert failed.returncode == 1, failed.describe()
    assert "JX303" in failed.stdout and "at the peak" in failed.stdout
    assert "batch['x']" in failed.stdout  # the largest buffer there
    (tmp_path / "jxinspect.yaml").write_text(config + f"  peak_per_device: {peak}\n")
    passed = run_cli("lint", "--no-cache", cwd=tmp_path)
    assert passed.returncode == 0, passed.describe()


RESIDUALS = (
    PLAIN_JAX_ON_8_DEVICES.replace("import programs\n", "")
    + """
import contextlib, dataclasses, io
from jax.ad_checkpoint import checkpoint_name, print_saved_residuals
import jxinspect

def loss(p, x):
    h = jnp.tanh(x @ p["w1"])
    h = checkpoint_name(h, "hidden")
    return jnp.sum((h @ p["w2"]) ** 2)

def step(p, x):
    grads = jax.grad(loss)(p, x)
    return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, grads)

p = {"w1": jnp.ones((64, 128)), "w2": jnp.ones((128, 32))}
x = jnp.ones((16, 64))
said = io.StringIO()
with contextlib.redirect_stdout(said):
    print_saved_residuals(lambda p: loss(p, x), p)
report = jxinspect.inspect(step, (p, x), memory=True, texts=False)
found = report.compiled.residuals
mine = None if found is None else [dataclasses.asdict(r) for r in found]
print(json.dumps({"oracle": said.getvalue().splitlines(), "mine": mine}))
"""
)


def test_residuals_are_what_print_saved_residuals_says(tmp_path: Path) -> None:
    """A train step that differentiates ``loss``: the values its forward pass keeps for
    the backward pass are ``print_saved_residuals``' for ``loss`` (its ``x`` held
    constant there, an argument of the step here), each by type, and by name or
    operation and line, as the running release names them; a release whose jaxprs do not
    say which pass an equation is in (before 0.7) says it does not know. The program is
    a file of the user's (``python -c``'s ``<string>`` is none: its lines would be said as
    a library's)."""
    (tmp_path / "residuals.py").write_text(RESIDUALS)
    ran = run_python("import runpy; runpy.run_path('residuals.py')", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    result = json.loads(ran.stdout)
    oracle, mine = result["oracle"], result["mine"]
    if mine is None:
        assert release_key(installed("jax")) < release_key("0.7.0")
        return
    assert sorted(line.split()[0] for line in oracle) == sorted(r["type"] for r in mine)

    def said(pattern: str) -> list[tuple[str, int]]:
        return sorted((m.group(1), int(m.group(2)))
                      for line in oracle if (m := re.search(pattern, line)))  # fmt: skip

    assert said(r"named '(\S+)' from .*?:(\d+):\d+") == sorted(
        (r["name"], r["line"]) for r in mine if r["source"] == "named"
    )
    assert said(r"output of (\S+) from .*?:(\d+):\d+") == sorted(
        (r["name"], r["line"]) for r in mine if r["source"] == "output"
    )
    arguments = [
        line for line in oracle if "from the argument" in line or "from a constant" in line
    ]
    assert len(arguments) == sum(r["source"] == "argument" for r in mine)
    assert {r["name"] for r in mine if r["source"] == "argument"} <= {"p['w1']", "p['w2']", "x"}
