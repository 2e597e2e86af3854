"""Readable on a real model: paths as ruff and pytest print them, tables bounded for a
terminal, a wrapper's state one finding (through the command, on a 60-leaf NNX step)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import flax
from helpers import REPO, needs_axis_types, run_cli

from jxinspect.render.common.source import paths_shown, shown_path, source_text
from jxinspect.render.common.table import capped
from jxinspect.tracer import seam

NNX_STEP = ("lower", "tests/fixtures/nnx_transformer.py:train_step", "--args-from", "make",
            "--devices", "8", "--mesh", "data=2,model=4")  # fmt: skip


def test_paths_relative_here_and_by_package_for_libraries() -> None:
    here = os.path.join(os.getcwd(), "pkg", "model.py")
    library = os.path.join(os.path.dirname(flax.__file__), "nnx", "nn", "linear.py")
    assert shown_path(here) == os.path.join("pkg", "model.py")
    assert shown_path(library) == "flax/nnx/nn/linear.py"
    assert shown_path("/elsewhere/model.py") == "/elsewhere/model.py"
    assert source_text(here, 3, library, 1342) == "pkg/model.py:3 (flax/nnx/nn/linear.py:1342)"
    assert paths_shown(f"step at {here}:21") == "step at pkg/model.py:21"


def _section(stdout: str, head: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    return lines[start:]


@needs_axis_types
def test_memory_of_a_real_model_fits_a_terminal_and_json_keeps_every_buffer() -> None:
    result = run_cli(*NNX_STEP, "--memory")
    assert result.returncode in (0, 1), result.stderr
    section = _section(result.stdout, "memory at the peak:")
    assert len(result.stdout.splitlines()) <= 150  # the whole report, its 121 leaves bounded
    assert max(len(line) for line in section) <= 250
    inputs = _section(result.stdout, "inputs (61)")
    rest = next(line for line in inputs if line.startswith("  and "))
    assert rest.endswith("per device): lower without --memory lists every one"), rest
    listed = inputs[2 : inputs.index(rest)]
    assert len(listed) == 20 and "model.embed.embedding.value" in "".join(listed)
    assert any(line.strip().startswith("and ") and "more (" in line for line in section)
    assert str(REPO) not in result.stdout
    assert "function:     train_step at tests/fixtures/nnx_transformer.py:" in result.stdout
    kept = _section(result.stdout, "kept for the backward pass:")
    sizes = [
        line.split()[0:2] for line in kept[2:] if line.startswith("  ") and "more (" not in line
    ]
    units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
    bytes_ = [float(n) * units[u] for n, u in sizes]
    assert bytes_ == sorted(bytes_, reverse=True)
    data = json.loads(run_cli(*NNX_STEP, "--memory", "--format", "json").stdout)
    buffers = data["compiled"]["peak"]["buffers"]
    assert len(buffers) > 20
    assert data["file"] == str(REPO / "tests/fixtures/nnx_transformer.py")


@needs_axis_types
def test_collectives_and_why_fit_a_terminal() -> None:
    """One run shows both (``--why`` compiles): the collectives table, then why each is
    there."""
    result = run_cli(*NNX_STEP, "--why", "--show", "collectives")
    assert result.returncode in (0, 1), result.stderr
    why = _section(result.stdout, "why each collective")
    table = _section(result.stdout, "collectives (")[: -len(why)]
    for section in (table, why):
        assert 1 < len(section) <= 150 and max(len(line) for line in section) <= 250
    assert str(Path(flax.__file__).parent) not in result.stdout


@needs_axis_types
def test_why_of_the_guides_model_fits_a_terminal() -> None:
    """The guide's own model (docs/your-own-model.md), whose gradients' all-reduce carries
    two axes' routes of several hops each (390 characters on one line before): a value's
    axes then take a line each."""
    result = run_cli("lower", "sample_programs/own_model.py:train_step", "--args-from", "make",
                     "--why", cwd=REPO)  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    section = _section(result.stdout, "why each collective")
    assert max(len(line) for line in section) <= 250, max(section, key=len)
    assert any(line.startswith("       data ← ") for line in section), section


REPLICATED = """
import jax.numpy as jnp

ARGS = ", ".join(f"{{k}}: f32[1024,1024]" for k in "{keys}".split())
JXINSPECT = {{"step": {{"devices": 8, "mesh": "data=8", "explicit": False, "in_specs": "P()",
                      "args": "{{" + ARGS + "}}"}}}}


def step(params):
    return sum(jnp.sum(v) for v in params.values())
"""


def test_a_group_of_findings_names_the_examples_that_fit_in_a_line(tmp_path: Path) -> None:
    """Four large replicated arguments of long names: JX201 once, in ``lower``'s and
    ``lint``'s text, within 250 characters (the three other names, written out, would
    take it to about 320): the examples that fit, the rest counted. One message longer
    than a line goes on on the next, under its start."""
    keys = [f"projection_weights_of_layer_{i}" for i in range(4)]
    (tmp_path / "m.py").write_text(REPLICATED.format(keys=" ".join(keys)), encoding="utf-8")
    for command in (("lower", "m.py:step"), ("lint", "m.py")):
        result = run_cli(*command, cwd=tmp_path)
        assert result.returncode in (0, 1), result.describe()
        (line,) = [line for line in result.stdout.splitlines() if "JX201" in line]
        assert len(line) <= 250, line
        assert f"params['{keys[0]}']" in line and "; 3 more like it: " in line, line
        assert f"params['{keys[1]}'] and 2 more (--format json lists every one)" in line, line
        full = line.replace(" and 2 more (--format json lists every one)", "") + "".join(
            f", params['{k}']" for k in keys[2:]
        )
        assert len(full) > 250, full
    long_name = "weights_" * 25  # one finding whose message alone is over 250 characters
    (tmp_path / "m.py").write_text(REPLICATED.format(keys=long_name), encoding="utf-8")
    for command in (("lower", "m.py:step"), ("lint", "m.py")):
        lines = run_cli(*command, cwd=tmp_path).stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if "JX201" in line)
        first, rest = lines[start], lines[start + 1]
        column = first.index("argument ")
        assert len(first) <= 250 and rest[:column].isspace() and rest[column] != " ", lines
        said = f"{first[column:]} {rest[column:]}"
        assert said.startswith(f"argument params['{long_name}'] (f32[1024,1024], 4.0 MiB)")
        assert said.endswith("is replicated on all 8 devices (threshold 1.0 MiB)"), said


def test_a_source_cell_cut_keeps_the_librarys_file_and_line() -> None:
    """A cell ``user.py:40 (library/path.py:431)`` too long for its column loses the start
    of the library's path, at a folder where one fits; other cells, and a source cell
    whose library file cannot fit, lose their end."""
    cell = "sample_programs/own_model.py:40 (flax/nnx/nn/linear.py:422)"
    assert capped(cell, len(cell)) == cell
    assert capped(cell, 55) == "sample_programs/own_model.py:40 (…/nn/linear.py:422)"
    assert capped(cell, 49) == "sample_programs/own_model.py:40 (…/linear.py:422)"
    assert capped(cell, 48) == "sample_programs/own_model.py:40 (…linear.py:422)"
    assert capped(cell, 40) == cell[:39] + "…"
    assert capped("x" * 90) == "x" * 79 + "…"


def test_the_collectives_table_keeps_the_librarys_line() -> None:
    """The guide's model (docs/your-own-model.md): its collectives' source cells, cut to
    the table's column, end in a file and line: the library's beside the user's where the
    release's compiled program holds the whole stack (0.10 on), the library's alone
    before (its metadata's one frame)."""
    result = run_cli("lower", "sample_programs/own_model.py:train_step", "--args-from", "make",
                     "--compile", "--show", "collectives", cwd=REPO)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    rows = _section(result.stdout, "collectives (")[2:]
    cells = [re.split(r"\s{2,}", row.strip())[-1] for row in rows if row.strip()[:1].isdigit()]
    assert cells and all(re.search(r"\.py:\d+\)?$", cell) for cell in cells), rows  # never …
    beside = [cell for cell in cells if re.match(r"sample_programs/own_model\.py:\d+ \(", cell)]
    if seam.running_since("0.10.0"):  # the compiled stack's tables: the user's line too
        assert any(re.search(r"\(…\S*linear\.py:\d+\)$", cell) for cell in beside), rows
