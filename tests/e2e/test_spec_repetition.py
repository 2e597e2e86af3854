"""Repetition in the spec language, through the installed command: ``[f32[512,512]] * 4``
is the list of four layers a real call passes (names equal raw JAX's lowering of the same
function on that list built by hand), and a count past the bound is one line, exit 2."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from helpers import error_line, raw_main, run_cli

MODULE = textwrap.dedent("""
    def stack(layers, x):
        for w, b in layers:
            x = x @ w + b
        return x
""")


def test_a_repeated_list_is_the_list_a_real_call_passes(tmp_path: Path) -> None:
    (tmp_path / "layers.py").write_text(MODULE, encoding="utf-8")
    args = "[(f32[16,16], f32[16])] * 3, f32[2,16]"
    result = run_cli("lower", "layers.py:stack", "--args", args, "--format", "json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    inputs = json.loads(result.stdout)["inputs"]
    raw = raw_main(f"""
import importlib.util
spec = importlib.util.spec_from_file_location("layers", {str(tmp_path / "layers.py")!r})
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
lowered = jax.jit(m.stack).lower([(S(16, 16), S(16))] * 3, S(2, 16))
""")
    assert [leaf["name"] for leaf in inputs] == [a["name"] for a in raw["args"]]
    assert [leaf["name"] for leaf in inputs][:3] == ["layers[0][0]", "layers[0][1]", "layers[1][0]"]
    assert [leaf["shape"] for leaf in inputs] == [[16, 16], [16]] * 3 + [[2, 16]]


@pytest.mark.parametrize(
    "args, column, reason",
    [
        ("[f32[1]] * 1000000000", 11, "a repetition makes more than 100000 values"),
        ("[f32[1]] * 10**9", 13, "unexpected '**'"),
        ("4 * f32[8]", 0, "'*' repeats a list or tuple, e.g. [f32[512,512]] * 4"),
        ("[f32[8]] * -2", 11, "a repetition count must be a non-negative int, e.g. [f32[8]] * 4"),
    ],
)
def test_a_bad_repetition_is_one_line_exit_2(
    tmp_path: Path, args: str, column: int, reason: str
) -> None:
    (tmp_path / "layers.py").write_text(MODULE, encoding="utf-8")
    result = run_cli("lower", "layers.py:stack", "--args", args, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == f"error: --args: bad spec at column {column}: {reason}: {args}"
