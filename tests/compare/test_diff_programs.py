"""`diff-debug runA runB` of two recordings compares each function's programs: an identical
pair of runs is the same program (a persistent cache hit is possible); a value drawn at
import and baked into the program is JX404 (exit 1), across two runs or within one."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, needs_axis_types, run_cli

SCRIPT = """
import os
import jax
import jax.numpy as jnp

SCALE = float(os.environ.get("SCALE", "2.0"))  # drawn when the module is imported


@jax.jit
def scaled(x):
    return jnp.sin(x) * SCALE  # <-- baked


@jax.jit
def plain(x):
    return x + 1.0


scaled(jnp.ones(3))
plain(jnp.ones(3))
if os.environ.get("AGAIN"):  # the global changes, the caches are cleared: a new program
    SCALE = 5.0
    jax.clear_caches()
    scaled(jnp.ones(3))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("programs")
    (folder / "run.py").write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    for name, env in (("a", {}), ("b", {}), ("c", {"SCALE": "3.0"}), ("d", {"AGAIN": "1"})):
        result = run_cli("record", "-o", name, "--", *WARM_PYTHON, "run.py", cwd=folder, env=env)
        assert result.returncode == 0, result.describe()
    return folder


def diff(folder: Path, *args: str) -> Any:
    return run_cli("diff-debug", *args, cwd=folder)


def test_an_identical_pair_of_runs_is_the_same_program(runs: Path) -> None:
    result = diff(runs, "a", "b")
    assert result.returncode == 0, result.describe()
    same = "program: same program (a persistent cache hit is possible)"
    assert result.stdout.count(same) == 2, result.stdout
    data = json.loads(diff(runs, "a", "b", "--format", "json").stdout)
    assert data["findings"] == []
    for target in data["targets"]:
        program = target["program"]
        assert program["before_identity"] == program["after_identity"]
        assert program["difference"] is None and program["across"] == "runs"


def test_a_value_drawn_at_import_is_jx404_across_two_runs(runs: Path) -> None:
    result = diff(runs, "a", "c")
    assert result.returncode == 1, result.describe()
    line = next(n for n, t in enumerate((runs / "run.py").read_text().splitlines(), 1)
                if t.endswith("# <-- baked"))  # fmt: skip
    where = re.escape(f"run.py:{line}")  # the text says it relative to the working folder
    assert "error JX404 `scaled`: the same source with the same inputs lowered to different " \
        "programs in two runs (a and c)" in result.stdout  # fmt: skip
    assert re.search(rf"dense<2\.000000e\+00> : tensor<f32>` \({where}\) vs", result.stdout)
    assert re.search(rf"dense<3\.000000e\+00> : tensor<f32>` \({where}\)", result.stdout)
    assert "FAIL: 0 regressions, 0 improvements, 0 neutral, 1 finding" in result.stdout
    assert result.stdout.count("program: same program") == 1  # `plain` is the same
    data = json.loads(diff(runs, "a", "c", "--format", "json").stdout)
    (finding,) = data["findings"]
    decorated = (runs / "run.py").read_text().splitlines().index("def scaled(x):")  # its @jax.jit
    assert (finding["code"], finding["severity"], finding["line"]) == ("JX404", "error", decorated)
    allowed = diff(runs, "a", "c", "--fail-on", "never")
    assert allowed.returncode == 0, allowed.describe()
    markdown = diff(runs, "a", "c", "--format", "markdown").stdout
    assert "### Findings" in markdown and "JX404" in markdown


def test_an_edited_function_is_a_difference_not_jx404(runs: Path, tmp_path: Path) -> None:
    edited = tmp_path / "edited"
    edited.mkdir()
    (edited / "run.py").write_text(
        textwrap.dedent(SCRIPT).replace("* SCALE", "* SCALE * 2.0"), encoding="utf-8"
    )
    result = run_cli("record", "-o", "e", "--", *WARM_PYTHON, "run.py", cwd=edited)
    assert result.returncode == 0, result.describe()
    compared = run_cli("diff-debug", runs / "a", edited / "e", cwd=tmp_path)
    assert compared.returncode == 0, compared.describe()
    assert "program: different (" in compared.stdout and "JX404" not in compared.stdout


def test_a_new_program_within_one_run_is_jx404(runs: Path) -> None:
    result = diff(runs, "a", "d")
    assert result.returncode == 1, result.describe()
    assert "error JX404 `scaled`: the same source with the same inputs lowered to different " \
        "programs in one run (d/scaled and d/scaled.2)" in result.stdout  # fmt: skip
    assert "dense<5.000000e+00>" in result.stdout


NNX_TRAIN = """
import os
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
import jax, jax.numpy as jnp, optax
from flax import nnx


class Block(nnx.Module):
    def __init__(self, rngs):
        self.lin = nnx.Linear(8, 8, bias_init=nnx.initializers.zeros_init(), rngs=rngs)

    def __call__(self, x):
        return self.lin(x)


@nnx.jit
def create_sharded():
    return Block(nnx.Rngs(0))


@nnx.jit(donate_argnums=(0, 1, 2))
def train_step(model, optimizer, x):
    loss, grads = nnx.value_and_grad(lambda m: (m(x) ** 2).mean())(model)
    optimizer.update(model, grads)
    return loss


model = create_sharded()
optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
for rows in (16, 8):
    print(float(train_step(model, optimizer, jnp.ones((rows, 8)))))
"""


@needs_axis_types
def test_a_step_whose_donation_changed_is_compared_and_a_helper_edit_is_no_jx404(
    tmp_path: Path,
) -> None:
    """Two recordings of one NNX program, edited between them: ``Block.__init__`` (which
    ``create_sharded`` calls; its own text is the same) and the step's donation (two
    programs each side, by batch size). Each step program is compared with its
    counterpart, the donation change said; ``create_sharded``'s program differs, and no
    JX404 says its source was the same: the source it was traced from changed."""
    pytest.importorskip("flax.nnx", reason="flax is not installed (pip install -e '.[test]')")
    pytest.importorskip("optax", reason="optax is not installed (pip install -e '.[test]')")
    after = NNX_TRAIN.replace("zeros_init()", "ones_init()").replace("(0, 1, 2)", "(0, 1)")
    for name, text in (("before", NNX_TRAIN), ("after", after)):
        (tmp_path / "train.py").write_text(textwrap.dedent(text), encoding="utf-8")
        result = run_cli("record", "-o", name, "--", *WARM_PYTHON, "train.py", cwd=tmp_path)
        assert result.returncode == 0, result.describe()
    compared = diff(tmp_path, "before", "after", "--format", "json")
    assert compared.returncode == 0, compared.describe()
    data = json.loads(compared.stdout)
    assert not data.get("only_before") and not data.get("only_after"), data
    names = [t["name"] for t in data["targets"]]
    assert names[0] == "create_sharded" and len(names) == 3, names
    assert all(n.startswith("train_step") for n in names[1:]), names
    assert "f32[16,8]" in names[1] and "f32[8,8]" in names[2], names
    for target in data["targets"][1:]:
        donation = [c for c in target["changes"] if c["class"] == "donation"]
        assert [(c["path"], c["before"], c["after"]) for c in donation] == [
            ("x", "requested, unused", None)], target["changes"]  # fmt: skip
    text = diff(tmp_path, "before", "after")
    assert "program: different (" in text.stdout.split("== train_step")[0], text.stdout
    assert "JX404" not in text.stdout and "one side only" not in text.stdout, text.stdout
