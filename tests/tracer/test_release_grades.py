"""The grade of each jaxpr's debug info is what this release's own jaxprs and lowering
carry (raw JAX is the oracle): a lone result's path up to 0.5 is ``""``, the whole path;
the older pmap's body is the program itself, not a nested jaxpr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from helpers import raw_main, run_cli

from jxinspect.tracer import seam

LONE = """
import jax
import jax.numpy as jnp


@jax.jit
def inner(x):
    return jnp.sin(x)


def f(x):
    return inner(x) * 2


def step(x, y):
    return {"loss": jnp.sum(x * y)}


JXINSPECT = {"f": {"args": "f32[3]"},
             "step": {"stage": "pmap", "args": "f32[1,3], f32[1,3]"}}
"""


def _lower(tmp_path: Path, target: str) -> dict[str, Any]:
    (tmp_path / "lone.py").write_text(LONE, encoding="utf-8")
    result = run_cli("lower", f"lone.py:{target}", "--format", "json", cwd=tmp_path)
    assert result.returncode in (0, 1), result.describe()
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_a_lone_result_of_a_nested_jit_is_named(tmp_path: Path) -> None:
    report = _lower(tmp_path, "f")
    raw = jax.make_jaxpr(lambda x: jax.jit(jnp.sin)(x) * 2)(jnp.ones(3))
    info = raw.jaxpr.eqns[0].params["jaxpr"].jaxpr.debug_info
    assert len(info.result_paths) == 1  # "" up to 0.5, "result" later: the whole path
    assert info.result_paths[0] == ("" if not seam.result_paths_prefixed() else "result")
    assert [n["quality"] for n in report["nested"]] == ["ok"]
    assert report["jaxpr"]["quality"] == "ok"
    assert not [f for f in report["findings"] if f["code"] == "JX110"], report["findings"]


def test_the_older_pmaps_body_is_the_program(tmp_path: Path) -> None:
    report = _lower(tmp_path, "step")
    assert "xla_pmap" not in {n["primitive"] for n in report["nested"]}, report["nested"]
    raw = raw_main("lowered = jax.pmap(lambda x, y: {'loss': jnp.sum(x * y)})"
                   ".lower(S(1, 3), S(1, 3))")  # fmt: skip
    named = all(arg["name"] for arg in raw["args"])
    # the top grade says whether the program carries the arguments' names
    assert (report["jaxpr"]["quality"] == "ok") == named, (report["jaxpr"], raw)
