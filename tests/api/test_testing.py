"""``jxinspect.testing.assert_debug_info`` on real functions staged by real JAX.

JAX runs here on 8 simulated CPU devices when this module is the first to start its
backend (otherwise the mesh tests skip and say so), as in test_lint_rules.py.
"""

from __future__ import annotations

import io
import re
import sys
import unittest
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from helpers import REPO, run_cli
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jxinspect
from jxinspect.core.errors import UsageError
from jxinspect.core.model import Report
from jxinspect.project import spec
from jxinspect.project.targets import load_module, parse_target
from jxinspect.testing import assert_debug_info
from jxinspect.tracer import seam

if not seam.backend_started():
    seam.simulate_cpu_devices(8)


def sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def model(params: Any, x: Any) -> Any:
    return {"y": x @ params["w"], "z": jnp.tanh(x)}


def drops_an_argument(x: Any, unused: Any, y: Any) -> Any:
    return x @ y


MODEL_ARGS = ({"w": sds(8, 2)}, sds(8, 8))


@pytest.fixture(scope="module")
def mesh() -> Any:
    if seam.device_count() < 8:
        pytest.skip(f"needs 8 CPU devices; JAX started in this process with {seam.device_count()}")
    return seam.make_mesh((4, 2), ("data", "model"), seam.devices(), explicit=False)


def sharded_options(mesh: Any) -> dict[str, Any]:
    """Input shardings declared, output shardings left to the compiler (JX202 warnings)."""
    return {
        "in_shardings": (
            {"w": NamedSharding(mesh, P(None, "model"))},
            NamedSharding(mesh, P("data", None)),
        )
    }


def failure(*args: Any, **kwargs: Any) -> str:
    with pytest.raises(AssertionError) as caught:
        assert_debug_info(*args, **kwargs)
    return str(caught.value)


# ---- passing ------------------------------------------------------------------------------


def test_good_names_return_the_report() -> None:
    report = assert_debug_info(
        model,
        MODEL_ARGS,
        names={"params['w']": "params['w']", "x": "x", "result['y']": "result['y']"},
    )
    assert isinstance(report, Report)
    assert [leaf.path for leaf in report.inputs] == ["params['w']", "x"]
    assert [leaf.status for leaf in report.inputs] == ["ok", "ok"]


def test_result_names_match_in_either_spelling() -> None:
    # JAX 0.4.x writes ['y'] where newer releases write result['y']: both are accepted
    assert_debug_info(
        model, MODEL_ARGS, names={"result['y']": "['y']", "result['z']": "result['z']"}
    )


def test_info_findings_pass_the_default_threshold() -> None:
    report = assert_debug_info(drops_an_argument, (sds(4, 8), sds(100), sds(8, 2)))
    assert [(f.code, f.severity) for f in report.findings] == [("JX105", "info")]


PREDICT = str(REPO / "sample_programs" / "mlp.py") + ":predict"


def _predict() -> tuple[Any, tuple[Any, Any]]:
    """The sample MLP's ``predict`` and its declared inputs, as abstract arrays."""
    module = load_module(parse_target(PREDICT))
    args = spec.parse_args(module.JXINSPECT["predict"]["args"])
    params = jax.tree_util.tree_map(
        lambda leaf: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype), args[0],
        is_leaf=lambda leaf: isinstance(leaf, spec.ArraySpec),
    )  # fmt: skip
    return module.predict, (params, jax.ShapeDtypeStruct(args[1].shape, args[1].dtype))


def test_sample_program_predict_keeps_its_names() -> None:
    predict, inputs = _predict()
    report = assert_debug_info(
        predict,
        inputs,
        # jax.nn's custom_jvp functions have nested jaxprs with partial debug info (0.7
        # on: inside JAX's own code, which never fails a gate), or none at all (0.4-0.6:
        # nothing says whose they are, JX107)
        fail_on="info",
        ignore=["JX107"],
        names={
            "params['layers'][0]['w']": "params['layers'][0]['w']",
            "x": "x",
            "result['logits']": "result['logits']",
        },
    )
    assert len(report.inputs) == 7 and len(report.outputs) == 2


# ---- failing ------------------------------------------------------------------------------


def test_info_finding_fails_at_info() -> None:
    message = failure(drops_an_argument, (sds(4, 8), sds(100), sds(8, 2)), fail_on="info")
    lines = message.splitlines()
    assert lines[0].startswith("debug info of drops_an_argument at ")
    assert "1 finding at or above info" in lines[0]
    assert lines[1] == "  JX105 info argument unused is unused and was pruned from @main"
    assert "  see: jxinspect explain JX105" in lines


def test_findings_message_has_one_line_per_finding_and_one_hint_per_code(mesh: Any) -> None:
    message = failure(model, MODEL_ARGS, options=sharded_options(mesh))
    lines = message.splitlines()
    assert "2 findings at or above warning" in lines[0] and "(jit, JAX " in lines[0]
    found = [line for line in lines if line.startswith("  JX202 warning ")]
    assert len(found) == 2
    assert any("result['y']" in line for line in found)
    assert any("result['z']" in line for line in found)
    assert lines.count("  see: jxinspect explain JX202") == 1
    assert "  to accept them: ignore=['JX202']" in lines


def test_ignore_select_and_fail_on_accept_findings(mesh: Any) -> None:
    options = sharded_options(mesh)
    assert_debug_info(model, MODEL_ARGS, options=options, ignore=["JX202"])
    assert_debug_info(model, MODEL_ARGS, options=options, ignore="jx2")
    assert_debug_info(model, MODEL_ARGS, options=options, select=["JX1"])
    assert_debug_info(model, MODEL_ARGS, options=options, fail_on="error")
    report = assert_debug_info(model, MODEL_ARGS, options=options, fail_on="never")
    assert {f.code for f in report.findings} == {"JX202"}
    failure(model, MODEL_ARGS, options=options, select=["JX2"], ignore=["JX201"])


def test_the_report_is_judged_once_under_select_ignore_and_severity() -> None:
    """The policy the call gives judges the report once: what it ignores is not in the
    report returned, and ``severity`` changes what fails (the longest prefix wins)."""
    args = (sds(4, 8), sds(100), sds(8, 2))
    report = assert_debug_info(drops_an_argument, args, fail_on="info", ignore=["JX105"])
    assert report.findings == ()
    report = assert_debug_info(drops_an_argument, args, select=["JX2"], fail_on="info")
    assert report.findings == ()
    message = failure(drops_an_argument, args, severity={"JX105": "warning"})
    assert "  JX105 warning argument unused is unused and was pruned from @main" in message
    report = assert_debug_info(drops_an_argument, args, severity={"JX1": "error", "JX105": "info"})
    assert [(f.code, f.severity) for f in report.findings] == [("JX105", "info")]
    failure(drops_an_argument, args, severity={"jx1": "error"}, fail_on="error")


def test_pmap_fails_where_the_release_drops_its_names() -> None:
    """0.4.x keeps pmap's real names (nothing to fail on); 0.7.2 keeps none (JX101); 0.8
    on names them args[i] / flat_args[i] (JX102): each a warning."""

    def step(params: Any, batch: Any) -> Any:
        return params["w"] * batch["x"]

    n = seam.device_count()
    args = ({"w": jnp.ones((n, 4))}, {"x": jnp.ones((n, 4))})
    report = jxinspect.inspect(step, args, stage="pmap")
    if all(leaf.status == "ok" for leaf in report.inputs):
        assert_debug_info(step, args, stage="pmap")  # passes: nothing was dropped
        return
    message = failure(step, args, stage="pmap")
    assert "(pmap, JAX " in message.splitlines()[0]
    assert "see: jxinspect explain JX1" in message


def test_wrong_names_are_listed_with_what_is_carried() -> None:
    message = failure(
        model,
        MODEL_ARGS,
        names={"params['w']": "w", "x": "x", "result['z']": "result['out']"},
    )
    lines = message.splitlines()
    assert "2 names not as expected" in lines[0]
    assert "  name params['w']: expected 'w', carries \"params['w']\" (ok)" in lines
    assert any(line.startswith("  name result['z']: expected \"result['out']\", carries ")
               for line in lines)  # fmt: skip
    assert not any(line.startswith("  name x:") for line in lines)


def test_pruned_argument_carries_no_name() -> None:
    args = (sds(4, 8), sds(100), sds(8, 2))
    assert_debug_info(drops_an_argument, args, names={"unused": None})
    message = failure(drops_an_argument, args, names={"unused": "unused"})
    assert "  name unused: expected 'unused', carries no name (pruned)" in message.splitlines()


def test_shardings_on_a_mesh(mesh: Any) -> None:
    options = sharded_options(mesh)
    report = assert_debug_info(
        model,
        MODEL_ARGS,
        options=options,
        fail_on="error",
        devices=8,
        shardings={"x": "P('data', None)", "params['w']": 'P(None,"model")', "result['y']": None},
    )
    assert report.num_devices == 8
    message = failure(
        model,
        MODEL_ARGS,
        options=options,
        fail_on="never",
        shardings={"x": "replicated", "params['w']": "P(None, 'model')", "result['z']": "P()"},
    )
    lines = message.splitlines()
    assert "2 shardings not as expected" in lines[0]
    assert "  sharding x: expected replicated, declared P('data', None)" in lines
    assert "  sharding result['z']: expected P(), declared no sharding" in lines
    assert len(lines) == 3


def test_unknown_leaf_lists_the_known_paths() -> None:
    known = "params['w'], x, result['y'], result['z']"
    expected = f"names: \"params['v']\" is not a leaf of model; known: {known}"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        assert_debug_info(model, MODEL_ARGS, names={"params['v']": "params['v']"})
    with pytest.raises(ValueError, match="shardings: 'y' is not a leaf"):
        assert_debug_info(model, MODEL_ARGS, shardings={"y": "replicated"})


def test_works_under_unittest() -> None:
    class Case(unittest.TestCase):
        def test_passes(self) -> None:
            assert_debug_info(model, MODEL_ARGS)

        def test_fails(self) -> None:
            assert_debug_info(model, MODEL_ARGS, names={"x": "inputs"})

    suite = unittest.TestSuite([Case("test_passes"), Case("test_fails")])
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
    assert result.testsRun == 2
    assert not result.errors
    assert [str(test) for test, _ in result.failures] == [str(Case("test_fails"))]
    assert "name x: expected 'inputs', carries 'x' (ok)" in result.failures[0][1]


def test_leaves_jax_configuration_as_found(mesh: Any) -> None:
    before = dict(jax.config.values)
    failure(model, MODEL_ARGS, options=sharded_options(mesh))
    assert_debug_info(model, MODEL_ARGS)
    assert dict(jax.config.values) == before


# ---- devices and bad arguments ------------------------------------------------------------


def test_too_few_devices_says_how_to_get_them() -> None:
    want = seam.device_count() + 1
    with pytest.raises(RuntimeError) as caught:
        assert_debug_info(model, MODEL_ARGS, devices=want)
    message = str(caught.value)
    assert f"--xla_force_host_platform_device_count={want}" in message
    assert f'jax.config.update("jax_num_cpu_devices", {want})' in message
    assert "conftest.py" in message


@pytest.mark.parametrize(
    ("given", "match"),
    [
        ({"fail_on": "warn"}, r"fail_on='warn': use one of error, warning, info, never"),
        ({"stage": "vmap"}, r"stage='vmap': use one of jit, pjit, pmap, shard_map"),
        ({"ignore": ["JX999"]}, r"^ignore: unknown code 'JX999'"),
        ({"select": ["XX1"]}, r"^select: unknown code 'XX1'"),
        ({"devices": 0}, r"devices=0: give a number of devices"),
        ({"names": ["x"]}, r"names: expected a mapping"),
        ({"shardings": {"x": 3}}, r"shardings: expected leaf path"),
        ({"severity": {"JX105": "fatal"}}, r"severity: 'JX105': 'fatal' is not one of error"),
        ({"severity": {"JX999": "info"}}, r"^severity: unknown code 'JX999'"),
        ({"severity": ["JX105"]}, r"^severity: expected a mapping of code prefix"),
    ],
)
def test_bad_arguments_raise_value_error(given: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match) as caught:
        assert_debug_info(model, MODEL_ARGS, **given)
    assert "\n" not in str(caught.value)


# ---- assert_max_compiles ------------------------------------------------------------------


def test_assert_max_compiles_fails_with_the_reasons_and_passes_a_steady_loop() -> None:
    import jax
    import jax.numpy as jnp

    from jxinspect.testing import assert_max_compiles

    @jax.jit
    def step(batch: dict[str, jax.Array]) -> jax.Array:
        return batch["x"].sum()

    with pytest.raises(AssertionError) as failed, assert_max_compiles(1):
        for n in (32, 32, 31):
            step({"x": jnp.ones((n, 4))})
    message = str(failed.value)  # JX402's words, at the function's line, and its reasons
    assert f"{__file__}:" in message.splitlines()[0]
    assert (
        ": JX402 error step compiled 2 times, over the budget of 1: 1× batch['x'] shape" in message
    )
    assert "\n  1× batch['x'] shape f32[32,4] → f32[31,4]" in message

    @jax.jit
    def steady(x: jax.Array) -> jax.Array:
        return x * 2

    with assert_max_compiles(1, function=steady):
        for _ in range(3):
            steady(jnp.ones(3))
        for n in (5, 6):  # another function's compiles are not counted
            step({"x": jnp.ones((n, 4))})

    @assert_max_compiles(2)
    def a_test() -> None:
        for k in (1, 2, 3):
            jax.jit(lambda x, k=k: x * k)(jnp.ones(2))  # a new jit per call

    with pytest.raises(
        AssertionError, match=r"compiled 3 times, over the budget of 2: 2× function"
    ):
        a_test()


@pytest.mark.parametrize(
    ("configured", "fails"),
    [
        ("", "JX402 error"),
        ("ignore: [JX402]\n", None),
        ("select: [JX1]\n", None),
        ("severity: {JX402: warning}\n", None),
        ("severity: {JX402: warning}\nfail_on: warning\n", "JX402 warning"),
        ("budgets: {max_compiles: 5}\n", "JX402 error"),  # n is the budget
    ],
)
def test_assert_max_compiles_judges_under_the_projects_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configured: str, fails: str | None
) -> None:
    """``assert_max_compiles(n)`` is JX402 with the budget ``n``, judged under the
    project's ``jxinspect.yaml`` as ``lint --records`` judges a recording: its
    ``select``/``ignore``, ``severity`` and ``fail_on`` decide, as they do there."""
    from jxinspect.testing import assert_max_compiles

    (tmp_path / "jxinspect.yaml").write_text(configured, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    @jax.jit
    def twice(x: jax.Array) -> jax.Array:
        return x + 1

    watched = assert_max_compiles(1)
    if fails is None:
        with watched:
            twice(jnp.ones(2))
            twice(jnp.ones(3))
        return
    with pytest.raises(AssertionError) as failed, watched:
        twice(jnp.ones(2))
        twice(jnp.ones(3))
    first = str(failed.value).splitlines()[0]
    assert first.endswith(f": {fails} twice compiled 2 times, over the budget of 1: 1× x shape "
                          "(see `jxinspect show` of the recording)"), first  # fmt: skip


CACHE_HITS = """
import sys, jax, jax.numpy as jnp
from jxinspect.testing import assert_cache_hits
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)

@jax.jit
def step(x):
    return jnp.sin(x) * 2

@jax.jit
def other(x):
    return x + 1

step(jnp.ones(8))
jax.clear_caches()
with assert_cache_hits(step):
    step(jnp.ones(8))          # read back from the folder
try:
    with assert_cache_hits():
        other(jnp.ones(3))     # never compiled before: a miss
except AssertionError as err:
    print("failed:", err)
try:
    with assert_cache_hits(step):
        pass                   # nothing compiled
except AssertionError as err:
    print("empty:", err)
"""


def test_assert_cache_hits_passes_a_read_back_and_names_a_miss(tmp_path: Path) -> None:
    """In a process of its own (JAX sets its cache up once per process): a function
    compiled, its caches cleared and called again is answered by the cache folder; one
    never compiled before is a miss, named; a block where nothing compiled fails."""
    (tmp_path / "hits.py").write_text(CACHE_HITS, encoding="utf-8")
    result = run_cli("hits.py", str(tmp_path / "cache"), command=(sys.executable,), cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert "failed: not answered by the persistent compilation cache:" in result.stdout
    assert re.search(r"  other \(other at .*hits.py:\d+\) compile #1: miss", result.stdout)
    assert "empty: no function of yours compiled in the block" in result.stdout


def test_assert_debug_info_and_the_command_agree_on_what_fails(tmp_path: Path) -> None:
    """The same report fails (or passes) alike through ``assert_debug_info`` and
    ``jxinspect lower --fail-on``: findings inside JAX's own code (the nested jaxprs of
    ``jax.nn``'s functions) never fail either (one gate)."""
    predict, inputs = _predict()
    try:  # 0.4.x: JX107 on nested jaxprs nothing says are JAX's own; from 0.8 the
        # findings there are (JX110) are inside JAX's own code, and fail neither
        assert_debug_info(predict, inputs, fail_on="info")
    except AssertionError:
        failed = True
    else:
        failed = False
    result = run_cli("lower", PREDICT, "--fail-on", "info", cwd=tmp_path)
    assert result.returncode == (1 if failed else 0), result.describe()


# ---- assert_peak_memory ---------------------------------------------------------------------


def grad_step(params: Any, x: Any) -> Any:
    def loss(p: Any) -> Any:
        return jnp.sum(jnp.tanh(x @ p["w"]) ** 2)

    grads = jax.grad(loss)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def test_assert_peak_memory_passes_at_the_peak_and_fails_below_it() -> None:
    """The peak is ``jxinspect.inspect(..., memory=True)``'s; one byte less fails, naming
    the peak and every buffer live there by its path."""
    from jxinspect.testing import assert_peak_memory

    args = ({"w": sds(64, 32)}, sds(16, 64))
    peak = jxinspect.inspect(grad_step, args, memory=True).compiled.peak  # type: ignore[union-attr]
    assert peak is not None and peak.bytes is not None
    assert assert_peak_memory(grad_step, args, max_bytes=peak.bytes) == peak
    with pytest.raises(AssertionError) as caught:
        assert_peak_memory(grad_step, args, max_bytes=peak.bytes - 1)
    said = str(caught.value)
    assert said.startswith("grad_step: ") and "live per device at the peak, over" in said
    assert "params['w']" in said and "memory at the peak:" in said
    with pytest.raises(UsageError):
        assert_peak_memory(grad_step, args, max_bytes=-1)
