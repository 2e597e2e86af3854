"""NamedTuples and pytree dataclasses in the spec language, through the installed
command: written by their class's import path with their fields, looked up among the
modules the target imported (nothing is imported for them), and built as the class."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from helpers import error_line, run_cli

MODULE = textwrap.dedent("""
    import dataclasses
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp
    import optax


    class State(NamedTuple):
        w: jnp.ndarray
        n: jnp.ndarray


    @dataclasses.dataclass(frozen=True)
    class Pair:
        a: jnp.ndarray
        b: jnp.ndarray


    jax.tree_util.register_dataclass(Pair, data_fields=["a", "b"], meta_fields=[])


    def f(state, pair, x):
        return state.w * x + state.n + pair.a - pair.b


    def adam(state, x):
        return state[0].mu["w"] * x + state[0].count
""")


def write(tmp_path: Path) -> Path:
    (tmp_path / "structs.py").write_text(MODULE, encoding="utf-8")
    return tmp_path


def test_a_named_tuple_and_a_dataclass_are_built_as_their_classes(tmp_path: Path) -> None:
    folder = write(tmp_path)
    args = "structs.State(w=f32[3], n=i32[]), structs.Pair(a=f32[3], b=f32[3]), f32[3]"
    result = run_cli("lower", "structs.py:f", "--args", args, "--format", "json", cwd=folder)
    assert result.returncode == 0, result.describe()
    paths = [leaf["path"] for leaf in json.loads(result.stdout)["inputs"]]
    assert paths == ["state.w", "state.n", "pair.a", "pair.b", "x"]


def test_a_library_state_is_written_by_its_import_path(tmp_path: Path) -> None:
    folder = write(tmp_path)
    args = ("(optax._src.transform.ScaleByAdamState(count=i32[], mu={'w': f32[3]}, "
            "nu={'w': f32[3]}), optax._src.base.EmptyState()), f32[3]")  # fmt: skip
    result = run_cli("lower", "structs.py:adam", "--args", args, "--format", "json", cwd=folder)
    assert result.returncode == 0, result.describe()
    found = [(leaf["path"], leaf["status"]) for leaf in json.loads(result.stdout)["inputs"]]
    assert found == [("state[0].count", "ok"), ("state[0].mu['w']", "ok"),
                     ("state[0].nu['w']", "pruned"), ("x", "ok")]  # fmt: skip


def test_a_path_that_names_no_imported_class_is_one_line_and_runs_nothing(
    tmp_path: Path,
) -> None:
    folder = write(tmp_path)
    marker = tmp_path / "ran"
    cases = {
        f"os.system(command='touch {marker}'), 1, f32[3]": "os.system is not a NamedTuple",
        "antigravity.Fly(w=f32[3]), 1, f32[3]": "no module the target has imported holds it",
        "structs.State(w=f32[3]), 1, f32[3]": "structs.State(...) could not be built",
        "structs.State(f32[3]), 1, f32[3]": "takes its fields by name",
    }
    for args, reason in cases.items():
        result = run_cli("lower", "structs.py:f", "--args", args, cwd=folder)
        assert result.returncode == 2, result.describe()
        assert reason in error_line(result), result.describe()
    assert not marker.exists()
