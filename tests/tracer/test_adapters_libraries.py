"""Targets wrapped by Flax NNX (``@nnx.jit``) and Equinox (``eqx.filter_jit``), and a plain
function over an ``eqx.nn.MLP``, through the installed command. The oracle is the library
itself: the names the report says the program carries are the argument names of the
library's own lowering (``.lower(...)`` through its wrapper). Each test skips, saying why,
where its library is not installed (the ``test`` extra installs both)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from helpers import GOLDEN, REPO, compare_golden, golden_file, normalize_text, run_cli, run_python

from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir

LIBS = REPO / "sample_programs" / "libraries"
UPDATE = os.environ.get("JXINSPECT_UPDATE_GOLDEN", "") not in ("", "0")


def _needs(name: str) -> None:
    pytest.importorskip(name, reason=f"{name} is not installed (pip install -e '.[test]')")


def _load(stem: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"jx_{stem}", LIBS / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lower(target: str, fmt: str = "json") -> Any:
    return _lower_with(target, "make", fmt)


def _lower_with(target: str, maker: str, fmt: str = "json") -> Any:
    result = run_cli("lower", f"sample_programs/libraries/{target}", "--args-from", maker,
                     "--format", fmt)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if fmt == "json" else result.stdout


def _main_names(lowered: Any) -> list[str | None]:
    module = seam.stablehlo_module(lowered)
    with module.context:
        return seam.block_argument_names(mlir.find_main(module))


def _result_names(lowered: Any) -> list[str | None]:
    """``jax.result_info`` of each result of the library's own lowering."""
    main = mlir.read_main(seam.stablehlo_module(lowered), None, None)
    return [result.name for result in main.results if result.jax_kind is None]


def _carried(report: Any) -> list[str | None]:
    kept = [leaf for leaf in report["inputs"] if leaf["status"] != "pruned"]
    return [leaf["name"] for leaf in sorted(kept, key=lambda leaf: leaf["main_index"])]


def _golden(name: str, text: str) -> None:
    """The text report, per JAX series; a series without the file skips, saying how to
    make it (the libraries' releases differ between series)."""
    path = GOLDEN / "libraries" / f"{name}.txt"
    regenerate = "JXINSPECT_UPDATE_GOLDEN=1 python -m pytest " + str(
        Path(__file__).relative_to(REPO)
    )
    if not UPDATE and golden_file(path) is None:
        pytest.skip(f"no {path.relative_to(REPO)}; make it with {regenerate}")
    compare_golden(path, normalize_text(text), regenerate)


def _real(tree: Any) -> Any:
    """Zeros for each abstract leaf (Equinox stages only real arrays)."""
    return jax.tree_util.tree_map(
        lambda s: jnp.zeros(s.shape, s.dtype) if isinstance(s, jax.ShapeDtypeStruct) else s, tree
    )


def test_nnx_jit_names_equal_flax_lowering_and_paths_are_the_users() -> None:
    _needs("flax.nnx")
    report = _lower("nnx_mnist.py:train_step")
    statuses = {leaf["status"] for leaf in report["inputs"]}
    assert statuses == {"renamed", "ok"}
    by_path = {leaf["path"]: leaf for leaf in report["inputs"]}
    # flax 0.11 on: modules are pytrees; flax 0.10: the path through nnx.state
    kernel = (
        by_path.get("model.linear1.kernel.value") or by_path["model['linear1']['kernel'].value"]
    )
    assert kernel["name"].startswith("model.states[0][") and kernel["shape"] == [16, 32]
    assert by_path["batch['image']"]["status"] == "ok"
    assert [f["code"] for f in report["findings"]].count("JX111") == 1
    _golden("nnx_mnist.train_step", _lower("nnx_mnist.py:train_step", "text"))
    module = _load("nnx_mnist")
    if not callable(getattr(module.train_step, "lower", None)):
        pytest.skip("this flax release's nnx.jit has no .lower() to compare with")
    lowered = module.train_step.lower(*module.make())
    assert _carried(report) == _main_names(getattr(lowered, "lowered", lowered))


def test_eqx_filter_jit_names_equal_equinox_lowering() -> None:
    _needs("equinox")
    report = _lower("eqx_parallel.py:train_step")
    module = _load("eqx_parallel")
    lowered = module.train_step.lower(*_real(module.make()))
    assert _carried(report) == _main_names(getattr(lowered, "lowered", lowered))
    first = report["inputs"][0]
    assert first["path"] == "model.layers[0].weight" and first["status"] == "renamed"
    assert first["name"] == "dynamic_donate['first'][0]" and first["donated"]
    assert report["function"].startswith("train_step at ")
    assert "eqx_parallel.py:" in report["function"]
    statics = {s["path"] for s in report["static_args"]}
    assert {"model.activation", "model.final_activation"} <= statics
    _golden("eqx_parallel.train_step", _lower("eqx_parallel.py:train_step", "text"))


def test_plain_function_over_an_eqx_mlp_keeps_paths() -> None:
    _needs("equinox")
    report = _lower("eqx_loss.py:loss")
    assert all(leaf["status"] == "ok" for leaf in report["inputs"])
    assert report["inputs"][0]["name"] == "model.layers[0].weight"
    import equinox as eqx

    module = _load("eqx_loss")
    model, x = module.make()
    params, static = eqx.partition(_real(model), eqx.is_array)

    def raw(model: Any, x: Any) -> Any:
        return module.loss(eqx.combine(model, static), x)

    assert _carried(report) == _main_names(jax.jit(raw).lower(params, _real(x)))
    assert any("staged as eqx.filter_jit does" in n for n in report["notes"])


def test_linen_with_optax_under_plain_jit_is_named_by_path() -> None:
    _needs("flax.linen")
    _needs("optax")
    report = _lower("linen_optax.py:train_step")
    assert {leaf["status"] for leaf in report["inputs"]} == {"ok"}
    module = _load("linen_optax")
    assert _carried(report) == _main_names(module.train_step.lower(*module.make()))


def test_nnx_under_plain_jit_says_why_nothing_is_staged(tmp_path: Path) -> None:
    _needs("flax.nnx")
    model = _load("nnx_mnist").make()[0]
    if jax.tree_util.tree_leaves(model) == [model]:
        pytest.skip("this flax release's modules are not pytrees: plain jax.jit refuses them")
    source = (LIBS / "nnx_mnist.py").read_text(encoding="utf-8")
    plain = tmp_path / "nnx_plain.py"
    plain.write_text(source.replace("@nnx.jit\n", "@jax.jit\n"), encoding="utf-8")
    result = run_cli("lower", f"{plain}:train_step", "--args-from", "make", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["outputs"] == []
    assert "JX112" in [f["code"] for f in report["findings"]]


def test_nnx_jit_results_are_the_updated_states_and_the_users_result() -> None:
    _needs("flax.nnx")
    report = _lower_with("nnx_mnist.py:loss_step", "make_loss")
    outputs = report["outputs"]
    assert {o["status"] for o in outputs} == {"renamed"}
    # the state nnx.jit writes back into `model`, named as the argument it updates
    model_inputs = [i for i in report["inputs"] if i["path"].startswith("model")]
    updates = outputs[: len(model_inputs)]
    assert [(o["path"], o["shape"]) for o in updates] == [
        (i["path"], i["shape"]) for i in model_inputs
    ]
    assert all(o["name"].removeprefix("result").startswith("[0][0].states[0][") for o in updates)
    # then the user's own result, under the wrapper's result[2]
    rest = {o["path"]: o for o in outputs[len(model_inputs) :]}
    assert set(rest) == {"result['loss']", "result['logits']"}
    assert rest["result['loss']"]["name"].endswith("[2]['loss']")
    assert rest["result['logits']"]["shape"] == [8, 10]
    train = _lower("nnx_mnist.py:train_step")
    renamed = [i for i in train["inputs"] if i["status"] == "renamed"]
    assert [o["path"] for o in train["outputs"]] == [i["path"] for i in renamed]
    module = _load("nnx_mnist")
    if not callable(getattr(module.loss_step, "lower", None)):
        pytest.skip("this flax release's nnx.jit has no .lower() to compare with")
    lowered = module.loss_step.lower(*module.make_loss())
    assert [o["name"] for o in outputs] == _result_names(getattr(lowered, "lowered", lowered))


def test_eqx_filter_jit_results_map_to_the_users_result() -> None:
    _needs("equinox")
    report = _lower("eqx_parallel.py:train_step")
    marker, *outputs = report["outputs"]
    assert marker["path"] == "<eqx.filter_jit marker>" and marker["shape"] == []
    assert any("eqx.filter_jit's own marker" in note for note in report["notes"])
    # train_step returns (model, opt_state): each array leaf under result[0] / result[1]
    inputs = report["inputs"][:-2]  # x and y are not returned
    expected = [
        ("result[0]" if i["path"].startswith("model") else "result[1]")
        + i["path"].removeprefix("model").removeprefix("opt_state")
        for i in inputs
    ]
    assert sorted(o["path"] for o in outputs) == sorted(expected)
    assert outputs[0]["path"] == "result[0].layers[0].weight"
    assert outputs[0]["name"].endswith("[1][0].layers[0].weight")
    assert {o["status"] for o in report["outputs"]} == {"renamed"}
    module = _load("eqx_parallel")
    lowered = module.train_step.lower(*_real(module.make()))
    names = _result_names(getattr(lowered, "lowered", lowered))
    assert [o["name"] for o in report["outputs"]] == names


EQX_PMAP_ORACLE = r"""
import importlib.util, json
import jax, jax.numpy as jnp
from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir

seam.simulate_cpu_devices(2)
spec = importlib.util.spec_from_file_location("eqx_pmap", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
real = jax.tree_util.tree_map(
    lambda s: jnp.zeros(s.shape, s.dtype) if isinstance(s, jax.ShapeDtypeStruct) else s,
    module.make(),
)
lowered = module.train_step.lower(*real)
ir = seam.stablehlo_module(getattr(lowered, "lowered", lowered))
with ir.context:
    args = seam.block_argument_names(mlir.find_main(ir))
main = mlir.read_main(ir, None, None)
print(json.dumps({{"args": args, "results": [r.name for r in main.results if r.jax_kind is None]}}))
"""


def test_eqx_filter_pmap_names_equal_equinox_lowering_and_paths_are_the_users() -> None:
    _needs("equinox")
    report = _lower("eqx_pmap.py:train_step")
    assert report["stage"] == "pmap" and report["num_devices"] == 2
    assert report["inputs"][0]["path"] == "model.layers[0].weight"
    assert [i["path"] for i in report["inputs"][-2:]] == ["x", "y"]
    paths = [o["path"] for o in report["outputs"]]
    # the loss, mapped over the devices, then the new model, returned once (out_axes None)
    assert paths == ["result[1]['loss']", "result[0].layers[0].weight",
                     "result[0].layers[0].bias", "result[0].layers[1].weight",
                     "result[0].layers[1].bias"]  # fmt: skip
    assert report["outputs"][0]["shape"] == [2]
    assert report["function"].startswith("train_step at ")
    oracle = run_python(EQX_PMAP_ORACLE.format(path=str(LIBS / "eqx_pmap.py")), warm=True)
    assert oracle.returncode == 0, oracle.describe()
    said = json.loads(oracle.stdout.strip().splitlines()[-1])
    assert _carried(report) == said["args"]
    assert [o["name"] for o in report["outputs"]] == said["results"]
    # renamed where Equinox's program carries a name; missing where the release's pmap
    # keeps none (0.7): the status follows what the library's own lowering carries
    kept = [leaf for leaf in report["inputs"] if leaf["status"] != "pruned"]
    for leaf, carried in zip(sorted(kept, key=lambda leaf: leaf["main_index"]), said["args"]):
        assert leaf["status"] == ("renamed" if carried else "missing"), leaf
    for leaf, carried in zip(report["outputs"], said["results"]):
        assert leaf["status"] == ("renamed" if carried else "missing"), leaf


NNX_ORACLE = r"""
import importlib.util, json
import jax, jax.numpy as jnp
from flax import nnx
from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir

seam.simulate_cpu_devices({devices})
spec = importlib.util.spec_from_file_location("sample", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
wrapped = getattr(module, {target!r})


def zeros(tree):
    return jax.tree_util.tree_map(
        lambda s: jnp.zeros(s.shape, s.dtype) if isinstance(s, jax.ShapeDtypeStruct) else s,
        tree,
    )


def real(value):
    if isinstance(value, nnx.Module):
        graphdef, state = nnx.split(value)
        return nnx.merge(graphdef, zeros(state))
    return zeros(value)


def cells(fun):
    code, closure = getattr(fun, "__code__", None), getattr(fun, "__closure__", None)
    return dict(zip(code.co_freevars, closure or ())) if code is not None else {{}}


# the inner jax.pmap / jax.jit / jax.shard_map the library's wrapper calls, spied on: the
# library runs its own call with real values, and the spy lowers what the library hands it
found = cells(wrapped)
if "f" in found:  # flax's update context around the wrapper
    found = cells(found["f"].cell_contents)
cell = next(found[name] for name in {inner!r} if name in found)
library_inner = cell.cell_contents
said = {{}}


def spy(*args, **kwargs):
    said["lowered"] = {lower}(*args, **kwargs)
    return library_inner(*args, **kwargs)


cell.cell_contents = spy
wrapped(*[real(value) for value in module.{maker}()])
lowered = said["lowered"]
ir = seam.stablehlo_module(getattr(lowered, "lowered", lowered))
with ir.context:
    args = seam.block_argument_names(mlir.find_main(ir))
main = mlir.read_main(ir, None, None)
print(json.dumps({{"args": args, "results": [r.name for r in main.results if r.jax_kind is None]}}))
"""


def _nnx_oracle(sample: str, target: str, maker: str = "make", devices: int = 2,
                inner: tuple[str, ...] = ("pmapped_fn",),
                lower: str = "library_inner.lower") -> Any:  # fmt: skip
    """The argument and result names of the library's own call of its inner function,
    lowered with exactly the arguments the library gives it (a subprocess: simulated
    devices must be set before JAX starts)."""
    script = NNX_ORACLE.format(path=str(LIBS / sample), target=target, maker=maker,
                               devices=devices, inner=inner, lower=lower)  # fmt: skip
    oracle = run_python(script, warm=True)
    assert oracle.returncode == 0, oracle.describe()
    return json.loads(oracle.stdout.strip().splitlines()[-1])


def _flax_tree_mode() -> None:
    """Skips where flax has no tree mode (``graph=``/``graph_updates=``, flax 0.12.x)."""
    import inspect

    from flax import nnx

    if "graph_updates" not in inspect.signature(nnx.jit).parameters:
        import flax

        version = flax.__version__
        pytest.skip(f"flax {version} has no tree-mode wrappers (graph_updates=); newer 0.12 do")


def _assert_statuses_follow(report: Any, said: Any) -> None:
    kept = [leaf for leaf in report["inputs"] if leaf["status"] != "pruned"]
    for leaf, carried in zip(sorted(kept, key=lambda leaf: leaf["main_index"]), said["args"]):
        assert leaf["status"] in (("renamed", "ok") if carried else ("missing",)), leaf
        assert leaf["status"] != "ok" or leaf["path"] == carried, leaf


def test_nnx_pmap_names_equal_flax_lowering_and_paths_are_the_users() -> None:
    _needs("flax.nnx")
    report = _lower("nnx_pmap.py:train_step")
    assert report["stage"] == "pmap" and report["num_devices"] == 2
    inputs = [i["path"] for i in report["inputs"]]
    # flax 0.11 on: modules are pytrees; flax 0.10: the path through nnx.state
    kernel = "model.linear1.kernel.value"
    if kernel not in inputs:
        kernel = "model['linear1']['kernel'].value"
    assert kernel in inputs and inputs[-2:] == ["x", "y"]
    outputs = [(o["path"], o["shape"]) for o in report["outputs"]]
    # the state nnx.pmap writes back into `model` (broadcast: in_axes None), then the loss
    # once per device
    assert outputs[-1] == ("result['loss']", [2])
    assert (kernel, [4, 8]) in outputs[:-1]
    assert [p for p, _ in outputs[:-1]] == inputs[:-2]
    assert report["function"].startswith("train_step at ")
    # JX111 where flax's program carries names (JAX 0.7's pmap carries none: missing)
    renamed = [i for i in report["inputs"] + report["outputs"] if i["status"] == "renamed"]
    assert ("JX111" in [f["code"] for f in report["findings"]]) == bool(renamed)
    said = _nnx_oracle("nnx_pmap.py", "train_step")
    assert _carried(report) == said["args"]
    assert [o["name"] for o in report["outputs"]] == said["results"]
    _assert_statuses_follow(report, said)
    _golden("nnx_pmap.train_step", _lower("nnx_pmap.py:train_step", "text"))


@pytest.mark.parametrize("target", ["pmap_graph_step", "pmap_tree_step"])
def test_nnx_pmap_tree_mode_maps_the_updates_it_returns(target: str) -> None:
    _needs("flax.nnx")
    _flax_tree_mode()
    report = _lower(f"nnx_tree_mode.py:{target}")
    assert report["stage"] == "pmap"
    assert [i["path"] for i in report["inputs"]] == [
        "model.linear1.bias.value", "model.linear1.kernel.value",
        "model.linear2.bias.value", "model.linear2.kernel.value", "x", "y",
    ]  # fmt: skip
    # the user's result first, then the variables the step changed (flax's Updates)
    outputs = [o["path"] for o in report["outputs"]]
    assert outputs[0] == "result['loss']"
    assert sorted(outputs[1:]) == sorted(i["path"] for i in report["inputs"][:4])
    # what the program calls them is flax's (Updates groups in 0.12.8, the masked call in
    # 0.12.6): the names must be what flax's own lowering carries
    said = _nnx_oracle("nnx_tree_mode.py", target)
    assert _carried(report) == said["args"]
    assert [o["name"] for o in report["outputs"]] == said["results"]


@pytest.mark.parametrize("target", ["jit_graph_step", "jit_tree_step"])
def test_nnx_jit_tree_mode_names_equal_flax_lowering(target: str) -> None:
    _needs("flax.nnx")
    _flax_tree_mode()
    report = _lower_with(f"nnx_tree_mode.py:{target}", "make_jit")
    assert report["stage"] == "jit"
    params = ["model.linear1.bias.value", "model.linear1.kernel.value",
              "model.linear2.bias.value", "model.linear2.kernel.value"]  # fmt: skip
    assert [i["path"] for i in report["inputs"]] == [*params, "x", "y"]
    # graph mode converts the module (`model.__state__[...]`); tree mode keeps its paths
    expected = "renamed" if target == "jit_graph_step" else "ok"
    assert {i["status"] for i in report["inputs"][:4]} == {expected}
    outputs = report["outputs"]
    assert outputs[0]["path"] == "result['loss']" and outputs[0]["name"] == "result[0]['loss']"
    assert sorted(o["path"] for o in outputs[1:]) == params
    assert {o["status"] for o in outputs} == {"renamed"}
    assert report["function"].startswith("_jit_step at ")
    module = _load("nnx_tree_mode")
    lowered = getattr(module, target).lower(*module.make_jit())
    assert _carried(report) == _main_names(lowered.lowered)
    assert [o["name"] for o in outputs] == _result_names(lowered.lowered)


def test_nnx_shard_map_on_its_own_names_equal_flax_call() -> None:
    _needs("flax.nnx")
    report = _lower("nnx_shard_map.py:train_step")
    inputs = [i["path"] for i in report["inputs"]]
    kernel = "model.linear1.kernel.value"
    if kernel not in inputs:  # flax 0.10: the path through nnx.state
        kernel = "model['linear1']['kernel'].value"
    assert kernel in inputs and inputs[-2:] == ["x", "y"]
    by_path = {i["path"]: i for i in report["inputs"]}
    assert by_path[kernel]["name"].startswith("model.states[0][")
    assert by_path[kernel]["status"] == "renamed" and by_path["x"]["status"] == "ok"
    outputs = [o["path"] for o in report["outputs"]]
    assert outputs[-1] == "result['loss']" and outputs[:-1] == inputs[:-2]
    assert report["function"].startswith("train_step at ")
    # flax runs a shard_map called outside jit as one program: jit of its inner shard_map
    said = _nnx_oracle("nnx_shard_map.py", "train_step", inner=("shard_map_fn",),
                       lower="jax.jit(library_inner).lower")  # fmt: skip
    assert _carried(report) == said["args"]
    assert [o["name"] for o in report["outputs"]] == said["results"]
    _golden("nnx_shard_map.train_step", _lower("nnx_shard_map.py:train_step", "text"))


def test_nnx_objects_under_plain_jit_say_their_updates_are_not_in_the_program() -> None:
    """``train_step.fun`` (the function inside ``nnx.jit``) staged by plain ``jit``: the
    optimizer's and metrics' in-place updates are not in the program, and the report
    says so and names what to inspect; through ``nnx.jit`` no such note."""
    _needs("flax.nnx")
    model = _load("nnx_mnist").make()[0]
    if jax.tree_util.tree_leaves(model) == [model]:
        pytest.skip("this flax release's modules are not pytrees: plain jax.jit refuses them")
    step = _load("nnx_mnist").train_step
    attribute = "fun" if hasattr(step, "fun") else "__wrapped__"  # flax 0.11: functools.wraps
    inner = _lower_with(f"nnx_mnist.py:train_step.{attribute}", "make")
    (note,) = [n for n in inner["notes"] if "Flax NNX" in n]
    assert note.startswith("model, optimizer, metrics are Flax NNX objects staged by plain")
    assert "@nnx.jit" in note
    outer = _lower_with("nnx_mnist.py:train_step", "make")
    assert not [n for n in outer["notes"] if "Flax NNX" in n]


def _fsdp_oracle(maker: str) -> tuple[Any, Any]:
    """Flax's own lowering of ``nnx_fsdp.train_step`` with the inputs of ``maker``, and
    its compiled executable; skipped where this Flax cannot stage its own example (0.10:
    an ``nnx.Object`` holds no plain arrays)."""
    module = _load("nnx_fsdp")
    try:
        lowered = module.train_step.lower(*getattr(module, maker)())
    except (ValueError, AttributeError) as err:  # 0.10: no .lower() on nnx.jit either
        pytest.skip(f"this Flax cannot stage its FSDP example itself: {err}"[:200])
    inner = getattr(lowered, "lowered", lowered)
    return inner, inner.compile()


def test_nnx_jit_stages_a_variable_the_optimizer_shares_once_as_flax_does() -> None:
    """Flax's FSDP example: the optimizer holds the model's own ``Param``\\ s. ``nnx.jit``
    hands the program each shared variable once (8 arguments, 7 results); staging the
    call's objects apart gave them twice (11 and 10), its memory and bytes wrong, and the
    optimizer's updates apart from the model's."""
    _needs("flax.nnx")
    lowered, compiled = _fsdp_oracle("make")
    result = run_cli("lower", "sample_programs/libraries/nnx_fsdp.py:train_step",
                     "--args-from", "make", "--compile", "--format", "json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert _carried(report) == _main_names(lowered)
    assert [o["name"] for o in report["outputs"]] == _result_names(lowered)
    inputs = [i["path"] for i in report["inputs"]]
    assert len(inputs) == len(set(inputs)) == 8
    assert not [p for p in inputs if p.startswith("optimizer.params")]
    # the model's parameters come back once, as the model's: what the optimizer wrote
    outputs = [o["path"] for o in report["outputs"]]
    assert outputs == [*inputs[:6], "result"]
    memory = compiled.memory_analysis()
    assert report["compiled"]["memory"]["arguments"] == memory.argument_size_in_bytes
    assert report["compiled"]["memory"]["outputs"] == memory.output_size_in_bytes


def test_one_object_passed_twice_is_named_by_each_parameter() -> None:
    """``train_step(model, optimizer, b, b)``: the program's 4th argument is ``y``, as
    JAX names it; mapping by identity alone called it ``x`` (status renamed)."""
    _needs("flax.nnx")
    lowered, _ = _fsdp_oracle("make_same")
    report = _lower_with("nnx_fsdp.py:train_step", "make_same")
    assert _carried(report) == _main_names(lowered)
    last = report["inputs"][-2:]
    assert [(i["path"], i["name"], i["status"]) for i in last] == [
        ("x", "x", "ok"), ("y", "y", "ok")
    ]  # fmt: skip
