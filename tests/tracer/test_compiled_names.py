"""The name each compiled parameter carries (``compiled_name``, with ``--compile``) equals
the op metadata of that parameter in raw JAX's own compiled HLO text; a pmap compiles on
every release (0.4.x to 0.7 keep no compiled shardings for it: none are shown)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import RAW_JAX_PRELUDE, REPO, run_python

CASES = {
    "sample_programs/mlp.py:predict": """
m = load("mlp")
L = lambda i, o: {"w": S(i, o), "b": S(o)}
compiled = jax.jit(m.predict).lower({"layers": [L(784, 512), L(512, 256), L(256, 10)]},
                                    S(32, 784)).compile()
""",
    "sample_programs/data_parallel.py:step": """
m = load("data_parallel")
params = {"w": S(8, 16, 4), "b": S(8, 4)}
batch = {"x": S(8, 32, 16), "y": S(8, 32, 4)}
compiled = jax.pmap(m.step, axis_name="batch").lower(params, batch).compile()
""",
}

RAW = (
    RAW_JAX_PRELUDE
    + r"""
def S(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)
{call}
text = compiled.as_text()
entry = text[text.index("ENTRY"):]
entry = entry[: entry.index("\n}}")]
names = {{}}
for number, rest in re.findall(r"parameter\((\d+)\)(.*)", entry):
    found = re.search(r'op_name="((?:[^"\\]|\\.)*)"', rest)
    names[int(number)] = found.group(1).replace("\\'", "'") if found else None
print(json.dumps([names[i] for i in sorted(names)]))
"""
)


@pytest.mark.parametrize("target", sorted(CASES))
def test_compiled_names_equal_raw_jax(target: str, run_cli: Any) -> None:
    raw = run_python(RAW.format(repo=str(REPO), call=CASES[target]), warm=True)
    assert raw.returncode == 0, raw.describe()
    expected = json.loads(raw.stdout.strip().splitlines()[-1])
    result = run_cli("lower", target, "--compile", "--format", "json")
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert report["reached"] == "compiled"
    lowered = sorted((i for i in report["inputs"] if i["main_index"] is not None),
                     key=lambda i: i["main_index"])  # fmt: skip
    assert [i["compiled_name"] for i in lowered] == [expected[i["main_index"]] for i in lowered]
    if target.endswith(":predict"):  # jit keeps every name in the compiled program
        assert all(name is not None for name in expected), expected
