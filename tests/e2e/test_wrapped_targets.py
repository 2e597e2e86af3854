"""A target that is already ``jax.jit``-wrapped with static arguments: its own statics
say which arguments are static (the report's ``static`` line), and the arguments JAX
stages are named as raw JAX names them (no note that names are unknown)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import raw_main, run_cli

WRAPPED = """
import functools

import jax


def g(x, n):
    return x * n


by_position = jax.jit(g, static_argnums=1)


@functools.partial(jax.jit, static_argnames="mode")
def by_name(x, mode="add"):
    return x + 1 if mode == "add" else x - 1


JXINSPECT = {"by_position": {"args": "f32[3], 3"},
             "by_name": {"args": "f32[3]", "kwargs": "mode='sub'"}}
"""

CALLS = {
    "by_position": ("lowered = w.by_position.lower(S(3), 3)", {"name": "n", "value": "3"}),
    "by_name": ("lowered = w.by_name.lower(S(3), mode='sub')", {"name": "mode", "value": "'sub'"}),
}


@pytest.mark.parametrize("target", sorted(CALLS))
def test_a_wrapped_targets_own_statics_are_used(tmp_path: Path, target: str) -> None:
    (tmp_path / "w.py").write_text(WRAPPED, encoding="utf-8")
    call, static = CALLS[target]
    result = run_cli("lower", f"w.py:{target}", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert [{"name": s["path"], "value": s["value"]} for s in report["static_args"]] == [static]
    assert not [n for n in report["notes"] if "expected names are unknown" in n], report["notes"]
    raw = raw_main(f"sys.path.insert(0, {str(tmp_path)!r}); import w\n{call}")
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]
    assert [leaf["status"] for leaf in report["inputs"]] == ["ok"]
