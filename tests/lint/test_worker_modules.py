"""A lint worker stages each module's targets as a fresh process would, whatever it
staged before: the user's modules forgotten between modules, and with them what this
tool built against them (the Flax NNX adapter, against a Flax checkout in the project)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

STEP = """\
import sys

import flax
import jax.numpy as jnp
from flax import nnx

print("flax from", flax.__file__, file=sys.stderr)


class Model(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, {width}, rngs=rngs)

    def __call__(self, x):
        return self.linear(x)


@nnx.jit
def step(model, x):
    return model(x).sum()


def make():
    return Model(nnx.Rngs(0)), jnp.ones((2, 4))


JXINSPECT = {{"step": {{"args_from": "make"}}}}
"""


def test_a_flax_checkout_in_the_project_stages_every_module_through_nnx_jit(
    tmp_path: Path,
) -> None:
    """Flax's own examples linted inside its checkout: each module imports the project's
    ``flax``, which the worker forgets between modules. The second module's ``nnx.jit``
    is of a new ``flax``; an adapter kept from the first did not know it, and staging
    it failed (exit 4: ``'Traced' object has no attribute 'jaxpr'``)."""
    flax = pytest.importorskip("flax.nnx", reason="flax is not installed").__name__
    installed = Path(__import__(flax.partition(".")[0]).__file__).parent
    shutil.copytree(installed, tmp_path / "flax", ignore=shutil.ignore_patterns("__pycache__"))
    for name, width in (("a_first.py", 3), ("b_second.py", 5)):
        (tmp_path / name).write_text(STEP.format(width=width), encoding="utf-8")
    result = run_cli("lint", ".", "--no-cache", "--jobs", "1", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.describe()
    said = [line for line in result.stderr.splitlines() if line.startswith("flax from ")]
    assert said == [f"flax from {tmp_path.resolve() / 'flax' / '__init__.py'}"] * 2, said
    targets = json.loads(result.stdout)["targets"]
    assert [t["target"] for t in targets] == ["a_first.py:step", "b_second.py:step"]
    for target in targets:
        assert (target["error"], target["reached"]) == (None, "lowered"), target
        # staged through nnx.jit (which renames the model's leaves), not as a jit object
        assert "JX111" in [f["code"] for f in target["findings"]], target
