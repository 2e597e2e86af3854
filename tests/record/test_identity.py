"""A program's identity, from real lowerings: locations, the function's name and the
names its arguments and results carry are kept apart; every operation, constant, type
and sharding is part of it."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from jxinspect.record import identity
from jxinspect.tracer import seam

FIRST = """
import jax.numpy as jnp


def step(params, x):
    y = x @ params["w"]
    return {"loss": jnp.sum(y * 2.0)}
"""

MOVED_AND_RENAMED = """
import jax.numpy as jnp

# lines added above: every location moves


def update(weights, batch):
    out = batch @ weights["w"]
    return {"total": jnp.sum(out * 2.0)}
"""

OTHER_CONSTANT = FIRST.replace("2.0", "3.0")


def lowered_text(tmp: Path, name: str, source: str, function: str) -> str:
    path = tmp / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), scope)
    lowered = jax.jit(scope[function]).lower({"w": jnp.ones((3, 2))}, jnp.ones((4, 3)))
    return seam.program_text(lowered)


def test_locations_and_names_are_kept_apart(tmp_path: Path) -> None:
    first = lowered_text(tmp_path, "first", FIRST, "step")
    moved = lowered_text(tmp_path, "moved", MOVED_AND_RENAMED, "update")
    assert "loc(" in first and "#loc" in first
    # the result path, as this release spells it (0.4.35: ['loss'], later result['loss'])
    assert re.search(r"jax\.result_info = \"(result)?\['loss'\]\"", first), first
    one, two = identity.identity_of(first, None), identity.identity_of(moved, None)
    assert one.program == two.program  # the same program
    assert one.names != two.names  # carrying other names
    assert identity.identity_of(first, "s") == identity.identity_of(first, "s")


def test_a_constant_is_another_program_and_its_operation_says_where(tmp_path: Path) -> None:
    first = lowered_text(tmp_path, "first", FIRST, "step")
    other = lowered_text(tmp_path, "other", OTHER_CONSTANT, "step")
    assert identity.identity_of(first, None).program != identity.identity_of(other, None).program
    ops, others = identity.operations(first), identity.operations(other)
    differing = [
        (a, b) for a, b in zip(ops, others) if identity.comparable(a) != identity.comparable(b)
    ]
    (before, after), *_ = differing
    assert "2.000000e+00" in before.text and "3.000000e+00" in after.text
    at = ops.index(before)
    assert identity.line_of(ops, at) == f"{tmp_path / 'first.py'}:7"
    assert identity.line_of(others, at) == f"{tmp_path / 'other.py'}:7"
    assert all("loc(" not in op.text for op in ops)


def test_the_source_digest_reads_the_whole_function(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("import jax\n\n@jax.jit\ndef f(x):\n    return x + 1\n", encoding="utf-8")
    digest = identity.source_digest(f"f at {path}:3")
    path.write_text("import jax\n\n@jax.jit\ndef f(x):\n    return x + 2\n", encoding="utf-8")
    import linecache

    linecache.checkcache(str(path))
    assert digest is not None and identity.source_digest(f"f at {path}:3") != digest
    assert identity.source_digest(None) is None
    assert identity.source_digest(f"f at {tmp_path / 'gone.py'}:3") is None
