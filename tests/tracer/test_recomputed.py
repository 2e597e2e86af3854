"""What a checkpoint runs again in the backward pass instead of keeping it (``lower
--memory``: ``compiled.recomputed``), with JAX's own lowering of the same function as
the oracle: the lines of the operations JAX lowered under its ``rematted_computation``
scope (the module's locations, read by the test's own reader, each resolved to its file
and line) are the lines the report gives, no more, no fewer; nothing where nothing is
checkpointed; inside a scan, each is said to run once per trip.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, run_python

PROGRAMS = """
import jax, jax.numpy as jnp
from jax.ad_checkpoint import checkpoint_name


def layer(w, x):
    h = checkpoint_name(jnp.tanh(x @ w), "h")
    g = jnp.sin(h @ w)
    return jnp.sum(g ** 2)


def saves_h(w, x):
    policy = jax.checkpoint_policies.save_only_these_names("h")
    return jax.grad(jax.checkpoint(layer, policy=policy))(w, x)


def saves_nothing(w, x):
    policy = jax.checkpoint_policies.nothing_saveable
    return jax.grad(jax.checkpoint(layer, policy=policy))(w, x)


def plain(w, x):
    return jax.grad(layer)(w, x)


def scanned(ws, x):
    def body(h, w):
        return jnp.tanh(h @ w), None

    def loss(ws):
        return jnp.sum(jax.lax.scan(jax.checkpoint(body), x, ws)[0])

    return jax.grad(loss)(ws)
"""

ARGS = {"saves_h": "f32[32,32], f32[8,32]", "saves_nothing": "f32[32,32], f32[8,32]",
        "plain": "f32[32,32], f32[8,32]", "scanned": "f32[4,32,32], f32[8,32]"}  # fmt: skip

RAW = """
import json
import jax, jax.numpy as jnp
import programs

f32 = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)
ARGS = {"saves_h": (f32(32, 32), f32(8, 32)), "saves_nothing": (f32(32, 32), f32(8, 32)),
        "plain": (f32(32, 32), f32(8, 32)), "scanned": (f32(4, 32, 32), f32(8, 32))}
texts = {}
for name, args in ARGS.items():
    lowered = jax.jit(getattr(programs, name)).lower(*args)
    try:
        texts[name] = lowered.as_text(debug_info=True)
    except TypeError:  # 0.4.x: no debug_info argument
        texts[name] = lowered.compiler_ir("stablehlo").operation.get_asm(enable_debug_info=True)
print(json.dumps(texts))
"""


def rematted(text: str) -> set[tuple[str, int]]:
    """(operation, line of programs.py) of each location JAX named in its
    ``rematted_computation`` scope, following ``#loc`` references to the first file line."""
    aliases = dict(re.findall(r"^#(loc\d*) = (.*)$", text, flags=re.MULTILINE))

    def line_of(location: str, seen: frozenset[str] = frozenset()) -> int | None:
        found = re.search(r'"[^"]*programs\.py":(\d+)', location)
        if found:
            return int(found.group(1))
        for reference in re.findall(r"#(loc\d*)\b", location):
            if reference not in seen and (line := line_of(aliases.get(reference, ""),
                                                          seen | {reference})):  # fmt: skip
                return line
        return None

    found = set()
    for location in aliases.values():
        named = re.match(r'loc\("[^"]*/rematted_computation/([\w-]+)"', location)
        if named:
            line = line_of(location)
            assert line is not None, location
            found.add((named.group(1), line))
    return found


@pytest.fixture(scope="module")
def lowered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("recomputed")
    (folder / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    raw = run_python(RAW, cwd=folder)
    assert raw.returncode == 0, raw.describe()
    return folder, json.loads(raw.stdout.strip().splitlines()[-1])


def recomputed(folder: Path, name: str) -> list[dict[str, Any]]:
    result = run_cli("lower", f"programs.py:{name}", "--args", ARGS[name], "--memory",
                     "--format", "json", cwd=folder)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    found: list[dict[str, Any]] = json.loads(result.stdout)["compiled"]["recomputed"]
    return found


CALLS = {n for n, line in enumerate(PROGRAMS.splitlines(), 1) if "jax.checkpoint(" in line}
"""The lines that call ``jax.checkpoint``: 0.7's lowering names each operation it runs
again by that call's line, where the traced program keeps the operation's own."""
BODIES = {n for n, line in enumerate(PROGRAMS.splitlines(), 1)
          if line.startswith("    ") and ("jnp." in line or "return" in line)}  # fmt: skip


@pytest.mark.parametrize("name", list(ARGS))
def test_what_is_recomputed_is_what_jax_lowered_to_run_again(
    name: str, lowered: tuple[Path, dict[str, str]]
) -> None:
    """The lines JAX lowered operations at in its ``rematted_computation`` scope are the
    lines the report gives (by line: one operation of the traced program may lower to
    several, 0.12's ``one_minus_square`` to a ``sub``, a ``mul`` and an ``add``)."""
    folder, texts = lowered
    found = recomputed(folder, name)
    want = {line for _, line in rematted(texts[name])}
    lines = {r["line"] for r in found if r["name"] is None}
    if want and want <= CALLS:  # the release kept no line of their own (0.7)
        assert lines and lines <= BODIES, (lines, want)
    else:
        assert lines == want
    assert all(r["file"].endswith("programs.py") for r in found)
    assert all(r["looped"] == (name == "scanned") for r in found)
    named = [r["name"] for r in found if r["name"] is not None]
    assert named == (["h"] if name == "saves_nothing" else [])  # kept where the policy saves it
    if name == "plain":
        assert found == []  # nothing checkpointed: nothing run again
    else:
        assert want, f"{name}: JAX recomputes nothing: the program tests nothing"
    if name == "saves_h":  # h kept: the tanh is run again for its derivative only
        sin = PROGRAMS.splitlines().index("    g = jnp.sin(h @ w)") + 1
        assert {r["line"] for r in found if r["operation"] == "sin"} == {sin}
