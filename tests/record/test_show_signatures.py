"""``show FOLDER``: a function recorded as several programs shows, in its signature
column (text and HTML) and as ``differs`` (JSON), what each program holds where they
differ, by path, not the first characters of a signature they share."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from helpers import WARM_PYTHON, run_cli

SCRIPT = """
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames="training")
def step(params, batch, training=False):
    scale = 0.5 if training else 1.0
    return {k: v * scale for k, v in params.items()}, batch["x"].sum()


params = {f"layer_{i:02d}": jnp.zeros((64, 64)) for i in range(12)}
step(params, {"x": jnp.ones((32, 64))})
step(params, {"x": jnp.ones((8, 64))})
step(params, {"x": jnp.ones((8, 64))}, training=True)
jax.jit(lambda p: p)(params["layer_00"])
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("signatures")
    (folder / "train.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "train.py", cwd=folder)
    assert result.returncode == 0, result.describe()
    return folder / "runs"


def test_the_text_names_the_inputs_and_statics_that_differ(recording: Path) -> None:
    result = run_cli("show", recording)
    assert result.returncode == 0, result.describe()
    rows = {line.split()[1]: line for line in result.stdout.splitlines()[7:11]}
    # twelve identical parameters come first: what differs is batch['x'] and the static
    assert "  batch['x'] f32[32,64]; no statics  " in rows["step"]
    assert "  batch['x'] f32[8,64]; no statics  " in rows["step.2"]
    assert "  batch['x'] f32[8,64]; training=True  " in rows["step.3"]
    assert "  (f32[64,64])  " in rows["lambda"]  # a function of one program: its types


def test_programs_that_differ_in_nothing_they_take_say_so(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(
        "import jax, jax.numpy as jnp\nx = jnp.ones(4)\n"
        "for lr in (0.1, 0.01):\n    x = jax.jit(lambda p: p * lr)(x)\n",
        encoding="utf-8",
    )
    result = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "loop.py", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    lines = run_cli("show", tmp_path / "runs").stdout.splitlines()
    rows = [line for line in lines if line.startswith("<lambda>")]
    assert len(rows) == 2 and all("  same inputs  " in row for row in rows)


def test_json_and_html_say_the_same(recording: Path) -> None:
    data = json.loads(run_cli("show", recording, "--format", "json").stdout)
    differs = {f["folder"]: f["differs"] for f in data["functions"]}
    text = run_cli("show", recording).stdout
    for folder, said in differs.items():
        if said is not None:
            assert f" {folder} " in text and said in text
    assert differs["lambda"] is None and differs["step.2"].startswith("batch['x'] f32[8,64]")
    page = run_cli("show", recording, "--format", "html").stdout
    assert "<th>signature</th>" in page and "batch[&#x27;x&#x27;] f32[8,64]" in page
