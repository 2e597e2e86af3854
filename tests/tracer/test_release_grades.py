"""The grade of each jaxpr's debug info is what this release's own jaxprs and lowering
carry (raw JAX is the oracle): a lone result's path up to 0.5 is ``""``, the whole path;
the older pmap's body is the program itself, not a nested jaxpr, unless that pmap is
called inside another staged program."""

from __future__ import annotations

import importlib.util
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


def jvp_of_pmap(x, t):
    return jax.jvp(jax.pmap(step), (x, x), (t, t))


JXINSPECT = {"f": {"args": "f32[3]"},
             "step": {"stage": "pmap", "args": "f32[1,3], f32[1,3]"},
             "jvp_of_pmap": {"args": "f32[1,3], f32[1,3]"}}
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


def _raw_nested(jaxpr: Any) -> list[tuple[str, Any]]:
    """``(primitive, debug_info)`` of every jaxpr in the equations' parameters, depth
    first, read from raw JAX's objects (a ``ClosedJaxpr`` holds its ``jaxpr``)."""
    found: list[tuple[str, Any]] = []
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns") and hasattr(inner, "invars"):
                    found.append((eqn.primitive.name, inner.debug_info))
                    found.extend(_raw_nested(inner))
    return found


def test_a_pmap_inside_a_jit_is_nested(tmp_path: Path) -> None:
    """``jit`` of a ``jvp`` of a pmap: the older pmap (0.4.35–0.7) is the one
    ``xla_pmap`` equation of the program, and its body a nested jaxpr like any other,
    graded as JAX's traced jaxpr keeps it (no debug info on 0.4.35: JX107; no names on
    0.7: JX110); newer pmaps nest a jit and a shard_map."""
    report = _lower(tmp_path, "jvp_of_pmap")
    spec = importlib.util.spec_from_file_location("lone", tmp_path / "lone.py")
    assert spec is not None and spec.loader is not None
    lone = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lone)
    x = jax.ShapeDtypeStruct((1, 3), jnp.float32)
    raw = _raw_nested(jax.jit(lone.jvp_of_pmap).trace(x, x).jaxpr.jaxpr)
    assert raw, "raw JAX's jaxpr nests the pmap"
    assert [n["primitive"] for n in report["nested"]] == [p for p, _ in raw], report["nested"]
    messages: dict[str, list[str]] = {}
    for finding in report["findings"]:
        messages.setdefault(finding["code"], []).append(finding["message"])
    for nested, (_, info) in zip(report["nested"], raw):
        if info is None:
            assert nested["quality"] == "missing", nested
            assert any(nested["where"] in m for m in messages.get("JX107", [])), messages
        elif info.arg_names is None:
            assert nested["quality"] == "partial", nested
            assert any(nested["where"] in m for m in messages.get("JX110", [])), messages
