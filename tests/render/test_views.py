"""The views end to end, through the installed ``jxinspect`` command: ``--show jaxpr``,
``--show mlir`` (StableHLO and HLO, ``--debug-info``, ``--max-lines``), ``--show
sharding`` (Shardy and GSPMD, an abstract mesh of 2048 devices), colour, ``--format html``
and the flag errors. The golden runs of ``test_golden.py`` are shared through the session
cache; what the golden files hold is checked here by meaning, not only by bytes.

Raw JAX is the oracle for what differs between releases (pmap's names and per-device
shapes, the partitioner's attributes, how nested jaxprs carry debug info, HLO metadata):
:func:`raw` stages the same samples with plain JAX in a subprocess and the expectations
are read from what that release's own jaxprs and lowerings carry.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    RAW_JAX_PRELUDE,
    REPO,
    SAMPLES,
    SHOW_VIEWS,
    error_line,
    run_python,
    split_views,
    view_run,
)

from jxinspect.tracer import seam

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FIXTURE = "tests/fixtures/targets.py"
WARN = "⚠"
PMAP_PATHS = ("params['b']", "params['w']", "batch['x']", "batch['y']")
PMAP_RESULTS = ("result[0]['b']", "result[0]['w']", "result[1]")
"""``data_parallel.step``'s leaves in flat order."""

# ---- the oracle: what this release's plain JAX stages and lowers ---------------------------------

_ORACLE = (
    RAW_JAX_PRELUDE
    + r"""
def S(*shape, dtype=jnp.float32, **kwargs):
    return jax.ShapeDtypeStruct(shape, dtype, **kwargs)

def info(jaxpr):
    d = getattr(jaxpr, "debug_info", None)
    if d is None:
        return None
    names, paths = getattr(d, "arg_names", None), getattr(d, "result_paths", None)
    paths = paths() if callable(paths) else paths
    return {{"traced_for": str(d.traced_for), "src": d.func_src_info,
            "arg_names": None if names is None else [str(n) for n in names],
            "result_paths": None if paths is None else [str(p) for p in paths]}}

def nested(jaxpr, out):
    for i, eqn in enumerate(jaxpr.eqns):
        for key, value in eqn.params.items():
            items = value if isinstance(value, (tuple, list)) else (value,)
            for j, item in enumerate(items):
                sub = getattr(item, "jaxpr", item)
                if hasattr(sub, "eqns"):
                    label = f"{{key}}[{{j}}]" if isinstance(value, (tuple, list)) else key
                    out.append({{"where": f"{{i}}:{{eqn.primitive.name}}.{{label}}",
                                "primitive": eqn.primitive.name, "info": info(sub)}})
                    nested(sub, out)
    return out

def signature(lowered):
    text = seam.lowered_text(lowered, "stablehlo", False)
    args_text, rest = text[text.index("@main(") + 6:].split(") -> ", 1)
    results = rest.split(" {{\n", 1)[0]
    results = results[1:-1] if results.startswith("(") else results
    return (re.findall(r"%arg\d+: .*?(?=, %arg\d+: |$)", args_text, re.S),
            re.split(r", (?=tensor<)", results))

def arg_names(lowered):
    text = seam.lowered_text(lowered, "stablehlo", True)
    aliases = dict(re.findall(r'^(#loc\d*) = loc\((.*)\)$', text, re.M))
    names = []
    for chunk in re.split(r"%arg\d+: ", text[text.index("@main(") + 6:].split(") -> ", 1)[0])[1:]:
        locs = re.findall(r" loc\(([^()]*(?:\([^()]*\))?)\)", chunk)
        loc = aliases.get(locs[-1], locs[-1]) if locs else ""
        name = re.match(r'^"((?:[^"\\]|\\.)*)"(?!:)', loc)
        names.append(name.group(1) if name else None)
    return names

facts = {{}}
m = load("nested")
closed = jax.jit(m.model).trace(S(6, 32, 32), S(4, 32), S()).jaxpr
facts["nested"] = {{"text": str(closed), "info": info(closed.jaxpr),
                   "nested": nested(closed.jaxpr, [])}}

m = load("data_parallel")
params, batch = {{"w": S(8, 16, 4), "b": S(8, 4)}}, {{"x": S(8, 32, 16), "y": S(8, 32, 4)}}
pmapped = jax.pmap(m.step, axis_name="batch")
top = jax.make_jaxpr(pmapped)(params, batch)
staged = top.eqns[0].params.get("jaxpr") if len(top.eqns) == 1 else None
body = top.eqns[0].params.get("call_jaxpr") if len(top.eqns) == 1 else None
if staged is None and body is not None and getattr(body, "debug_info", None) is not None:
    staged = body  # the older pmap of 0.7 lowers its body, from the body's own debug info
lowered = pmapped.lower(params, batch)
facts["pmap"] = {{"text": str(top), "top": info(top.jaxpr),
                 "staged": None if staged is None else info(getattr(staged, "jaxpr", staged)),
                 "args": signature(lowered)[0], "names": arg_names(lowered),
                 "results": signature(lowered)[1]}}

m = load("sharded")
mesh = seam.make_mesh((4, 2), ("data", "model"), jax.devices()[:8], explicit=False)
N = lambda *spec: NamedSharding(mesh, P(*spec))
tree = lambda: {{"w": S(512, 256, sharding=N("data", "model")), "b": S(256, sharding=N("model"))}}
state = {{"params": tree(), "momentum": tree(), "step": S(dtype=jnp.int32, sharding=N())}}
shard = lambda t: jax.tree_util.tree_map(lambda x: x.sharding, t)
lowered = jax.jit(m.update, donate_argnums=0, in_shardings=(shard(state), shard(tree())),
                  out_shardings=(shard(state), N())).lower(state, tree())
args, results = signature(lowered)
facts["update"] = {{"args": args, "results": results,
                   "hlo": seam.lowered_text(lowered, "hlo", True)}}
print(json.dumps(facts))
"""
)


@functools.cache
def raw() -> dict[str, Any]:
    """What plain JAX of this release stages and lowers for the samples checked here:
    ``nested`` (``model``'s jaxpr text, its debug info and every nested jaxpr's), ``pmap``
    (``data_parallel.step``: the jaxpr, the names the jaxpr pmap stages carries, ``@main``'s
    arguments and their names), ``update`` (``sharded.update``'s ``@main`` signature and
    HLO text with metadata)."""
    result = run_python(_ORACLE.format(repo=str(REPO)), warm=True)
    assert result.returncode == 0, result.describe()
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def carried_note(path: str, carried: str | None) -> str:
    """How the jaxpr view labels a leaf whose jaxpr carries ``carried`` (``None``: the
    jaxpr has no names at all)."""
    if carried is None:
        return f"{path} · {WARN} no name in the jaxpr"
    same = carried == path or "result" + carried == path  # ['y'] is result['y'] up to 0.5
    shown = carried or "''"
    return path if same else f"{path} · {WARN} the jaxpr says {shown}"


def nested_note(where: str, primitive: str, info: dict[str, Any] | None) -> str:
    """The label of a nested jaxpr, from the debug info raw JAX gave it."""
    if info is None:
        return f"{where} · {WARN} no debug info ({primitive} dropped it)"

    def names(values: list[str] | None, what: str) -> str:
        if values is None:
            return f"{WARN} no {what}"
        return "(" + ", ".join(v or "''" for v in values) + ")"

    name, _, place = str(info["src"]).rpartition(" at ")
    return (f"{where} · {info['traced_for']}: {name} at {place.rsplit('/', 1)[-1]} · args "
            f"{names(info['arg_names'], 'argument names')} → "
            f"{names(info['result_paths'], 'result paths')}")  # fmt: skip


def raw_nested(primitive: str, label: str = "") -> str:
    """The label of the one nested jaxpr of ``nested.model`` under ``primitive`` (a prefix:
    ``custom_vjp_call`` is ``custom_vjp_call_jaxpr`` in older releases) at ``label``."""
    (found,) = [n for n in raw()["nested"]["nested"] if n["primitive"].startswith(primitive)
                and n["where"].endswith(f".{label}" if label else "")]  # fmt: skip
    return nested_note(found["where"], found["primitive"], found["info"])


def pmap_status(i: int) -> str:
    """The status of pmap's flat argument ``i``, from the name its ``@main`` carries."""
    name = raw()["pmap"]["names"][i]
    if name is None:
        return "missing"
    if name == PMAP_PATHS[i]:
        return "ok"
    # JAX's fallback names: args[i] (0.8, 0.9), flat_args[i] (0.10)
    return "synthetic" if re.fullmatch(r"(flat_)?args\[\d+\]", name) else "mismatch"


def pmap_result_status(i: int) -> str:
    """The status of pmap's result ``i``, from its ``jax.result_info`` in ``@main`` (empty
    in 0.7; ``[0]['b']``, the older spelling of ``result[0]['b']``, in 0.4.35; the flat
    fallback ``result[0]`` in 0.8 and 0.9)."""
    info = re.search(r'jax\.result_info = "([^"]*)"', raw()["pmap"]["results"][i])
    if info is None or not info[1]:
        return "missing"
    path = info[1] if info[1].startswith("result") else "result" + info[1]
    if path == PMAP_RESULTS[i]:
        return "ok"
    return "synthetic" if re.fullmatch(r"result(\[\d+\])*", path) else "mismatch"


def line_with(text: str, fragment: str) -> str:
    lines = [line for line in text.splitlines() if fragment in line]
    assert len(lines) == 1, f"{len(lines)} lines with {fragment!r}:\n{text}"
    return lines[0]


def source_line(fragment: str) -> int:
    """The line of ``sample_programs/nested.py`` holding ``fragment``."""
    lines = (SAMPLES / "nested.py").read_text(encoding="utf-8").splitlines()
    (number,) = [i for i, line in enumerate(lines, 1) if fragment in line and "``" not in line]
    return number


# ---- the annotated jaxpr ------------------------------------------------------------------------


def test_jaxpr_labels_inputs_outputs_nested_jaxprs_and_sources(lower_text: Any) -> None:
    jaxpr = view_run(lower_text, "nested.model")["jaxpr"]
    facts = raw()["nested"]
    assert line_with(jaxpr, "a:f32[6,32,32]").endswith("# ws")
    # the outputs in flat order: halvings, layer_means, out (named as raw JAX prints them)
    outs = re.fullmatch(r"  in \((.*)\) \}", facts["text"].splitlines()[-1])
    assert outs is not None, facts["text"]
    out, carried = outs.group(1).split(", ")[2], facts["info"]["result_paths"][2]
    assert carried.endswith("['out']"), facts["info"]
    assert line_with(jaxpr, f"    {out},").endswith("# " + carried_note("result['out']", carried))
    assert re.search(r"\{ lambda ; +# jit: model at nested\.py:\d+$", jaxpr, re.M)
    header = "jaxpr={ lambda ; f:f32[4,32] g:f32[32,32]. let"
    assert header in facts["text"]
    scan = line_with(jaxpr, header)
    assert "# " + raw_nested("scan") in scan
    # custom_vjp's jaxpr is the identity: `call_jaxpr=` (0.10), `fun_jaxpr=` (0.4.35)
    identity = r"(\w+=\{ lambda ; \w+:f32\[4,32\])\. let  in \(\w+,\) \}"
    vjp_header = re.search(identity, facts["text"])
    assert vjp_header is not None, facts["text"]
    vjp = line_with(jaxpr, vjp_header.group(1))
    assert "# " + raw_nested("custom_vjp_call") in vjp
    assert "# " + raw_nested("cond", "branches[1]") in jaxpr
    assert "# " + raw_nested("while", "cond_jaxpr") in jaxpr
    scan_eqn = line_with(jaxpr, "= scan[")
    assert scan_eqn.endswith(f"# sample_programs/nested.py:{source_line('lax.scan(body')}")
    loop = line_with(jaxpr, "= while[")
    assert loop.endswith(f"# sample_programs/nested.py:{source_line('lax.while_loop(')}")


def test_jaxpr_states_static_arguments_and_pruned_inputs(lower_text: Any) -> None:
    static = view_run(lower_text, "static_arg.f")["jaxpr"]
    assert static.startswith(
        "# static n = 3 (position 1): baked into the program, not an input\n"
        "# static activation = 'gelu' (keyword): baked into the program, not an input\n"
    )
    pruned = view_run(lower_text, "unused_arg.f")["jaxpr"]
    assert line_with(pruned, "b:f32[100]").endswith("# unused · pruned from @main")


def test_jaxpr_marks_the_names_pmap_lost(lower_text: Any) -> None:
    jaxpr = view_run(lower_text, "data_parallel.step")["jaxpr"]
    facts = raw()["pmap"]
    top = [line for line in facts["text"].splitlines() if line.startswith("{ lambda ; ")][-1]
    first = re.match(r"\{ lambda ; (\w+):f32\[8,4\] ", top)
    assert first is not None, facts["text"]
    # the jaxpr pmap stages: a jit of `_fun` on flat_args (0.8 on), the body (0.7), else
    # pmap's own (0.4.35 names the program from it)
    carried = ((facts["staged"] or facts["top"])["arg_names"] or [None])[0]
    line = line_with(jaxpr, f"    {first.group(1)}:f32[8,4]  ")
    assert line.endswith("# " + carried_note("params['b']", carried))


# ---- the annotated module -----------------------------------------------------------------------


def test_main_signature_is_labelled_beside_the_raw_shardings(lower_text: Any) -> None:
    mlir = view_run(lower_text, "sharded.update")["mlir"]
    args, results = raw()["update"]["args"], raw()["update"]["results"]
    w = line_with(mlir, "%arg1: tensor<512x256xf32>")
    assert args[1] in w  # the raw attributes (Shardy's or GSPMD's, with the alias), verbatim
    assert w.endswith("// state['momentum']['w'] · ok · P('data', 'model') · aliased → out 1")
    # a replicated scalar: `sdy.sharding<@mesh, []>` (0.10), `mhlo.sharding = "{replicated}"`
    # (0.4.35) or no attribute at all (0.7)
    step = line_with(mlir, "%arg4: tensor<i32>")
    assert args[4] in step
    replicated = " · replicated" if "sharding = " in args[4] else ""
    assert step.endswith(f"// state['step'] · ok{replicated} · aliased → out 4")
    result = line_with(mlir, results[-1])
    replicated = " · replicated" if "sharding = " in results[-1] else ""
    assert result.endswith(f"// result[1] · ok{replicated}")
    assert "loc(" not in mlir and "#loc" not in mlir


def test_module_marks_synthetic_names(lower_text: Any) -> None:
    mlir = view_run(lower_text, "data_parallel.step")["mlir"]
    facts = raw()["pmap"]
    # global shapes named flat_args[i] (0.10) or args[i] (0.8, 0.9), per-device shapes
    # without names (0.7) or with the real names (0.4.35)
    arg = line_with(mlir, facts["args"][2])
    status = pmap_status(2)
    said = {"ok": "ok", "missing": f"{WARN} missing: no name"}.get(
        status, f"{WARN} {status}: carries {facts['names'][2]}"
    )
    assert arg.endswith(f"// batch['x'] · {said} · P('batch', None, None)")


def test_hlo_dialect_with_debug_info(lower_text: Any) -> None:
    result = lower_text("sample_programs/sharded.py:update", "--show", "mlir", "--dialect",
                        "hlo", "--debug-info")  # fmt: skip
    hlo = split_views(result.stdout)["mlir"]
    raw_hlo = raw()["update"]["hlo"]
    assert hlo.startswith("HloModule jit_update")
    param = line_with(hlo, " parameter(3)")
    # the raw line as it is (metadata with the name from 0.5 on), then the label
    (raw_param,) = [line for line in raw_hlo.splitlines() if " parameter(3)" in line]
    assert "sharding={devices=[4,2]<=[8]}" in raw_param
    label = "// state['params']['w'] · ok · P('data', 'model') · aliased → out 3"
    assert re.fullmatch(f"{re.escape(raw_param)} +{re.escape(label)}", param), (param, raw_param)
    assert "result[0]['params']['w'] · ok · P('data', 'model')" in line_with(hlo, "ROOT tuple")
    assert ("stack_frame_id=" in hlo) == ("stack_frame_id=" in raw_hlo)


def test_debug_info_keeps_locations_and_max_lines_says_what_it_cut(lower_text: Any) -> None:
    flags = ("sample_programs/mlp.py:predict", "--show", "mlir", "--debug-info")
    full = split_views(lower_text(*flags).stdout)["mlir"].rstrip("\n").splitlines()
    x_at = next(i for i, line in enumerate(full) if line.lstrip().startswith("%arg6:"))
    # 20 lines, or enough to show @main's arguments where MLIR prints the location
    # aliases first (JAX 0.4.35): the cut falls inside @main either way
    keep = max(20, x_at + 2)
    result = lower_text(*flags, "--max-lines", str(keep))
    mlir = split_views(result.stdout)["mlir"].rstrip("\n").splitlines()
    assert len(mlir) == keep + 1
    assert mlir[:keep] == full[:keep]
    x = mlir[x_at]
    assert re.search(r'loc\("x"\)|loc\(#loc\d+\)', x) and x.endswith("// x · ok")
    assert mlir[-1].startswith("// … ") and f"lines not shown (lines {keep + 1}–" in mlir[-1]
    assert "the rest of @main" in mlir[-1] and "location lines" in mlir[-1]


# ---- sharding pictures --------------------------------------------------------------------------


def test_sharding_pictures(lower_text: Any) -> None:
    sharding = view_run(lower_text, "sharded.update")["sharding"]
    assert sharding.startswith("mesh data=4,model=2 (8 devices)")
    grid = sharding.split("P('data', 'model') on mesh data=4,model=2\n", 1)[1]
    assert "  in  grads['w']" in grid.split("\n\n")[0]
    assert "    0:128 |    0    |    1    |" in grid and "  384:512 |    6    |    7    |" in grid
    partial = sharding.split("P('model') on mesh data=4,model=2\n", 1)[1].split("\n\n")[0]
    assert "each block is held by 4 devices (replicated over 'data')" in partial
    assert "all | 0,2,4,6 | 1,3,5,7 |" in partial
    if "sharding = " in raw()["update"]["args"][4]:  # see the module test above
        assert "replicated: a full copy on all 8 devices: in: state['step']" in sharding
    else:
        assert "no sharding recorded (whole on all 8 devices): in: state['step']" in sharding


def test_gspmd_draws_the_same_pictures(lower_text: Any) -> None:
    shardy = view_run(lower_text, "sharded.update")["sharding"]
    result = lower_text("sample_programs/sharded.py:update", "--show", "sharding",
                        "--partitioner", "gspmd")  # fmt: skip
    assert "partitioner gspmd" in result.stdout
    assert split_views(result.stdout)["sharding"] == shardy


def test_abstract_mesh_of_2048_devices_is_summarized(lower_text: Any, run_cli: Any) -> None:
    flags = ("--abstract", "--platform", "tpu", "--mesh", "data=64,model=32", "--args",
             "f32[1024@data,512], f32[512,2048@model]", "--show", "sharding")  # fmt: skip
    if not seam.abstract_meshes_lower():
        result = run_cli("lower", f"{FIXTURE}:matmul", *flags)
        assert result.returncode == 2, result.describe()
        assert error_line(result).startswith(
            f"error: lowering for an abstract mesh (--abstract) needs JAX {seam.ABSTRACT_SINCE} "
        )
        release = seam.jax_version()
        pytest.skip(
            f"lowering for an AbstractMesh needs JAX {seam.ABSTRACT_SINCE}; this is {release}"
        )
    result = lower_text(f"{FIXTURE}:matmul", *flags)
    sharding = split_views(result.stdout)["sharding"]
    assert sharding.startswith("abstract mesh data=64,model=32 (2048 devices)")
    assert "showing 4 of 64 rows (the first 3 and the last 1)" in sharding
    assert "1008:1024 | 2016-2047 |" in sharding
    assert "| 31,63,… (64) |" in sharding
    assert len(sharding.splitlines()) < 40


def test_colour_only_on_request(lower_text: Any, run_cli: Any) -> None:
    plain = view_run(lower_text, "tp.layer_rs")
    assert not ANSI.search("".join(plain.values()))
    result = run_cli("lower", "sample_programs/tp.py:layer_rs", *SHOW_VIEWS, "--color", "always")
    assert result.returncode == 0, result.describe()
    views = split_views(result.stdout)
    assert "\x1b[1;34mlambda\x1b[0m" in views["jaxpr"]
    assert "\x1b[36m%arg0\x1b[0m" in views["mlir"]
    assert "\x1b[" in views["sharding"]
    coloured = unordered(ANSI.sub("", views["jaxpr"]))
    assert coloured.replace(" ", "") == unordered(plain["jaxpr"]).replace(" ", "")


def unordered(jaxpr: str) -> str:
    """Sets JAX 0.7 prints in hash order, which differs between two processes, sorted: a
    value's varying mesh axes (``f32[8,256]{model,data}``) and frozensets."""

    def axes(m: re.Match[str]) -> str:
        return "]{" + ",".join(sorted(m[1].split(","))) + "}"

    def frozen(m: re.Match[str]) -> str:
        return "frozenset({" + ", ".join(sorted(m[1].split(", "))) + "})"

    return re.sub(r"frozenset\(\{([^{}]*)\}\)", frozen, re.sub(r"\]\{([\w,]+)\}", axes, jaxpr))


# ---- the HTML report ----------------------------------------------------------------------------


def test_html_report_is_one_self_contained_file(run_cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = run_cli("lower", "sample_programs/data_parallel.py:step", "--format", "html",
                     "-o", out, "--source")  # fmt: skip
    assert result.returncode == 0 and (result.stdout, result.stderr) == ("", ""), result.describe()
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    outside = re.findall(r"""(?:src|href)\s*=\s*["']?(?!#)[^"'\s>]+|@import|url\(""", page)
    assert outside == [], outside
    pictures = page.count("<figure ")
    assert pictures == 3 and page.count("<svg ") == pictures
    assert re.findall(r"https?://[^\s\"'<]+", page) == ["http://www.w3.org/2000/svg"] * pictures
    for i in range(4):  # synthetic (0.8 on), missing (0.7), ok (0.4.35): see the module test
        assert f'<tr id="in-{i}" data-status="{pmap_status(i)}">' in page
        # a finding about a name the lowering lost links to its leaf
        linked = f'<a class=leaf-link href="#in-{i}">' in page
        assert linked == (pmap_status(i) != "ok"), i
    for i in range(3):
        assert f'<tr id="out-{i}" data-status="{pmap_result_status(i)}">' in page
    assert page.count("<details open>") == 6  # findings, tables, shardings, jaxpr, module
    assert "sample_programs/data_parallel.py:" in page  # --source labels
    facts = raw()["pmap"]
    carried = {*facts["names"], *((facts["staged"] or facts["top"])["arg_names"] or [])}
    assert ("flat_args[0]" in page) == ("flat_args[0]" in carried) and "<script>" in page


# ---- flag errors --------------------------------------------------------------------------------

FLAG_ERRORS = [
    (["--source"], "--source labels jaxpr equations: add --show jaxpr or --format html"),
    (["--show", "mlir", "--source"], "--source labels jaxpr equations"),
    (["--dialect", "hlo"], "--dialect is about the module text: add --show mlir or --format html"),
    (["--debug-info", "--format", "json"], "--debug-info is about the module text"),
    (["--show", "sharding", "--max-lines", "5"], "--max-lines cuts the jaxpr and module texts"),
    (["--show", "jaxpr", "--max-lines", "0"], "--max-lines 0: give a number of lines, 1 or more"),
]


@pytest.mark.parametrize("flags, expected", FLAG_ERRORS, ids=[" ".join(f[0]) for f in FLAG_ERRORS])
def test_view_flag_errors(flags: list[str], expected: str, run_cli: Any) -> None:
    result = run_cli("lower", "sample_programs/mlp.py:predict", *flags)
    assert result.returncode == 2, result.describe()
    assert expected in error_line(result) and result.stdout == ""
