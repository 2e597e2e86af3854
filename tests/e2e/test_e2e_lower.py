"""End to end through the installed ``jxinspect`` command: every sample entry in text
and JSON, options on the command line, ``--show``, ``-o``, ``--fail-on``, partitioners,
abstract meshes, ``explain`` and ``--help``.

Runs of ``jxinspect lower`` go through the session cache in ``conftest.py``
(``lower_text`` / ``lower_json``), shared with ``test_golden.py``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    JAX_RELEASE,
    REPO,
    assert_valid_report,
    error_line,
    needs_gspmd,
    run_python,
    sample_entries,
    sample_target,
)
from helpers import (
    run_cli as cli_run,
)

from jxinspect.core import codec
from jxinspect.tracer import seam

ENTRIES = sample_entries()
PREFIXED = seam.result_paths_prefixed()
"""Whether this JAX writes ``result['y']`` (0.6 on) or ``['y']`` (up to 0.5)."""
SHARDY_DEFAULT = seam.shardy_default()
"""Whether this JAX partitions with Shardy unless told otherwise (0.7 on)."""
NESTED_CODES = {"JX107", "JX110"}
FIXTURE = "tests/fixtures/targets.py"
ANSI = re.compile(r"\x1b\[")

# What the sample programs declare today; a new entry is picked up by the parametrized
# tests on its own, but one that disappears (or a discovery that finds nothing) fails here.
KNOWN_ENTRIES = {
    "advertised.apply", "big_mlp.forward", "custom_pytree.apply", "custom_pytree.apply_seq",
    "data_parallel.step",
    "mlp.predict", "mlp.loss", "nested.model", "nested.model_grad", "sharded.update",
    "sharded.normalize", "static_arg.f", "tp.layer", "tp.layer_rs", "unused_arg.f",
    "unused_arg.f_keep", "unused_arg.grad_step", "lowering_fails.eig_on_tpu",
}  # fmt: skip
LOWERING_FAILS = {"lowering_fails.eig_on_tpu": "tpu"}
"""Entries that trace but do not lower (JX108), with the platform they ask for: exit 3,
after the report of what tracing gave."""


def by_path(leaves: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {leaf["path"]: leaf for leaf in leaves}


def codes(report: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in report["findings"]]


def naming_findings(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(code, path) of the findings about names and debug info (JX101-JX110); other
    families (sharding, compiled-stage advice) are not what these tests are about."""
    return [(f["code"], f["path"]) for f in report["findings"] if re.match(r"JX1\d\d$", f["code"])]


def unexplained_naming_findings(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    """Naming findings other than JX107 (JX110) for a nested jaxpr this release left
    without debug info (with part of it): older releases do so for shard_map, scan,
    cond… bodies, 0.8 keeps no result paths in a shard_map's body. The nested grades
    themselves are checked against the release's own jaxprs in ``test_oracle``."""
    grade = {n["where"]: n["quality"] for n in report["nested"]}
    explained = {"JX107": "missing", "JX110": "partial"}
    return [
        (f["code"], f["path"])
        for f in report["findings"]
        if re.match(r"JX1\d\d$", f["code"])
        if not (
            f["code"] in explained and grade.get(f["message"].split()[2]) == explained[f["code"]]
        )
    ]


def assert_release_lacks(result: Any, feature: str, since: str) -> None:
    """What a release cannot do: exit 2 and one line naming the feature and the release."""
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith(f"error: {feature} needs JAX {since} or newer; ")


def test_every_known_sample_entry_is_discovered() -> None:
    assert KNOWN_ENTRIES <= set(ENTRIES), sorted(KNOWN_ENTRIES - set(ENTRIES))


# ---- every sample entry, text and JSON ----------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
def test_sample_json_report(entry: str, lower_json: Any) -> None:
    """Exit 0, nothing on stderr, a schema-valid report whose every leaf carries its name
    (or is explained by a finding), and which reads back through ``Report.from_dict``."""
    from jxinspect.core.model import Report

    target = sample_target(entry)
    result, report = lower_json(target)
    assert report["schema"] == "jxinspect.report/1"
    assert report["target"] == target
    if entry in LOWERING_FAILS:
        assert result.returncode == 3, result.describe()
        assert result.stderr.startswith("error: lowering failed: "), result.describe()
        assert report["reached"] == "traced" and report["error"]
        assert report["platform"] == LOWERING_FAILS[entry]
        assert codes(report) == ["JX108"]
    else:
        assert result.returncode == 0, result.describe()
        assert result.stderr == "", result.describe()
        assert report["reached"] == "lowered" and report["error"] is None
        assert report["platform"] == "cpu"
    assert report["file"] == str(REPO / "sample_programs" / f"{entry.split('.')[0]}.py")
    assert report["inputs"]
    assert report["outputs"] or "JX112" in codes(report)  # nothing staged: said so
    assert [leaf["index"] for leaf in report["inputs"]] == list(range(len(report["inputs"])))
    assert [leaf["index"] for leaf in report["outputs"]] == list(range(len(report["outputs"])))
    for leaf in report["inputs"]:
        if leaf["status"] == "ok":
            assert leaf["name"] == leaf["path"], leaf
    for leaf in report["outputs"]:  # the program's spelling, read in the newer one
        if leaf["status"] == "ok":
            assert seam.normalize_result_path(leaf["name"], PREFIXED) == leaf["path"], leaf
    # every leaf that does not carry its name has a finding about it
    flagged = {finding["path"] for finding in report["findings"]}
    for leaf in report["inputs"] + report["outputs"]:
        if leaf["status"] != "ok":
            assert leaf["path"] in flagged, leaf
    assert codec.plain(codec.convert(report, Report, source="the report")) == report


@pytest.mark.parametrize("entry", ENTRIES)
def test_sample_text_report(entry: str, lower_text: Any, lower_json: Any) -> None:
    """Plain text (stdout is a pipe): no colour codes, no box drawing, and the same
    leaves, statuses and findings as the JSON report of the same target."""
    target = sample_target(entry)
    result = lower_text(target)
    _, report = lower_json(target)
    text = result.stdout
    assert result.returncode == (3 if entry in LOWERING_FAILS else 0), result.describe()
    assert not ANSI.search(text), "colour codes in piped output"
    assert not set(text) & set("╭╮╰╯│─━┃"), "box drawing in piped output"
    assert f"stage:        {report['stage']} → reached {report['reached']}\n" in text
    assert f"inputs ({len(report['inputs'])})\n" in text
    assert f"outputs ({len(report['outputs'])})\n" in text
    rows = {line.split()[1]: line.split() for line in text.splitlines()
            if re.match(r"^  \d+  ", line)}  # fmt: skip
    for leaf in report["inputs"] + report["outputs"]:
        assert leaf["path"] in text
        if " " not in leaf["path"]:
            assert leaf["status"] in rows[leaf["path"]], (leaf, rows[leaf["path"]])
    # every finding about the user's code is a line, or folded into the line of the
    # first of its kind; those inside JAX's own code are one line that counts them
    messages = {f"{f['code']} {f['severity']:<7} {f['message']}" for f in report["findings"]}
    counted = 0
    for line in (line for line in text.splitlines() if re.match(r"^  JX\d{3} ", line)):
        first, _, more = line.strip().partition("; ")
        assert first in messages, line
        folded = re.match(r"(\d+) more like it\b", more)
        counted += 1 + (int(folded.group(1)) if folded else 0)
    jax_own = sum(f["inside_jax"] for f in report["findings"])
    inside = re.search(r"^  (\d+) (?:more )?inside JAX's own code \(", text, re.MULTILINE)
    assert (int(inside.group(1)) if inside else 0) == jax_own, text
    assert counted + jax_own == len(report["findings"])
    ok_in = sum(leaf["status"] == "ok" for leaf in report["inputs"])
    ok_out = sum(leaf["status"] == "ok" for leaf in report["outputs"])
    summary = text.rstrip("\n").splitlines()[-1]
    assert summary.startswith(
        f"{ok_in}/{len(report['inputs'])} arguments and "
        f"{ok_out}/{len(report['outputs'])} results carry their names"
    ), summary


# ---- what each sample shows ---------------------------------------------------------------


def _table_lines(text: str, title: str) -> list[str]:
    """A plain text table's header and rows: the lines under ``title (N)``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{title} ("))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start + 1 : end]


@pytest.mark.parametrize(
    "target", ["sample_programs/mlp.py:predict", "sample_programs/data_parallel.py:step"]
)
def test_a_name_equal_to_its_path_is_said_once(
    target: str, lower_json: Any, lower_text: Any
) -> None:
    """The name in the program is shown where it is not the path itself: a table whose
    every leaf carries its path has no name column (a real trainer's ran to 291
    columns); one where some differ (pmap's fallback names, 0.4's unprefixed result
    paths) shows only those."""
    _, report = lower_json(target)
    text = lower_text(target).stdout
    for title in ("inputs", "outputs"):
        leaves = report[title]
        header, *rows = _table_lines(text, title)
        assert len(rows) == len(leaves)
        differ = [leaf for leaf in leaves if leaf["name"] != leaf["path"]]  # "": no name
        assert ("name in program" in header) == bool(differ), header
        if differ:
            at = header.index("name in program")
            shown = [row[at:].split("  ")[0].strip() for row in rows]
            assert shown == [
                "" if leaf["name"] == leaf["path"] else (leaf["name"] or "—") for leaf in leaves
            ]


def test_mlp_predict_names_nested_parameters(lower_json: Any, lower_text: Any) -> None:
    _, report = lower_json("sample_programs/mlp.py:predict")
    inputs = by_path(report["inputs"])
    expected = [f"params['layers'][{i}]['{k}']" for i in range(3) for k in ("b", "w")] + ["x"]
    assert [leaf["path"] for leaf in report["inputs"]] == expected
    w0 = inputs["params['layers'][0]['w']"]
    assert w0["status"] == "ok" and w0["name"] == "params['layers'][0]['w']"
    assert w0["jaxpr_name"] == "params['layers'][0]['w']"
    assert (w0["shape"], w0["dtype"], w0["bytes_per_device"]) == ([784, 512], "float32", 1605632)
    assert w0["main_index"] == 1 and w0["sharding"] is None
    assert inputs["x"]["shape"] == [32, 784]
    outputs = by_path(report["outputs"])
    assert list(outputs) == ["result['logits']", "result['probs']"]
    assert all(o["status"] == "ok" and o["shape"] == [32, 10] for o in outputs.values())
    # older releases leave custom_jvp's nested jaxprs without debug info (JX107)
    assert {f["severity"] for f in report["findings"] if f["code"] not in NESTED_CODES} <= {
        "info"}  # fmt: skip
    text = lower_text("sample_programs/mlp.py:predict").stdout
    # the name is the path: said once
    assert re.search(r"params\['layers'\]\[0\]\['w'\]\s+ok\s+f32\[784,512\]\s+1\.5 MiB", text)


def test_mlp_loss_integer_labels_and_scalar_result(lower_json: Any) -> None:
    _, report = lower_json("sample_programs/mlp.py:loss")
    y = by_path(report["inputs"])["y"]
    assert (y["status"], y["dtype"], y["shape"]) == ("ok", "int32", [32])
    assert [(o["path"], o["shape"]) for o in report["outputs"]] == [("result", [])]


def test_data_parallel_step_pmap_names_as_this_jax_lowers_them(
    lower_json: Any, lower_text: Any
) -> None:
    """pmap's names are what this release's own lowering carries: the real names (to 0.6),
    none at all (0.7.2), or a fallback name: ``args[i]`` (0.8, 0.9), ``flat_args[i]``
    (pmap on shard_map, 0.10)."""
    from test_oracle import CASES, oracle

    target = "sample_programs/data_parallel.py:step"
    raw = oracle(CASES[target])
    _, report = lower_json(target)
    assert report["stage"] == "pmap"
    assert (report["num_devices"], report["mesh"]) == (8, "batch=8")
    assert "simulated 8 CPU devices" in report["notes"]
    paths = ["params['b']", "params['w']", "batch['x']", "batch['y']"]
    assert [leaf["path"] for leaf in report["inputs"]] == paths
    jx102 = [f["path"] for f in report["findings"] if f["code"] == "JX102"]
    jx101 = [f["path"] for f in report["findings"] if f["code"] == "JX101"]
    for leaf, arg in zip(report["inputs"], raw["args"]):
        assert leaf["name"] == arg["name"], (leaf, arg)
        if arg["name"] is None:
            assert leaf["status"] == "missing" and leaf["path"] in jx101, leaf
        elif arg["name"] != leaf["path"]:  # JAX's fallback for the flat argument
            assert re.fullmatch(r"(flat_)?args\[\d+\]", arg["name"]), arg
            assert leaf["status"] == "synthetic" and leaf["path"] in jx102, leaf
        else:
            assert leaf["status"] == "ok", leaf
        # global shapes in the report; each device holds one slice of the batch axis
        assert leaf["sharding"]["spec"][0] == ["batch"]
        assert leaf["shard_shape"][0] == 1
    assert raw["args"][0]["name"] in ("params['b']", None, "args[0]", "flat_args[0]")
    text = lower_text(target).stdout
    first = raw["args"][0]["name"]
    if first in ("args[0]", "flat_args[0]"):
        assert re.search(rf"params\['b'\]\s+{re.escape(first)}\s+synthetic", text)
        assert f"JX102 warning argument params['b'] carries the fallback name '{first}'" in text
    elif first is None:
        assert re.search(r"params\['b'\]\s+-?\s*missing", text) or "missing" in text


def test_unused_arg_f_prunes_unused(lower_json: Any, lower_text: Any) -> None:
    _, report = lower_json("sample_programs/unused_arg.py:f")
    inputs = by_path(report["inputs"])
    unused = inputs["unused"]
    assert (unused["status"], unused["name"], unused["main_index"]) == ("pruned", None, None)
    assert inputs["unused"]["jaxpr_name"] == "unused"
    assert (inputs["x"]["main_index"], inputs["y"]["main_index"]) == (0, 1)
    assert naming_findings(report) == [("JX105", "unused")]
    assert [f["severity"] for f in report["findings"] if f["code"] == "JX105"] == ["info"]
    text = lower_text("sample_programs/unused_arg.py:f").stdout
    assert re.search(r"1\s+unused\s+—\s+pruned\s+f32\[100\]", text)


def test_unused_arg_f_keep_keeps_it(lower_json: Any) -> None:
    _, report = lower_json("sample_programs/unused_arg.py:f_keep")
    unused = by_path(report["inputs"])["unused"]
    assert (unused["status"], unused["name"], unused["main_index"]) == ("ok", "unused", 1)
    assert "JX105" not in codes(report)


def test_unused_arg_grad_step_prewrapped(lower_json: Any) -> None:
    """``jax.jit(jax.grad(loss_fn))``: staged as it is, named after ``loss_fn``."""
    _, report = lower_json("sample_programs/unused_arg.py:grad_step")
    assert report["function"].startswith("loss_fn at ")
    assert [leaf["path"] for leaf in report["inputs"]] == ["w", "x", "y"]
    assert [(o["path"], o["shape"]) for o in report["outputs"]] == [("result", [8, 1])]
    assert naming_findings(report) == []


def test_sharded_update_donation_and_shardings(lower_json: Any, lower_text: Any) -> None:
    _, report = lower_json("sample_programs/sharded.py:update")
    assert (report["mesh"], report["num_devices"], report["partitioner"]) == (
        "data=4,model=2", 8, "shardy" if SHARDY_DEFAULT else "gspmd")  # fmt: skip
    outputs = report["outputs"]
    for leaf in report["inputs"]:
        if leaf["path"].startswith("state"):
            assert leaf["donated"] is True, leaf
            assert leaf["aliased_output"] is not None, leaf
            aliased = outputs[leaf["aliased_output"]]
            assert aliased["path"] == "result[0]" + leaf["path"][len("state") :]
            assert aliased["shape"] == leaf["shape"]
        else:
            assert (leaf["donated"], leaf["aliased_output"]) == (False, None), leaf
    inputs = by_path(report["inputs"])
    for path in ("state['params']['w']", "state['momentum']['w']", "grads['w']"):
        leaf = inputs[path]
        assert leaf["sharding"]["readable"] == "P('data', 'model')"
        assert leaf["sharding"]["spec"] == [["data"], ["model"]]
        assert leaf["sharding"]["source"] == ("sdy" if SHARDY_DEFAULT else "gspmd")
        assert (leaf["shape"], leaf["shard_shape"]) == ([512, 256], [128, 128])
        assert leaf["bytes_per_device"] == 128 * 128 * 4
    for path in ("state['params']['b']", "grads['b']"):
        assert inputs[path]["sharding"]["readable"] == "P('model')"
        assert inputs[path]["shard_shape"] == [128]
    # a replicated scalar: `<@mesh, []>`, `{replicated}`, or no attribute at all (0.7);
    # tests/test_oracle.py holds each release to what it wrote
    for leaf in (inputs["state['step']"], by_path(outputs)["result[1]"]):
        assert leaf["shape"] == [] and leaf["shard_shape"] == []
        assert leaf["sharding"] is None or leaf["sharding"]["readable"] == "replicated", leaf
    assert naming_findings(report) == []
    text = lower_text("sample_programs/sharded.py:update").stdout
    assert re.search(r"state\['params'\]\['w'\].*P\('data', 'model'\)\s+f32\[128,128\] 64\.0 KiB"
                     r"\s+aliased → out 3", text)  # fmt: skip


def test_sharded_normalize_at_axis_shorthand(lower_json: Any) -> None:
    _, report = lower_json("sample_programs/sharded.py:normalize")
    (x,), (out,) = report["inputs"], report["outputs"]
    for leaf in (x, out):
        assert leaf["sharding"]["readable"] == "P('data', None)"
        assert leaf["shard_shape"] == [2, 128]
        assert leaf["sharding"]["replicas"] == 2  # the model axis holds copies


@pytest.mark.parametrize(
    "function, x_spec, w_spec, out_spec, x_shard",
    [
        ("layer", "P('data', None)", "P(None, 'model')", "P('data', 'model')", [8, 256]),
        ("layer_rs", "P('data', 'model')", "P('model', None)", "P('data', None)", [8, 256]),
    ],
)
def test_tp_shard_map_specs(function: str, x_spec: str, w_spec: str, out_spec: str,
                            x_shard: list[int], lower_json: Any) -> None:  # fmt: skip
    _, report = lower_json(f"sample_programs/tp.py:{function}")
    assert report["stage"] == "shard_map"
    assert (report["mesh"], report["num_devices"]) == ("data=2,model=4", 8)
    x, w = report["inputs"]
    assert (x["path"], x["sharding"]["readable"], x["shard_shape"]) == ("x", x_spec, x_shard)
    assert (w["path"], w["sharding"]["readable"]) == ("w", w_spec)
    assert report["outputs"][0]["sharding"]["readable"] == out_spec
    assert unexplained_naming_findings(report) == []


SHARD_MAP_OVER_MAKE_MESH = """
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import sys, json
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map
sys.path.insert(0, "sample_programs")
import tp

mesh = jax.make_mesh((2, 4), ("data", "model"))  # this JAX's own axis types
specs = (P("data", None), P(None, "model"))
f = jax.jit(shard_map(tp.layer, mesh=mesh, in_specs=specs, out_specs=P("data", "model")))
said = {"types": [str(t) for t in getattr(mesh, "axis_types", ())]}
for name, shardings in (("plain", (None, None)), ("laid_out", specs)):
    args = [jax.ShapeDtypeStruct(shape, jnp.float32,
                                 sharding=None if s is None else NamedSharding(mesh, s))
            for shape, s in zip(((16, 256), (256, 1024)), shardings)]
    try:
        f.lower(*args)
        said[name] = "lowered"
    except Exception as e:
        said[name] = type(e).__name__
print(json.dumps(said))
"""


def test_a_shard_maps_undeclared_inputs_take_its_in_specs_on_explicit_axes(
    lower_json: Any,
) -> None:
    """Over ``jax.make_mesh``'s own axes, raw JAX lowers ``tp.layer``'s ``shard_map`` only
    when its inputs' types carry the ``in_specs`` (an unsharded one is refused where the
    axes are Explicit): jxinspect lays out inputs that declare nothing that way, and
    reaches what raw JAX reaches."""
    raw = json.loads(run_python(SHARD_MAP_OVER_MAKE_MESH).stdout)
    _, report = lower_json("sample_programs/tp.py:layer")
    assert raw["laid_out"] == "lowered" and report["reached"] == "lowered"
    explicit = "Explicit" in " ".join(raw["types"])
    kind = "Explicit" if explicit else "Auto"
    assert report["axis_types"] == ([kind] * 2 if raw["types"] else None)
    if explicit:
        assert raw["plain"] != "lowered", raw  # why the inputs are laid out
    assert [leaf["sharding"]["readable"] for leaf in report["inputs"]] == [
        "P('data', None)",
        "P(None, 'model')",
    ]


def test_static_arg_f_lists_static_args(lower_json: Any, lower_text: Any) -> None:
    _, report = lower_json("sample_programs/static_arg.py:f")
    assert report["static_args"] == [
        {"path": "n", "position": 1, "value": "3"},
        {"path": "activation", "position": None, "value": "'gelu'"},
    ]
    assert [(leaf["path"], leaf["shape"]) for leaf in report["inputs"]] == [("x", [8, 128])]
    assert "static:       n=3, activation='gelu'\n" in lower_text(
        "sample_programs/static_arg.py:f").stdout  # fmt: skip


@pytest.mark.parametrize(
    "function, paths",
    [
        ("apply", ["layer.w", "layer.b", "x"]),
        ("apply_seq", [f"model.layers[{i}].{k}" for i in range(3) for k in ("w", "b")] + ["x"]),
    ],
)
def test_custom_pytree_paths(function: str, paths: list[str], lower_json: Any) -> None:
    _, report = lower_json(f"sample_programs/custom_pytree.py:{function}")
    assert [leaf["path"] for leaf in report["inputs"]] == paths
    assert all(leaf["status"] == "ok" and leaf["name"] == leaf["path"] for leaf in report["inputs"])


def test_nested_model_records_nested_jaxprs(lower_json: Any) -> None:
    """Every nested jaxpr is graded by the debug info this release gave it."""
    _, report = lower_json("sample_programs/nested.py:model")
    top = report["jaxpr"]
    assert (top["where"], top["quality"]) == ("top", "ok")
    assert top["arg_names"] == ["ws", "x", "threshold"]
    nested = report["nested"]
    primitives = {n["primitive"] for n in nested}
    assert {"scan", "cond", "while", "remat2", "custom_jvp_call"} <= primitives
    assert primitives & {"jit", "pjit"} and primitives & {"custom_vjp_call",
                                                          "custom_vjp_call_jaxpr"}  # fmt: skip
    by_where = {n["where"]: n for n in nested}
    body = next(n for n in nested if n["primitive"] == "scan")
    if body["quality"] != "missing":  # 0.4.x kept no debug info for scan bodies
        assert body["func_src_info"].startswith("body at ") and body["arg_names"] == ["h", "w"]
        jits = [n["func_src_info"] for n in nested if n["primitive"] in ("jit", "pjit")]
        assert any(info and info.startswith("_dense at ") for info in jits), jits
    for finding in report["findings"]:
        if finding["code"] in NESTED_CODES:
            where = finding["message"].split()[2]
            expected = {"JX107": "missing", "JX110": "partial"}[finding["code"]]
            assert by_where[where]["quality"] == expected, finding
            if finding["code"] == "JX110":  # in words: which transformation, which function
                assert ": the body of a " in finding["message"], finding
                assert "function " in finding["message"], finding
    graded = {n["quality"] for n in nested}
    assert ("missing" in graded) == any(f["code"] == "JX107" for f in report["findings"])
    assert ("partial" in graded) == any(f["code"] == "JX110" for f in report["findings"])
    assert {code for code, _ in naming_findings(report)} <= NESTED_CODES
    assert {o["path"] for o in report["outputs"]} == {
        "result['out']", "result['layer_means']", "result['halvings']"}  # fmt: skip
    assert by_path(report["outputs"])["result['halvings']"]["dtype"] == "int32"


def test_nested_model_grad(lower_json: Any) -> None:
    _, report = lower_json("sample_programs/nested.py:model_grad")
    qualities = {jaxpr["quality"] for jaxpr in report["nested"]}
    assert report["nested"] and {"missing", "partial"} & qualities  # JAX loses some of it
    assert ("JX107" in codes(report)) == ("missing" in qualities)
    assert ("JX110" in codes(report)) == ("partial" in qualities)
    assert [(o["path"], o["shape"]) for o in report["outputs"]] == [("result", [6, 32, 32])]


def test_big_mlp_forward_scales(lower_json: Any) -> None:
    _, report = lower_json("sample_programs/big_mlp.py:forward")
    inputs = report["inputs"]
    assert len(inputs) == 2 * 256 + 1
    assert inputs[0]["path"] == "params[0]['b']" and inputs[-2]["path"] == "params[255]['w']"
    assert inputs[-1]["path"] == "x"
    assert all(leaf["status"] == "ok" for leaf in inputs)
    assert [leaf["main_index"] for leaf in inputs] == list(range(len(inputs)))


# ---- flags on the command line ---------------------------------------------------------------


def test_flags_override_the_declaration(lower_json: Any) -> None:
    _, report = lower_json(
        "sample_programs/static_arg.py:f", "--args", "f32[4,16], 2",
        "--kwargs", "activation='relu'", "--static-argnums", "1",
        "--static-argnames", "activation",
    )  # fmt: skip
    assert report["static_args"] == [
        {"path": "n", "position": 1, "value": "2"},
        {"path": "activation", "position": None, "value": "'relu'"},
    ]
    assert [(leaf["path"], leaf["shape"]) for leaf in report["inputs"]] == [("x", [4, 16])]
    assert report["outputs"][0]["shape"] == [4, 16]


def test_flags_merge_over_the_declaration(lower_json: Any) -> None:
    """Only --args given: the declared kwargs and static argnums/argnames still apply."""
    _, report = lower_json("sample_programs/static_arg.py:f", "--args", "f32[2,8], 5")
    assert report["static_args"] == [
        {"path": "n", "position": 1, "value": "5"},
        {"path": "activation", "position": None, "value": "'gelu'"},
    ]
    assert report["inputs"][0]["shape"] == [2, 8]


def _sections(text: str) -> dict[str, str]:
    """``── name ──`` sections after the report, by name."""
    parts = re.split(r"^── (\w+) ──$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def test_show_jaxpr_and_mlir_with_debug_info(lower_text: Any) -> None:
    target = "sample_programs/mlp.py:predict"
    result = lower_text(target, "--show", "jaxpr", "--show", "mlir", "--debug-info")
    text = result.stdout
    assert text.startswith(f"target:       {target}\n")  # the report comes first
    sections = _sections(text)
    assert list(sections) == ["jaxpr", "mlir"]
    jaxpr, mlir = sections["jaxpr"], sections["mlir"]
    assert "{ lambda " in jaxpr and "dot_general" in jaxpr
    assert "# params['layers'][0]['w']" in jaxpr  # invars are annotated with their names
    assert "func.func public @main(" in mlir
    assert 'loc("x")' in mlir
    assert "loc(\"params['layers'][0]['w']\")" in mlir
    logits = "result['logits']" if PREFIXED else "['logits']"
    assert f'jax.result_info = "{logits}"' in mlir


def test_show_mlir_default_is_annotated(lower_text: Any) -> None:
    """Without --debug-info the module drops source locations but each @main argument
    still says which leaf it is."""
    result = lower_text("sample_programs/static_arg.py:f", "--show", "mlir")
    mlir = _sections(result.stdout)["mlir"]
    assert "func.func public @main(" in mlir
    assert re.search(r"%arg0: tensor<8x128xf32>.*// x\b", mlir)
    assert 'loc("' not in mlir


def test_output_file(run_cli: Any, lower_json: Any, tmp_path: Any) -> None:
    out = tmp_path / "report.json"
    target = "sample_programs/unused_arg.py:f"
    result = run_cli("lower", target, "--format", "json", "-o", out)
    assert result.returncode == 0, result.describe()
    assert (result.stdout, result.stderr) == ("", "")
    written = json.loads(out.read_text(encoding="utf-8"))
    assert_valid_report(written)
    assert written == lower_json(target)[1]


def test_output_file_text_is_plain(run_cli: Any, lower_text: Any, tmp_path: Any) -> None:
    out = tmp_path / "report.txt"
    target = "sample_programs/unused_arg.py:f"
    result = run_cli("lower", target, "--output", out)
    assert result.returncode == 0 and result.stdout == "", result.describe()
    assert out.read_text(encoding="utf-8") == lower_text(target).stdout


@pytest.mark.parametrize(
    "target, fail_on, code",
    [
        ("sample_programs/unused_arg.py:f", "info", 1),  # JX105 is info
        ("sample_programs/unused_arg.py:f", "warning", 0),
        ("sample_programs/compiled.py:chosen_output", "warning", 1),  # JX202 is a warning
    ],
)
def test_fail_on(target: str, fail_on: str, code: int, lower_text: Any) -> None:
    result = lower_text(target, "--fail-on", fail_on)
    assert result.returncode == code, result.describe()
    assert result.stderr == "", "findings are the report, not errors"
    assert "findings (" in result.stdout


@needs_gspmd
def test_gspmd_reads_the_same_specs_as_shardy(lower_json: Any) -> None:
    """``mhlo.sharding`` tile assignments map back to mesh axis names."""
    flags = ("--mesh", "data=4,model=2", "--in-specs", "P('data', None)", "--args", "f32[8,128]")
    target = "sample_programs/sharded.py:normalize"
    _, gspmd = lower_json(target, "--partitioner", "gspmd", *flags)
    _, shardy = lower_json(target, "--partitioner", "shardy", *flags)
    assert (gspmd["partitioner"], shardy["partitioner"]) == ("gspmd", "shardy")
    for g, s in zip(gspmd["inputs"] + gspmd["outputs"], shardy["inputs"] + shardy["outputs"]):
        assert g["sharding"]["readable"] == s["sharding"]["readable"] == "P('data', None)"
        assert g["sharding"]["spec"] == s["sharding"]["spec"] == [["data"], []]
        assert g["sharding"]["mesh"] == "data=4,model=2"
        assert g["sharding"]["replicas"] == s["sharding"]["replicas"] == 2
        assert g["shard_shape"] == s["shard_shape"] == [2, 128]
        assert (g["sharding"]["source"], s["sharding"]["source"]) == ("gspmd", "sdy")
        assert "devices=" in g["sharding"]["raw"] and "sdy.sharding" in s["sharding"]["raw"]


def test_gspmd_asked_of_a_release_without_it_is_shardy_said(lower_json: Any) -> None:
    """Where JAX lowers with Shardy whatever it is asked (0.12.1 on), ``--partitioner
    gspmd`` is not refused (JAX accepts its option) and not reported as GSPMD: the report
    says Shardy, and a note says why."""
    _, report = lower_json("sample_programs/sharded.py:update", "--partitioner", "gspmd")
    if seam.gspmd_lowers():
        assert report["partitioner"] == "gspmd"
        assert not any("always partitions with Shardy" in note for note in report["notes"])
        return
    assert report["partitioner"] == "shardy"
    assert {leaf["sharding"]["source"] for leaf in report["inputs"] if leaf["sharding"]} == {"sdy"}
    assert [note for note in report["notes"] if "--partitioner gspmd" in note] == [
        f"--partitioner gspmd: JAX {JAX_RELEASE} always partitions with Shardy "
        "(its jax_use_shardy_partitioner has no effect); this is Shardy's lowering"
    ]


@needs_gspmd
def test_gspmd_sharded_update_matches_shardy(lower_json: Any) -> None:
    """The README's promise: ``--partitioner gspmd`` shows the same P(...) as Shardy."""
    _, gspmd = lower_json("sample_programs/sharded.py:update", "--partitioner", "gspmd")
    _, shardy = lower_json("sample_programs/sharded.py:update", "--partitioner", "shardy")
    assert gspmd["partitioner"] == "gspmd"
    pairs = zip(gspmd["inputs"] + gspmd["outputs"], shardy["inputs"] + shardy["outputs"])
    for g, s in pairs:
        assert g["path"] == s["path"]
        if s["sharding"] is None or g["sharding"] is None:  # 0.7 may write nothing for
            assert s["shape"] == [], g["path"]  # the replicated scalar (see test_oracle)
            for leaf in (g, s):
                assert leaf["sharding"] is None or leaf["sharding"]["readable"] == "replicated"
            continue
        assert g["sharding"]["readable"] == s["sharding"]["readable"], g["path"]
        assert g["shard_shape"] == s["shard_shape"], g["path"]
    assert [leaf["aliased_output"] for leaf in gspmd["inputs"]] == [
        leaf["aliased_output"] for leaf in shardy["inputs"]]  # fmt: skip


def test_shard_map_specs_read_under_both_partitioners(lower_json: Any) -> None:
    """A shard_map's specs: from sdy.manual_computation, or GSPMD's @Sharding and
    @SPMDShardToFullShape custom calls, read the same."""
    _, shardy = lower_json("sample_programs/tp.py:layer", "--partitioner", "shardy")
    _, gspmd = lower_json("sample_programs/tp.py:layer", "--partitioner", "gspmd")
    for report in (shardy, gspmd):
        readable = [leaf["sharding"]["readable"] for leaf in report["inputs"] + report["outputs"]]
        assert readable == ["P('data', None)", "P(None, 'model')", "P('data', 'model')"]
        assert report["outputs"][0]["shard_shape"] == [8, 256]


def test_gspmd_size_one_axis_named_like_shardy(lower_json: Any) -> None:
    flags = ("--mesh", "data=8,model=1", "--in-specs", "P('data')", "--args", "f32[16,4]")
    _, report = lower_json(f"{FIXTURE}:double", "--partitioner", "gspmd", *flags)
    assert report["inputs"][0]["sharding"]["readable"] == "P('data', None)"


def test_abstract_tpu_mesh(lower_json: Any, run_cli: Any) -> None:
    """A 1024-chip topology that is not here: an AbstractMesh, lowered for TPU (JAX 0.4.38
    on; an older release says so in one line and exits 2)."""
    flags = ("--abstract", "--platform", "tpu", "--mesh", "data=64,model=16",
             "--args", "f32[1024@data,512], f32[512,2048@model]")  # fmt: skip
    if not seam.abstract_meshes_lower():
        result = run_cli("lower", f"{FIXTURE}:matmul", *flags)
        assert_release_lacks(
            result, "lowering for an abstract mesh (--abstract)", seam.ABSTRACT_SINCE
        )
        return
    result, report = lower_json(f"{FIXTURE}:matmul", *flags)
    assert result.stderr == "", result.describe()
    assert report["reached"] == "lowered"
    assert (report["platform"], report["num_devices"]) == ("tpu", 1024)
    assert (report["mesh"], report["abstract_mesh"]) == ("data=64,model=16", True)
    assert not any("simulated" in note for note in report["notes"])
    x, w = report["inputs"]
    assert (x["sharding"]["readable"], x["shard_shape"]) == ("P('data', None)", [16, 512])
    assert (w["sharding"]["readable"], w["shard_shape"]) == ("P(None, 'model')", [512, 128])
    assert x["sharding"]["mesh"] == "data=64,model=16"
    assert report["outputs"][0]["shape"] == [1024, 2048]
    assert naming_findings(report) == []


def test_explicit_axes_or_one_line_naming_the_release(lower_json: Any, run_cli: Any) -> None:
    """--explicit needs jax.set_mesh (JAX 0.7 on); an older release says so and exits 2."""
    import jax

    flags = ("--explicit", "--mesh", "data=2", "--devices", "2", "--args", "f32[8@data,4]")
    if not hasattr(jax, "set_mesh"):
        result = run_cli("lower", f"{FIXTURE}:double", *flags)
        assert_release_lacks(result, "explicit sharding axes (--explicit)", "0.7")
        return
    _, report = lower_json(f"{FIXTURE}:double", *flags)
    (x,), (out,) = report["inputs"], report["outputs"]
    for leaf in (x, out):
        assert (leaf["sharding"]["readable"], leaf["shard_shape"]) == ("P('data', None)", [4, 4])


CONTRACTED = """
import os

if __name__ == "__main__":  # the real run, on 8 CPU devices (every release reads this)
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def matmul(x, w):  # both operands split along the contracted dimension
    return x @ w


if __name__ == "__main__":
    import numpy as np

    mesh = jax.make_mesh((8,), ("x",))  # the axis types this JAX gives by default
    print(getattr(mesh, "axis_types", None))
    x = jax.device_put(np.ones((16, 32), np.float32), NamedSharding(mesh, P(None, "x")))
    w = jax.device_put(np.ones((32, 8), np.float32), NamedSharding(mesh, P("x", None)))
    try:
        jax.jit(matmul)(x, w)
        print("ran")
    except Exception as e:
        print(type(e).__name__)
"""
CONTRACTED_FLAGS = ("--mesh", "x=8", "--devices", "8", "--args", "f32[16,32@x], f32[32@x,8]")


def test_the_mesh_takes_the_axis_types_jax_make_mesh_gives(tmp_path: Path) -> None:
    """A mesh given by ``--mesh`` has the axes this JAX's ``jax.make_mesh`` makes (Auto up
    to 0.8, Explicit from 0.9), so the program stages as the real run over that mesh does:
    raw JAX's outcome, a sharded contraction's ``ShardingTypeError`` included; the header
    says each axis's type, and ``--auto``/``--explicit`` choose."""
    import jax

    (tmp_path / "contracted.py").write_text(CONTRACTED, encoding="utf-8")
    real = cli_run("contracted.py", cwd=tmp_path, command=(sys.executable,))
    assert real.returncode == 0, real.describe()
    types, outcome = real.stdout.split()
    target = "contracted.py:matmul"
    default = cli_run("lower", target, *CONTRACTED_FLAGS, "--format", "json", cwd=tmp_path)
    if outcome == "ShardingTypeError":  # the real run failed: so does staging it
        assert "Explicit" in types, real.stdout
        assert default.returncode == 3, default.describe()
        assert default.stderr.startswith("error: tracing failed: ShardingTypeError: ")
    else:
        assert default.returncode == 0, default.describe()
        said = json.loads(default.stdout)["axis_types"]
        assert said == (["Auto"] if hasattr(jax.sharding, "AxisType") else None), types
    auto = cli_run("lower", target, *CONTRACTED_FLAGS, "--auto", cwd=tmp_path)
    assert auto.returncode == 0, auto.describe()
    shown = "mesh:         x=8, axes Auto, partitioner"
    assert (shown in auto.stdout) == hasattr(jax.sharding, "AxisType"), auto.stdout


def test_explicit_axes_of_an_abstract_mesh_stage_under_it(lower_json: Any) -> None:
    """An ``AbstractMesh`` is made ambient by ``use_abstract_mesh`` (``jax.set_mesh`` takes
    a concrete mesh only: it was an internal error): a release without it says so in one
    line, 0.7.2 cannot lower there (JAX's own error: a device assignment is needed), and
    from 0.8 the program lowers."""
    import jax

    if not hasattr(jax, "set_mesh") or not seam.abstract_meshes_lower():
        pytest.skip("explicit axes need JAX 0.7")
    args = "f32[1024@data,512], f32[512,2048@model]"
    flags = ("--stage", "shard_map", "--abstract", "--platform", "tpu", "--explicit",
             "--mesh", "data=64,model=16", "--args", args)  # fmt: skip
    if not hasattr(jax.sharding, "use_abstract_mesh"):
        result = cli_run("lower", "sample_programs/tp.py:layer", *flags)
        assert_release_lacks(result, "explicit axes on an abstract mesh", "0.7.2")
        return
    if JAX_RELEASE.startswith("0.7."):
        result = cli_run("lower", "sample_programs/tp.py:layer", *flags)
        assert result.returncode == 3, result.describe()
        assert "Length of device assignment" in error_line(result), result.describe()
        return
    result, report = lower_json("sample_programs/tp.py:layer", *flags)
    assert result.returncode == 0, result.describe()
    assert (report["reached"], report["axis_types"]) == ("lowered", ["Explicit", "Explicit"])
    assert [leaf["sharding"]["readable"] for leaf in report["inputs"]] == [
        "P('data', None)",
        "P(None, 'model')",
    ]


def test_auto_overrides_a_configuration_that_asks_for_explicit_axes(tmp_path: Path) -> None:
    import jax

    if not hasattr(jax, "set_mesh"):
        pytest.skip("explicit axes need JAX 0.7 (test_explicit_axes_or_one_line_... says so)")
    (tmp_path / "contracted.py").write_text(CONTRACTED, encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text("defaults: {explicit: true}\n", encoding="utf-8")
    flags = (*CONTRACTED_FLAGS, "--format", "json")
    configured = cli_run("lower", "contracted.py:matmul", *flags, cwd=tmp_path)
    assert configured.returncode == 3, configured.describe()  # explicit: the sharded contraction
    overridden = cli_run("lower", "contracted.py:matmul", *flags, "--auto", cwd=tmp_path)
    assert overridden.returncode == 0, overridden.describe()
    assert json.loads(overridden.stdout)["axis_types"] == ["Auto"]


def test_ordered_effect_token_is_an_extra_arg(lower_json: Any) -> None:
    _, report = lower_json(f"{FIXTURE}:ordered_print", "--args", "f32[3]")
    assert [extra["kind"] for extra in report["extra_args"]] == ["token"]
    (x,) = report["inputs"]
    assert (x["path"], x["status"]) == ("x", "ok")
    assert x["main_index"] == report["extra_args"][0]["main_index"] + 1


def test_lowering_failure_is_reported(lower_text: Any, lower_json: Any) -> None:
    """A nonsymmetric eigendecomposition traces but cannot be lowered for TPU: the report is still
    printed, it stops at "traced", JX108 says why, and --show mlir says there is none."""
    flags = ("--args", "f32[4,4]", "--platform", "tpu")
    result, report = lower_json(f"{FIXTURE}:cpu_only", *flags)
    assert result.returncode == 3, result.describe()  # the user's code failed to lower
    assert result.stderr.startswith("error: lowering failed: "), result.describe()
    assert len(result.stderr.splitlines()) == 1, result.describe()
    # the line says what to do: JAX has no TPU lowering of eig (0.4 says so in its own words)
    if "translation rule for primitive" in result.stderr:
        assert "JAX has no tpu lowering of eig: lower for a platform that has one" in result.stderr
    else:
        assert "only implemented on the CPU backend" in result.stderr, result.stderr
    assert report["reached"] == "traced" and report["error"]
    (jx108,) = [f for f in report["findings"] if f["code"] == "JX108"]
    assert jx108["severity"] == "error" and report["error"] in jx108["message"]
    assert naming_findings(report) == [("JX108", None)]
    (x,) = report["inputs"]
    assert (x["name"], x["status"], x["main_index"]) == ("x", "ok", None)  # from the jaxpr
    text = lower_text(f"{FIXTURE}:cpu_only", *flags, "--show", "mlir", "--fail-on", "error")
    assert text.returncode == 3, text.describe()
    assert "stage:        jit → reached traced\n" in text.stdout
    assert "JX108 error   lowering failed: " in text.stdout
    assert "// no module: lowering failed: " in text.stdout


@pytest.mark.skipif(
    not seam.abstract_meshes_lower(),
    reason=f"lowering for an abstract mesh needs JAX {seam.ABSTRACT_SINCE}",
)
def test_when_lowering_fails_the_declared_shardings_are_shown_and_judged(
    lower_text: Any, lower_json: Any
) -> None:
    """Nothing lowered, so the program's shardings are unknown; the arguments' declared
    ones are known before lowering: shown, marked as declared, and judged (per-device
    bytes, no false JX201)."""
    flags = ("--abstract", "--platform", "tpu", "--mesh", "data=8",
             "--args", "f32[8@data,4,4], f32[4096@data,256]")  # fmt: skip
    result, report = lower_json(f"{FIXTURE}:cpu_only_pair", *flags)
    assert result.returncode == 3 and report["reached"] == "traced", result.describe()
    a, b = report["inputs"]
    for leaf, readable in ((a, "P('data', None, None)"), (b, "P('data', None)")):
        sharding = leaf["sharding"]
        assert (sharding["readable"], sharding["source"]) == (readable, "declared"), leaf
    assert b["shard_shape"] == [512, 256] and b["bytes_per_device"] == 512 * 1024, b
    assert "JX201" not in {f["code"] for f in report["findings"]}, report["findings"]
    specs = ("--abstract", "--platform", "tpu", "--mesh", "data=8", "--args",
             "f32[8,4,4], f32[4096,256]", "--in-specs", "P('data'), P('data')")  # fmt: skip
    _, by_specs = lower_json(f"{FIXTURE}:cpu_only_pair", *specs)
    said = [(s["readable"], s["source"]) for s in (leaf["sharding"] for leaf in by_specs["inputs"])]
    assert said == [("P('data', None, None)", "declared"), ("P('data', None)", "declared")]
    text = lower_text(f"{FIXTURE}:cpu_only_pair", *flags).stdout
    (row,) = [line for line in text.splitlines() if line.startswith("  1  b ")]
    assert re.search(r"P\('data', None\) \(declared, not lowered\) +f32\[512,256\] 512\.0 KiB", row)


_JAX_SOURCE = re.compile(r"[\\/]jax[\\/]_src[\\/]")


def test_findings_inside_jax_are_marked_folded_and_never_fail(
    lower_json: Any, lower_text: Any, run_cli: Any, tmp_path: Any
) -> None:
    """A finding about a nested jaxpr whose function is JAX's own (from jax/_src/) is
    marked ``inside_jax`` in JSON, folded into one line in text, and fails neither
    ``lower --fail-on info`` nor ``lint --fail-on info``; the user's own are not marked."""
    flags = ("--args", "f32[4,3], i32[4,1]")
    _, report = lower_json(f"{FIXTURE}:jax_bodies", *flags)
    nested = {n["where"]: n for n in report["nested"]}
    for finding in report["findings"]:
        words = finding["message"].split()
        where = words[2] if words[:2] == ["nested", "jaxpr"] else words[1]
        source = (nested.get(where, {}).get("func_src_info") or "").partition(" at ")[2]
        assert finding["inside_jax"] == bool(_JAX_SOURCE.search(source)), (finding, source)
    own = [f for f in report["findings"] if f["inside_jax"]]
    if not own or len(own) != len(report["findings"]):
        pytest.skip(f"JAX {JAX_RELEASE} names no finding here as JAX's own alone")
    text = lower_text(f"{FIXTURE}:jax_bodies", *flags, "--fail-on", "info")
    assert text.returncode == 0, text.describe()
    assert f"  {len(own)} inside JAX's own code (" in text.stdout
    assert not re.search(r"^  JX\d{3} ", text.stdout, re.MULTILINE), text.stdout
    (tmp_path / "m.py").write_text(
        "import jax, jax.numpy as jnp\n\n"
        'JXINSPECT = {"jax_bodies": {"args": "f32[4,3], i32[4,1]"}}\n\n'
        "def jax_bodies(x, index):\n"
        "    return jnp.take_along_axis(jax.nn.relu(x), index, axis=1)\n",
        encoding="utf-8",
    )
    lint = run_cli("lint", ".", "--fail-on", "info", "--no-cache", cwd=tmp_path)
    assert lint.returncode == 0, lint.describe()
    assert f"m.py:jax_bodies: ok ({len(own)} inside JAX's own code)" in lint.stdout, lint.stdout
    data = run_cli("lint", ".", "--fail-on", "info", "--no-cache", "-f", "json", cwd=tmp_path)
    (target,) = json.loads(data.stdout)["targets"]
    assert [f["inside_jax"] for f in target["findings"]] == [True] * len(own), target


# ---- explain, help ---------------------------------------------------------------------------


def test_explain_known_code(run_cli: Any) -> None:
    result = run_cli("explain", "JX102")
    assert result.returncode == 0 and result.stderr == "", result.describe()
    assert result.stdout.startswith("JX102 (warning): ")
    assert "flat_args" in result.stdout


def test_explain_unknown_code(run_cli: Any) -> None:
    result = run_cli("explain", "JX999")
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "JX999" in line and "JX101" in line and "JX110" in line
    assert result.stdout == ""


def test_python_m_help(run_cli: Any) -> None:
    import sys

    result = run_cli("-m", "jxinspect", "--help", command=(sys.executable,))
    assert result.returncode == 0, result.describe()
    assert "lower" in result.stdout and "explain" in result.stdout


def test_help_does_not_import_jax() -> None:
    code = """
import sys
from jxinspect.cli import app as cli
for argv in (["jxinspect", "--help"], ["jxinspect", "lower", "--help"],
             ["jxinspect", "--version"]):
    sys.argv = argv
    try:
        cli.main()
    except SystemExit as exit:
        assert exit.code in (0, None), (argv, exit.code)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib"))
    assert not loaded, (argv, loaded[:5])
print("JAX NOT IMPORTED")
"""
    result = run_python(code)
    assert result.returncode == 0, result.describe()
    assert result.stdout.rstrip().endswith("JAX NOT IMPORTED")
    assert "--static-argnums" in result.stdout  # `lower --help` did print its options


def test_the_users_prints_go_to_stderr_never_into_the_payload(run_cli: Any, tmp_path: Any) -> None:
    """``lower --format json > report.json`` stays valid JSON when the module prints, at
    import and while tracing; so does ``diff-debug --format json``."""
    module = tmp_path / "chatty.py"
    module.write_text(
        'print("loading chatty")\n\ndef f(x):\n    print("tracing f")\n    return x * 2\n',
        encoding="utf-8",
    )
    result = run_cli("lower", f"{module}:f", "--args", "f32[2]", "--format", "json")
    assert result.returncode == 0, result.describe()
    assert json.loads(result.stdout)["inputs"][0]["path"] == "x"
    assert "loading chatty" in result.stderr and "tracing f" in result.stderr
    text = run_cli("lower", f"{module}:f", "--args", "f32[2]")
    assert text.stdout.startswith(f"target:       {module}:f\n"), text.describe()
    diff = run_cli("diff-debug", f"{module}:f", f"{module}:f", "--args", "f32[2]",
                   "--format", "json")  # fmt: skip
    assert diff.returncode == 0, diff.describe()
    assert json.loads(diff.stdout)["failed"] is False
    assert "tracing f" in diff.stderr


def test_fallback_names_of_a_callable_without_signature_are_synthetic(lower_json: Any) -> None:
    """With no signature to name them by, ``args[i]`` is JAX's fallback (JX102), not ok;
    JAX 0.4.x records no names at all for such a callable (JX101)."""
    _, report = lower_json(f"{FIXTURE}:no_signature", "--args", "f32[2], f32[2]")
    for i, leaf in enumerate(report["inputs"]):
        if leaf["name"] is None:
            assert leaf["status"] == "missing", leaf
            continue
        assert (leaf["name"], leaf["status"]) == (f"args[{i}]", "synthetic"), leaf
    expected = {"missing": "JX101", "synthetic": "JX102"}
    for leaf in report["inputs"]:
        assert (expected[leaf["status"]], leaf["path"]) in naming_findings(report)


def test_an_unsharded_scalar_beside_sharded_arrays_is_replicated(
    lower_json: Any, lower_text: Any
) -> None:
    """``sdy.sharding<@empty_mesh, []>`` (and GSPMD's ``{replicated}``) is a copy on every
    device, as XLA compiles it, not one device's (maximal)."""
    flags = ("--mesh", "data=8", "--devices", "8", "--args", "f32[16@data], f32[]")
    _, report = lower_json(f"{FIXTURE}:scale", *flags)
    x, s = report["inputs"]
    assert x["sharding"]["readable"] == "P('data')"
    if s["sharding"] is not None:  # a release may write no attribute at all (see test_oracle)
        assert (s["sharding"]["kind"], s["sharding"]["readable"]) == ("replicated", "replicated")
    text = lower_text(f"{FIXTURE}:scale", *flags, "--show", "sharding").stdout
    assert "maximal" not in text and "one device" not in text


def test_no_declared_input_sharding_on_a_mesh_raises_no_jx202(
    lower_json: Any, run_cli: Any, tmp_path: Any
) -> None:
    """A mesh of Auto axes alone declares no input sharding, nor does a scalar's (JAX
    writes its own ``@empty_mesh`` for one beside sharded arrays): the results left to the
    compiler are no JX202, in ``lower`` and in ``lint`` alike."""
    for args in ("f32[8,4], f32[]", "f32[8,4], 0.5"):
        flags = ("--mesh", "data=8", "--auto", "--args", args)
        _, report = lower_json(f"{FIXTURE}:scale", *flags)
        assert all(leaf["sharding"] is None for leaf in report["inputs"]), report["inputs"]
        assert "JX202" not in {f["code"] for f in report["findings"]}, report["findings"]
    (tmp_path / "m.py").write_text(
        'JXINSPECT = {"scale": {"args": "f32[8,4], f32[]", "mesh": "data=8", "explicit": False}}'
        "\n\n"
        "def scale(x, s):\n    return x * s\n",
        encoding="utf-8",
    )
    result = run_cli("lint", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    (target,) = json.loads(result.stdout)["targets"]
    assert target["error"] is None and not target["findings"], target


LEFT_TO_COMPILER = """\
from functools import partial
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
S = NamedSharding(mesh, P("x"))

def _step(a):
    return a * 2, {"loss": jnp.sum(a), "norm": jnp.max(a)}

on_purpose = jax.jit(_step, in_shardings=S, out_shardings=(S, None))
undeclared = jax.jit(_step, in_shardings=S)
# a list among out_shardings (a list of results): each result still gets one flag
in_a_list = jax.jit(lambda a: [a, (a, jnp.sum(a))], in_shardings=S, out_shardings=[S, (S, None)])
JXINSPECT = {"on_purpose": {"args": "f32[64]"}, "undeclared": {"args": "f32[64]"},
             "in_a_list": {"args": "f32[64]"}}
"""


def test_a_result_given_none_in_out_shardings_is_left_to_the_compiler_on_purpose(
    lower_json: Any, tmp_path: Any
) -> None:
    """``out_shardings=(S, None)``: the scalars are left to the compiler as declared (JAX
    writes the same program as for a result given nothing; its ``PjitInfo`` tells them
    apart), so no JX202 for them; a function that declares no out_shardings still gets
    one JX202 per result (issue 47, item 11)."""
    if not hasattr(__import__("jax").sharding, "AxisType"):
        pytest.skip("jax.make_mesh has no axis types before JAX 0.5")
    (tmp_path / "steps.py").write_text(LEFT_TO_COMPILER, encoding="utf-8")
    module = str(tmp_path / "steps.py")
    _, report = lower_json(f"{module}:on_purpose", "--devices", "8")
    outputs = {o["path"]: o["left_to_compiler"] for o in report["outputs"]}
    assert outputs == {"result[0]": False, "result[1]['loss']": True,
                       "result[1]['norm']": True}, outputs  # fmt: skip
    assert "JX202" not in {f["code"] for f in report["findings"]}, report["findings"]
    _, report = lower_json(f"{module}:undeclared", "--devices", "8")
    assert not any(o["left_to_compiler"] for o in report["outputs"])
    flagged = sorted(f["path"] for f in report["findings"] if f["code"] == "JX202")
    assert flagged == ["result[0]", "result[1]['loss']", "result[1]['norm']"], flagged
    _, report = lower_json(f"{module}:in_a_list", "--devices", "8")
    outputs = {o["path"]: o["left_to_compiler"] for o in report["outputs"]}
    assert outputs == {"result[0]": False, "result[1][0]": False, "result[1][1]": True}, outputs


TYPED_KEYS = """\
from functools import partial
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("batch",), axis_types=(jax.sharding.AxisType.Auto,))
S = NamedSharding(mesh, P("batch"))

@partial(jax.jit, in_shardings=(S, S), out_shardings=S)
def noise(keys, x):
    return x + jax.vmap(lambda k: jax.random.normal(k, ()))(keys)

def make():
    keys = jax.random.split(jax.random.key(0), 8)
    return (jax.ShapeDtypeStruct(keys.shape, keys.dtype, sharding=S),
            jax.ShapeDtypeStruct((8,), jnp.float32, sharding=S)), {}

JXINSPECT = {"noise": {"args_from": "make"}}
"""


def test_a_typed_key_arrays_sharding_reads_against_its_own_rank(
    lower_json: Any, tmp_path: Any
) -> None:
    """``key<fry>[8]`` is ``ui32[8,2]`` in the program, split on its first dimension:
    shown as the sharding JAX gave the key array (``P('batch')``), not the program
    value's ``P('batch', None)`` against a rank-1 type (issue 47, item 8)."""
    if not hasattr(__import__("jax").sharding, "AxisType"):
        pytest.skip("jax.make_mesh has no axis types before JAX 0.5")
    (tmp_path / "keys.py").write_text(TYPED_KEYS, encoding="utf-8")
    _, report = lower_json(f"{tmp_path / 'keys.py'}:noise", "--devices", "8", "--compile")
    keys = report["inputs"][0]
    assert keys["dtype"].startswith("key<") and keys["shape"] == [8], keys
    assert keys["sharding"]["spec"] == [["batch"]], keys["sharding"]
    assert keys["sharding"]["readable"] == "P('batch')"  # as JAX's own spec: P('batch')
    assert keys["compiled_sharding"]["readable"] == "P('batch')"
    assert keys["bytes_per_device"] == 8  # one threefry key: two uint32 words


STRICT_RAW = """
import sys, jax
sys.path.insert(0, {folder!r})
import strict_pytree as m
try:
    traced = jax.jit(m.apply).trace(*m.make_args())
except Exception:
    print("trace fails")
else:
    try:
        traced.lower()
        print("lowers")
    except Exception:
        print("lower fails")
"""


def test_a_pytree_jax_cannot_rebuild_reports_what_tracing_gave(run_cli: Any) -> None:
    """Where JAX's own ``lower()`` raises (a validating pytree constructor), the report of
    the trace is printed, reached ``traced``, with JX108, exit 3 — as raw JAX decides."""
    folder = str(REPO / "tests" / "fixtures")
    raw = run_python(STRICT_RAW.format(folder=folder), warm=True).stdout.strip()
    result = run_cli("lower", "tests/fixtures/strict_pytree.py:apply",
                     "--args-from", "tests/fixtures/strict_pytree.py:make_args")  # fmt: skip
    if raw == "trace fails":  # JAX 0.4.x
        assert result.returncode == 3, result.describe()
        assert error_line(result).startswith("error: tracing failed: TypeError: Strict needs ")
        return
    assert raw == "lower fails", raw
    assert result.returncode == 3, result.describe()
    assert "stage:        jit → reached traced\n" in result.stdout
    assert "JX108 error   lowering failed: TypeError: Strict needs an array" in result.stdout
    assert error_line(result).startswith("error: lowering failed: TypeError: Strict needs ")


WRAPPED_RAW = """
import json, sys, jax, jax.numpy as jnp
sys.path.insert(0, {folder!r})
import targets
S = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)
traced = jax.jit(targets.affine).trace(S(3, 2), S(4, 3), noise_scale=0.5)
info = traced.jaxpr.jaxpr.debug_info
print(json.dumps(list(info.arg_names) if info and info.arg_names is not None else None))
"""


def test_a_call_jax_accepts_is_staged_though_the_signature_is_narrower(lower_json: Any) -> None:
    """``functools.wraps`` advertises ``affine(weights, inputs)`` while the wrapper also
    takes ``noise_scale``: JAX stages the call, so jxinspect does, and reports the names
    JAX could give (positional fallbacks, or none on 0.4.x)."""
    folder = str(REPO / "tests" / "fixtures")
    raw = run_python(WRAPPED_RAW.format(folder=folder), warm=True)
    assert raw.returncode == 0, raw.describe()
    names = json.loads(raw.stdout.strip().splitlines()[-1])
    result, report = lower_json(f"{FIXTURE}:affine", "--args", "f32[3,2], f32[4,3]",
                                "--kwargs", "noise_scale=0.5")  # fmt: skip
    assert result.returncode == 0, result.describe()
    carried = [leaf["name"] for leaf in report["inputs"]]
    assert carried == (names or [None, None, None])
    statuses = [leaf["status"] for leaf in report["inputs"]]
    if names is None:
        assert statuses == ["missing"] * 3
    else:
        assert names[:2] == ["args[0]", "args[1]"] and statuses[:2] == ["synthetic"] * 2


def test_a_call_jax_refuses_gets_the_clear_usage_error(run_cli: Any) -> None:
    """Where JAX refuses the call as well, the example inputs are what to fix: exit 2."""
    result = run_cli("lower", f"{FIXTURE}:affine", "--args", "f32[3,2]")
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith("error: the example inputs do not fit affine(")


def test_a_target_file_imported_again_by_its_inputs_runs_once(run_cli: Any, tmp_path: Any) -> None:
    """``lower models/train.py:f --args-from inputs:make`` where ``inputs`` imports
    ``models.train`` (or ``train``): one module, executed once (a flag registry such as
    absl's would otherwise fail on the second run)."""
    package = tmp_path / "models"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "train.py").write_text(
        "import builtins\n"
        "if getattr(builtins, '_train_loaded', False):\n"
        "    raise RuntimeError('models/train.py executed twice')\n"
        "builtins._train_loaded = True\n"
        "SIZE = 4\n\n"
        "def f(x):\n"
        "    return x * 2\n",
        encoding="utf-8",
    )
    for name, statement in (("by_package", "from models import train"),
                            ("by_stem", "import train")):  # fmt: skip
        (tmp_path / f"{name}.py").write_text(
            f"import jax, jax.numpy as jnp\n{statement}\n\n"
            "def make():\n"
            "    return (jax.ShapeDtypeStruct((train.SIZE,), jnp.float32),)\n",
            encoding="utf-8",
        )
        result = run_cli("lower", "models/train.py:f", "--args-from", f"{name}:make",
                         cwd=tmp_path)  # fmt: skip
        assert result.returncode == 0, result.describe()
        assert "1/1 arguments and 1/1 results carry their names" in result.stdout


def test_repeated_findings_read_as_one_line_and_json_keeps_each(
    lower_text: Any, lower_json: Any, run_cli: Any, tmp_path: Any
) -> None:
    """Six pruned parameters: one JX105 line with the count, three examples and how to
    see all; JSON keeps all six; the HTML keeps an anchor and a link for each."""
    args = ("--args", "{a: f32[2], b: f32[2], c: f32[2], d: f32[2], e: f32[2], f: f32[2]}, f32[2]")
    text = lower_text(f"{FIXTURE}:mostly_unused", *args).stdout
    lines = [line for line in text.splitlines() if line.startswith("  JX105 ")]
    assert lines == [
        "  JX105 info    argument params['a'] is unused and was pruned from @main; 5 more like "
        "it: params['b'], params['c'], params['d'] and 2 more (--format json lists every one)"
    ]
    _, report = lower_json(f"{FIXTURE}:mostly_unused", *args)
    assert [f["path"] for f in report["findings"] if f["code"] == "JX105"] == [
        f"params['{k}']" for k in "abcdef"]  # fmt: skip
    page = tmp_path / "report.html"
    result = run_cli("lower", f"{FIXTURE}:mostly_unused", *args, "--format", "html", "-o", page)
    assert result.returncode == 0, result.describe()
    html = page.read_text(encoding="utf-8")
    assert all(f'id="f-{i}"' in html for i in range(6))
    assert "<summary>5 more like it</summary>" in html


def test_keys_of_a_node_without_key_paths_read_alike_on_every_release(lower_json: Any) -> None:
    """``pair[<flat index 0>]`` (JAX 0.4.x) and ``pair[0]`` (newer) are one name: the
    program's spelling stays in ``name``, the status is ok either way."""
    _, report = lower_json(f"{FIXTURE}:swap", "--args-from", f"{FIXTURE}:swap_args")
    for leaf, path in zip(report["inputs"] + report["outputs"],
                          ["pair[0]", "pair[1]", "result[0]", "result[1]"]):  # fmt: skip
        assert (leaf["path"], leaf["status"]) == (path, "ok"), leaf
        assert leaf["name"].replace("<flat index ", "").replace(">", "").endswith(path[-3:])
    assert naming_findings(report) == []


def test_names_jax_took_from_an_advertised_signature_are_a_mismatch(lower_json: Any) -> None:
    """JX109 and the ``mismatch`` status: the program carries ``params``/``inputs``, the
    user's parameters are ``w``/``x`` (a wrapper with its own ``__signature__``)."""
    _, report = lower_json("sample_programs/advertised.py:apply")
    carried = [(leaf["path"], leaf["name"], leaf["status"]) for leaf in report["inputs"]]
    assert carried == [("w", "params", "mismatch"), ("x", "inputs", "mismatch")]
    assert [(f["code"], f["path"], f["message"]) for f in report["findings"]] == [
        ("JX109", "w", "argument w carries the name 'params'"),
        ("JX109", "x", "argument x carries the name 'inputs'"),
    ]
