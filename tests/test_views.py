"""The views end to end, through the installed ``jxinspect`` command: ``--show jaxpr``,
``--show mlir`` (StableHLO and HLO, ``--debug-info``, ``--max-lines``), ``--show
sharding`` (Shardy and GSPMD, an abstract mesh of 2048 devices), colour, ``--format html``
and the flag errors. The golden runs of ``test_golden.py`` are shared through the session
cache; what the golden files hold is checked here by meaning, not only by bytes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import SAMPLES, SHOW_VIEWS, error_line, split_views
from test_golden import view_run

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FIXTURE = "tests/fixtures/targets.py"


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
    assert line_with(jaxpr, "a:f32[6,32,32]").endswith("# ws")
    assert line_with(jaxpr, "    bn,").endswith("# result['out']")
    assert re.search(r"\{ lambda ; +# jit: model at nested\.py:\d+$", jaxpr, re.M)
    scan = line_with(jaxpr, "jaxpr={ lambda ; f:f32[4,32] g:f32[32,32]. let")
    assert "# 0:scan.jaxpr · scan: body at nested.py:" in scan and "(h, w) → (result[0]" in scan
    vjp = line_with(jaxpr, "call_jaxpr={ lambda ; bb:f32[4,32]")
    assert "custom_vjp fun: clip_gradient" in vjp
    assert "⚠ no argument names → ⚠ no result paths" in vjp
    assert "# 4:cond.branches[1] · cond: <lambda>" in jaxpr
    assert "# 5:while.cond_jaxpr · while_cond: cond_fun" in jaxpr
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
    line = line_with(jaxpr, "bl:f32[8,4]  ")
    assert line.endswith("# params['b'] · ⚠ the jaxpr says flat_args[0]")


# ---- the annotated module -----------------------------------------------------------------------


def test_main_signature_is_labelled_beside_the_raw_shardings(lower_text: Any) -> None:
    mlir = view_run(lower_text, "sharded.update")["mlir"]
    w = line_with(mlir, "%arg1: tensor<512x256xf32>")
    assert '#sdy.sharding<@mesh, [{"data"}, {"model"}]>' in w
    assert w.endswith("// state['momentum']['w'] · ok · P('data', 'model') · aliased → out 1")
    step = line_with(mlir, "%arg4: tensor<i32>")
    assert step.endswith("// state['step'] · ok · replicated · aliased → out 4")
    result = line_with(mlir, 'tensor<f32> {jax.result_info = "result[1]"')
    assert result.endswith("// result[1] · ok · replicated")
    assert "loc(" not in mlir and "#loc" not in mlir


def test_module_marks_synthetic_names(lower_text: Any) -> None:
    mlir = view_run(lower_text, "data_parallel.step")["mlir"]
    arg = line_with(mlir, "%arg2: tensor<8x32x16xf32>")
    note = "// batch['x'] · ⚠ synthetic: carries flat_args[2] · P('batch', None, None)"
    assert arg.endswith(note)


def test_hlo_dialect_with_debug_info(lower_text: Any) -> None:
    result = lower_text("sample_programs/sharded.py:update", "--show", "mlir", "--dialect",
                        "hlo", "--debug-info")  # fmt: skip
    hlo = split_views(result.stdout)["mlir"]
    assert hlo.startswith("HloModule jit_update")
    param = line_with(hlo, " parameter(3)")
    assert "sharding={devices=[4,2]<=[8]}" in param and 'metadata={op_name="state' in param
    assert param.endswith("// state['params']['w'] · ok · P('data', 'model') · aliased → out 3")
    assert "result[0]['params']['w'] · ok · P('data', 'model')" in line_with(hlo, "ROOT tuple")
    assert "stack_frame_id=" in hlo


def test_debug_info_keeps_locations_and_max_lines_says_what_it_cut(lower_text: Any) -> None:
    result = lower_text("sample_programs/mlp.py:predict", "--show", "mlir", "--debug-info",
                        "--max-lines", "20")  # fmt: skip
    mlir = split_views(result.stdout)["mlir"].rstrip("\n").splitlines()
    assert len(mlir) == 21
    x = next(line for line in mlir if line.lstrip().startswith("%arg6:"))
    assert re.search(r'loc\("x"\)|loc\(#loc\d+\)', x) and x.endswith("// x · ok")
    assert mlir[-1].startswith("// … ") and "lines not shown (lines 21–" in mlir[-1]
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
    assert "replicated: a full copy on all 8 devices: in: state['step']" in sharding


def test_gspmd_draws_the_same_pictures(lower_text: Any) -> None:
    shardy = view_run(lower_text, "sharded.update")["sharding"]
    result = lower_text("sample_programs/sharded.py:update", "--show", "sharding",
                        "--partitioner", "gspmd")  # fmt: skip
    assert "partitioner gspmd" in result.stdout
    assert split_views(result.stdout)["sharding"] == shardy


def test_abstract_mesh_of_2048_devices_is_summarized(lower_text: Any) -> None:
    result = lower_text(f"{FIXTURE}:matmul", "--abstract", "--platform", "tpu", "--mesh",
                        "data=64,model=32", "--args", "f32[1024@data,512], f32[512,2048@model]",
                        "--show", "sharding")  # fmt: skip
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
    assert ANSI.sub("", views["jaxpr"]).replace(" ", "") == plain["jaxpr"].replace(" ", "")


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
    for i in range(4):
        assert f'<tr id="in-{i}" data-status="synthetic">' in page
        assert f'<a class=leaf-link href="#in-{i}">' in page
    for i in range(3):
        assert f'<tr id="out-{i}" data-status="ok">' in page
    assert page.count("<details open>") == 6  # findings, tables, shardings, jaxpr, module
    assert "sample_programs/data_parallel.py:" in page  # --source labels
    assert "flat_args[0]" in page and "<script>" in page


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
