"""``record`` of functions staged by a library's wrapper (``nnx.jit``,
``eqx.filter_jit``): each argument and result is reported by the user's own path, mapped
as ``lower`` maps the same function (one mapping for both), and a function Equinox
lowers ahead of time (``eqx.filter_jit(f).lower(...)``) is the user's, not Equinox's."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, WARM_PYTHON, run_cli

LIBS = REPO / "sample_programs" / "libraries"

RUNS = {
    "nnx_fsdp": (
        "flax",
        "from flax import nnx",
        """
        model, optimizer, x, y = mod.make()
        mod.train_step(model, optimizer, x, y)
        """,
    ),
    "eqx_parallel": (
        "equinox",
        "import equinox as eqx",
        """
        model = eqx.nn.MLP(4, 2, 16, 2, key=jax.random.PRNGKey(0))
        opt_state = mod.optim.init(eqx.filter(model, eqx.is_array))
        mod.train_step(model, opt_state, jnp.ones((32, 4)), jnp.zeros((32, 2)))
        """,
    ),
}


def _needs_a_flax_that_runs_it(sample: str) -> None:
    """Flax 0.10 cannot run its own FSDP example, recorded or not: ``nnx.jit`` splits
    the call as ``nnx.split`` does, which refuses the optimizer (an ``nnx.Object`` there
    holds no plain arrays)."""
    if sample != "nnx_fsdp":
        return
    import importlib.util

    from flax import nnx

    spec = importlib.util.spec_from_file_location("nnx_fsdp", LIBS / "nnx_fsdp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        nnx.split(module.make()[:2])
    except ValueError as err:
        pytest.skip(f"this Flax cannot run its FSDP example itself: {err}"[:200])


def _run(tmp_path: Path, imports: str, body: str) -> Path:
    """Record ``run.py``, the script of ``body`` (dedented); the recording's folder."""
    script = tmp_path / "run.py"
    header = f"import importlib.util\nimport jax, jax.numpy as jnp\n{imports}\n"
    script.write_text(header + textwrap.dedent(body), encoding="utf-8")
    runs = tmp_path / "runs"
    result = run_cli("record", "-o", runs, "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    return runs


def _loaded(sample: str) -> str:
    path = str(LIBS / f"{sample}.py")
    return (
        f"spec = importlib.util.spec_from_file_location('m', {path!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
    )


def _folder(runs: Path, name: str) -> str:
    index = json.loads((runs / "index.json").read_text(encoding="utf-8"))
    (folder,) = [e["folder"] for e in index["functions"] if e["name"] == name]
    return str(folder)


def _report(runs: Path, name: str) -> dict[str, Any]:
    """``name``'s report as ``show`` reads it (judged: a recording keeps no findings)."""
    shown = run_cli("show", runs / _folder(runs, name), "--format", "json", cwd=runs.parent)
    assert shown.returncode in (0, 1), shown.describe()
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def _leaves(report: dict[str, Any], side: str) -> list[tuple[Any, ...]]:
    return [(leaf["path"], leaf["name"], leaf["status"], leaf["shape"]) for leaf in report[side]
            if leaf["status"] != "pruned"]  # fmt: skip


@pytest.mark.parametrize("sample", sorted(RUNS))
def test_a_wrapped_function_is_recorded_by_the_users_paths_as_lower_maps_it(
    sample: str, tmp_path: Path
) -> None:
    """Recorded, the wrapper's names were shown as the paths (``model.states[0][0]``,
    ``dynamic_donate['first'][0]``) with status ok and no JX111; ``lower`` of the same
    function maps each back to the user's path."""
    library, imports, body = RUNS[sample]
    pytest.importorskip(library, reason=f"{library} is not installed (pip install -e '.[test]')")
    _needs_a_flax_that_runs_it(sample)
    runs = _run(tmp_path, imports, _loaded(sample) + textwrap.dedent(body))
    recorded = _report(runs, "train_step")
    lowered = run_cli("lower", f"sample_programs/libraries/{sample}.py:train_step",
                      "--args-from", "make", "--format", "json")  # fmt: skip
    assert lowered.returncode == 0, lowered.describe()
    expected = json.loads(lowered.stdout)
    assert _leaves(recorded, "inputs") == _leaves(expected, "inputs")
    assert _leaves(recorded, "outputs") == _leaves(expected, "outputs")
    assert "JX111" in [f["code"] for f in recorded["findings"]]
    kept = json.loads((runs / _folder(runs, "train_step") / "report.json").read_text("utf-8"))
    assert kept["findings"] == [], "a recording keeps facts; findings are judged when read"


def test_the_guides_model_is_recorded_by_the_users_paths_on_every_release(
    tmp_path: Path,
) -> None:
    """docs/your-own-model.md's program recorded, then shown (``show --format json``):
    its train step's inputs are the user's paths, those ``lower`` gives the same function
    (``model.up.kernel.value``, ``model['up']['kernel'].value`` on flax 0.10), not the
    names ``nnx.jit`` hands the program (``model.states[0][5]``). Flax 0.10's
    ``nnx.jit`` (beside JAX 0.4.35), a function rather than a ``JitWrapped``, was recorded
    by those names alone."""
    pytest.importorskip("flax.nnx", reason="flax is not installed (pip install -e '.[test]')")
    pytest.importorskip("optax", reason="optax is not installed (pip install -e '.[test]')")
    program = REPO / "sample_programs" / "own_model.py"
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, program, "--steps", "1",
                       cwd=tmp_path)  # fmt: skip
    assert recorded.returncode == 0, recorded.describe()
    index = json.loads((tmp_path / "runs" / "index.json").read_text(encoding="utf-8"))
    (entry,) = [e for e in index["functions"] if e["name"] == "train_step"]
    shown = run_cli("show", Path("runs") / entry["folder"], "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.describe()
    lowered = run_cli("lower", f"{program}:train_step", "--args-from", "make", "--format", "json")
    assert lowered.returncode == 0, lowered.describe()
    expected = json.loads(lowered.stdout)["inputs"]
    assert expected[5]["name"] == "model.states[0][5]" != expected[5]["path"]  # lower maps it
    inputs = json.loads(shown.stdout)["inputs"]
    assert [(i["path"], i["name"], i["status"]) for i in inputs] == [
        (i["path"], i["name"], i["status"]) for i in expected
    ]


def test_equinox_ahead_of_time_lowering_is_recorded_as_the_users_function(
    tmp_path: Path,
) -> None:
    """``eqx.filter_jit(f).lower(...)`` (as Equinox's own test_jit.py does) was recorded
    as ``f at equinox/_jit.py``, its arguments by Equinox's names."""
    pytest.importorskip("equinox", reason="equinox is not installed (pip install -e '.[test]')")
    body = """
        def f(x, scale):
            return {"y": x * scale}

        eqx.filter_jit(f).lower(jnp.ones(3), jnp.float32(2.0))
    """
    runs = _run(tmp_path, "import equinox as eqx", body)
    report = _report(runs, "f")
    script = tmp_path / "run.py"
    line = script.read_text(encoding="utf-8").splitlines().index("def f(x, scale):") + 1
    assert report["function"] == f"f at {script.resolve()}:{line}"
    assert [(i["path"], i["status"]) for i in report["inputs"]] == [
        ("x", "renamed"), ("scale", "renamed")
    ]  # fmt: skip
    assert [o["path"] for o in report["outputs"]] == ["<eqx.filter_jit marker>", "result['y']"]


def test_an_nnx_jit_compile_again_names_the_users_paths_and_call_site(tmp_path: Path) -> None:
    """A second compile of an ``nnx.jit`` step (a wider model) is explained by the user's
    paths (``model.linear.kernel.value``, not ``model.states[0][1]``), at the user's line
    (not Flax's ``compilation.py``), on flax 0.10 too (its ``nnx.jit`` a function, not a
    ``JitWrapped``)."""
    pytest.importorskip("flax.nnx", reason="flax is not installed (pip install -e '.[test]')")
    body = """
        class Model(nnx.Module):
            def __init__(self, width, rngs):
                self.linear = nnx.Linear(4, width, rngs=rngs)

            def __call__(self, x):
                return self.linear(x)


        @nnx.jit
        def step(model, x):
            return model(x).sum()


        step(Model(3, nnx.Rngs(0)), jnp.ones((2, 4)))
        step(Model(5, nnx.Rngs(0)), jnp.ones((2, 4)))
    """
    runs = _run(tmp_path, "from flax import nnx", body)
    compiles = json.loads((runs / "compiles.json").read_text(encoding="utf-8"))["compiles"]
    lines = (tmp_path / "run.py").read_text(encoding="utf-8").splitlines()
    calls = [f"{tmp_path.resolve() / 'run.py'}:{i + 1}" for i, line in enumerate(lines)
             if line.startswith("step(")]  # fmt: skip
    assert [c["call_site"] for c in compiles] == calls
    reasons = {(r["kind"], r["path"]) for r in compiles[1]["reasons"]}
    # as lower spells it: flax 0.10's modules are no pytrees, named by their nnx.state
    spellings = {
        ("shape", "model.linear.kernel.value"),
        ("shape", "model['linear']['kernel'].value"),
    }
    assert reasons & spellings, compiles[1]


SELF_HOLDING = """
import typing as tp
import optax
from flax import nnx


class Node(nnx.Module):
    def __init__(self):
        self.ref: tp.Optional["Node"] = nnx.data(None)
        self.w = nnx.Param(jnp.ones(3))


@nnx.jit(graph=True, graph_updates=True)
def link(m):
    m.ref = m
    return jnp.sum(m.w.value)


node = Node()
link(node)
link(node)  # the module holds itself now: traced again

model = nnx.Linear(4, 2, rngs=nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, x):
    loss, grads = nnx.value_and_grad(lambda m: (m(x) ** 2).mean())(model)
    optimizer.update(model, grads)
    return loss


print("loss", round(float(train_step(model, optimizer, jnp.ones((8, 4)))), 4))


def headroom(n=0):
    try:
        return headroom(n + 1)
    except RecursionError:
        return n


print("recursion headroom over 500:", headroom() > 500)
"""


def test_a_module_that_holds_itself_leaves_the_rest_of_the_run_as_it_was(tmp_path: Path) -> None:
    """``nnx.jit(graph=True)`` of a module that holds itself (as Flax's own TestJIT does),
    then an ordinary training step: the run prints what it prints without ``record``
    (flattening the self-holding call as a pytree spent the run's recursion budget, and
    every later lowering raised ``RecursionError``), and both functions are recorded."""
    pytest.importorskip("flax.nnx", reason="flax is not installed (pip install -e '.[test]')")
    import inspect

    from flax import nnx

    if "graph_updates" not in inspect.signature(nnx.jit).parameters:
        pytest.skip("this Flax's nnx.jit takes no graph_updates")
    script = tmp_path / "run.py"
    script.write_text("import jax, jax.numpy as jnp\n" + SELF_HOLDING, encoding="utf-8")
    plain = run_cli("run.py", command=WARM_PYTHON, cwd=tmp_path)
    assert plain.returncode == 0, plain.describe()
    assert "recursion headroom over 500: True" in plain.stdout
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "run.py", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.describe()
    assert recorded.stdout == plain.stdout
    index = json.loads((tmp_path / "runs" / "index.json").read_text(encoding="utf-8"))
    assert {e["name"] for e in index["functions"]} == {"link", "train_step"}, index
    assert not index.get("failures"), index
