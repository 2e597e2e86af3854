"""Targets that plain ``jit`` could not stage or named badly, without a model library:
pytrees with non-array leaves (staged as ``eqx.filter_jit`` does), a function that only
updates its arguments in place (JX112), ``--out-axes`` and the function line of a
``pmap`` of a ``functools.partial``. Raw JAX is the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import jax
from helpers import REPO, error_line, run_cli

from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir

SAMPLE = "sample_programs/non_arrays.py"


def _report(*args: str) -> dict:  # type: ignore[type-arg]
    result = run_cli("lower", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _main_names(lowered: object) -> list[str | None]:
    module = seam.stablehlo_module(lowered)
    with module.context:
        return seam.block_argument_names(mlir.find_main(module))


def test_function_leaves_are_static_and_arrays_keep_their_paths() -> None:
    report = _report(f"{SAMPLE}:loss")
    names = [leaf["name"] for leaf in report["inputs"]]
    assert [leaf["status"] for leaf in report["inputs"]] == ["ok"] * 3
    assert names == ["model['layers'][0]['w']", "model['layers'][1]['w']", "x"]
    # the oracle: raw jit of the same function with the non-array leaves closed over
    import importlib.util

    spec = importlib.util.spec_from_file_location("non_arrays", REPO / SAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, x = module.make_model()
    weights = {"layers": [{"w": layer["w"]} for layer in model["layers"]]}
    acts = [layer["act"] for layer in model["layers"]]

    def raw(model, x):  # type: ignore[no-untyped-def]
        full = {"layers": [dict(w=layer["w"], act=a) for layer, a in zip(model["layers"], acts)]}
        return module.loss(full, x)

    assert _main_names(jax.jit(raw).lower(weights, x)) == names
    statics = {s["path"] for s in report["static_args"]}
    assert statics == {"model['layers'][0]['act']", "model['layers'][1]['act']", "model['name']"}
    assert any("staged as eqx.filter_jit does" in note for note in report["notes"])


def test_unstageable_leaf_names_its_path_and_type() -> None:
    result = run_cli("lower", f"{SAMPLE}:loss", "--args-from", "make_model", "--stage", "pmap",
                     "--devices", "2")  # fmt: skip
    line = error_line(result)
    assert result.returncode == 3
    assert "argument model['layers'][0]['act'] is a function (tanh), not an array" in line


def test_nothing_staged_is_a_finding() -> None:
    report = _report(f"{SAMPLE}:accumulate")
    assert report["outputs"] == [] and {i["status"] for i in report["inputs"]} == {"pruned"}
    assert [f["code"] for f in report["findings"] if f["code"] == "JX112"] == ["JX112"]
    explained = run_cli("explain", "JX112")
    assert explained.returncode == 0 and "nnx.jit" in explained.stdout


def test_out_axes_stages_pmap_as_the_module_does(tmp_path: Path) -> None:
    source = tmp_path / "raw_step.py"
    source.write_text(
        "import jax, jax.numpy as jnp\n"
        "def step(params, x):\n"
        "    grad = jax.lax.pmean(jnp.sum(params * x, axis=0), 'batch')\n"
        "    return params - 0.1 * grad, jnp.mean(x)\n",
        encoding="utf-8",
    )
    flags = ("--stage", "pmap", "--axis-name", "batch", "--in-axes", "None, 0",
             "--args", "f32[3], f32[2,4,3]", "--devices", "2")  # fmt: skip
    raw = _report(f"{source}:step", *flags, "--out-axes", "None, 0")
    wrapped = _report(f"{SAMPLE}:train")
    shapes = [o["shape"] for o in raw["outputs"]]
    assert shapes == [o["shape"] for o in wrapped["outputs"]] == [[3], [2]]
    assert _report(f"{source}:step", *flags)["outputs"][0]["shape"] == [2, 3]
    assert wrapped["function"].startswith("step at ") and "non_arrays.py:" in wrapped["function"]
    # the same key in a declaration
    source.write_text(source.read_text() + "JXINSPECT = {'step': {'out_axes': 'None, 0'}}\n")
    declared = _report(f"{source}:step", *flags)
    assert [o["shape"] for o in declared["outputs"]] == [[3], [2]]
