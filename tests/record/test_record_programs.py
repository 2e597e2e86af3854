"""`jxinspect record` keeps one record per program a run lowered, as JAX lowered it: the
patterns of real test suites (static values and closures that change the program,
eager shard_map and pmap, tokens, Refs, a failure inside the hook) in one recorded run
of the real JAX of this environment; and replays that stage the program the run staged
(shardings given to ``jit`` built inside ``main()``, an optax train step)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import JAX_RELEASE, WARM_PYTHON, run_cli

PROGRAMS = textwrap.dedent("""
    import os
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    import functools
    import numpy as np
    import jax, jax.numpy as jnp
    import optax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    opt = optax.adam(1e-3)


    def loss(params, x):
        return jnp.sum(jnp.tanh(x @ params["w"] + params["b"]) ** 2)


    def train_step(params, opt_state, x):
        grads = jax.grad(loss)(params, x)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state


    def sharded(w, b):
        return w @ b


    @functools.partial(jax.jit, static_argnums=1)
    def scale(x, k):
        return x * k


    def make_adder(c):
        def add(x):
            return x + c
        return add


    def again(x):
        return jnp.cos(x)


    def ident(x):
        return x


    @jax.jit
    def with_token(t, x):
        return t, x + 1


    @jax.jit
    def with_key(key, x):
        return jax.random.normal(key, x.shape) + x


    def main():
        mesh = Mesh(np.array(jax.devices()[:2]), ("data",))
        rows, whole = NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P())
        step = jax.jit(sharded, donate_argnums=0, in_shardings=(rows, whole),
                       out_shardings=NamedSharding(mesh, P("data")))
        step(jnp.ones((4, 4)), jnp.ones((4,)))
        params = {"w": jnp.ones((3, 2)), "b": jnp.zeros((2,))}
        state = opt.init(params)
        train = jax.jit(train_step, donate_argnums=(0, 1))
        for _ in range(2):
            params, state = train(params, state, jnp.ones((5, 3)))
        for k in (1, True, 1.0):
            scale(jnp.ones(3), k)
        for c in (1.0, 2.0):
            jax.jit(make_adder(c))(jnp.ones(2))
        jax.jit(again)(jnp.ones(2))
        jax.clear_caches()
        jax.jit(again)(jnp.ones(2))  # the same program, lowered again
        shard_map = getattr(jax, "shard_map", None)
        if shard_map is None:
            from jax.experimental.shard_map import shard_map
        shard_map(lambda a: a + 1, mesh=mesh, in_specs=P("data"), out_specs=P("data"))(jnp.ones(4))
        jax.pmap(ident)(jnp.arange(1.0))
        jax.grad(lambda p: jnp.sum(jnp.multiply(p, 2.0)))(jnp.ones(3))  # jnp's, transposed
        with_token(jax.lax.create_token(), jnp.ones(2))
        with_key(jax.random.PRNGKey(0), jnp.ones(2))
        if hasattr(jax.random, "key"):
            with_key(jax.random.key(0), jnp.ones(2))
        if hasattr(jax, "new_ref"):
            @jax.jit
            def into_ref(ref, x):
                ref[...] = ref[...] + x
                return x * 2
            into_ref(jax.new_ref(jnp.zeros(3)), jnp.ones(3))
        import jxinspect.record.recorder as recorder
        def broken(*args, **kwargs):
            raise RuntimeError("a reader failed\\nsecond line")
        recorder._report = broken  # every later recording fails inside the hook
        print("broken", float(jax.jit(lambda x: x.sum())(jnp.ones(3))))


    if __name__ == "__main__":
        main()
""")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    project = tmp_path_factory.mktemp("programs")
    (project / "programs.py").write_text(PROGRAMS, encoding="utf-8")
    runs = project / "runs"
    result = run_cli("record", "-o", runs, "--", *WARM_PYTHON, "programs.py", cwd=project)
    # one lowering failed inside the hook: the run went on, and the command says whose
    # failure it is (jxinspect's, on this JAX), never exit 0
    assert result.returncode == 4, result.describe()
    assert "Traceback" not in result.stderr, result.describe()
    line = result.stderr.strip().splitlines()[-1]  # after the notes on what was not recorded
    assert line.startswith("error: internal error (jxinspect ") and f"JAX {JAX_RELEASE}" in line
    assert "1 lowering could not be recorded" in line, line
    assert result.stdout == "broken 3.0\n", result.describe()  # the run's own, unchanged
    index = json.loads((runs / "index.json").read_text(encoding="utf-8"))
    return project, index


def entries(index: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [e for e in index["functions"] if e["name"] == name]


def report(project: Path, entry: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (project / "runs" / entry["folder"] / "report.json").read_text(encoding="utf-8")
    )
    return data


def test_static_values_are_programs_of_their_own(run: tuple[Path, dict[str, Any]]) -> None:
    _, index = run
    found = entries(index, "scale")
    assert [e["statics"] for e in found] == ["k=1", "k=True", "k=1.0"]
    assert [e["folder"] for e in found] == ["scale", "scale.2", "scale.3"]
    assert all(e["lowerings"] == 1 for e in found)


def test_closures_are_programs_and_a_program_lowered_again_is_counted(
    run: tuple[Path, dict[str, Any]],
) -> None:
    project, index = run
    adders = entries(index, "add")
    assert len(adders) == 2 and len({e["program"] for e in adders}) == 2, adders
    (again,) = entries(index, "again")
    assert again["lowerings"] == 2
    shown = run_cli("show", project / "runs", cwd=project)
    assert "`again` (again): the same program was traced and lowered 2 times" in shown.stdout
    assert "`scale` was lowered as 3 programs (scale, scale.2, scale.3)" in shown.stdout


def test_jax_own_helpers_are_counted_not_recorded(run: tuple[Path, dict[str, Any]]) -> None:
    _, index = run
    assert index["internal"] > 0
    assert not [e for e in index["functions"] if e["source"] in (None, "<unknown>")
                and e["stage"] == "jit"]  # fmt: skip
    names = {e["name"] for e in index["functions"]}
    assert not names & {"_multiply", "multiply", "_reduce_sum", "sum"}, names
    (pmapped,) = entries(index, "ident")  # pmap's own `_fun` is not the user's name
    assert pmapped["stage"] == "pmap" and not entries(index, "_fun")


def test_a_token_argument_is_kept_as_main_keeps_it(run: tuple[Path, dict[str, Any]]) -> None:
    project, index = run
    (entry,) = entries(index, "with_token")
    data = report(project, entry)
    token, x = data["inputs"]
    assert (token["name"], token["status"], x["name"], x["status"]) == ("t", "ok", "x", "ok")
    assert [(o["dtype"], o["status"]) for o in data["outputs"]] == [("token", "ok"),
                                                                    ("float32", "ok")]  # fmt: skip


def test_prng_keys_are_recorded_and_a_typed_key_says_why_it_cannot_be_replayed(
    run: tuple[Path, dict[str, Any]],
) -> None:
    project, index = run
    found = entries(index, "with_key")
    assert found and not index["failures"][1:], index["failures"]
    raw = report(project, found[0])["inputs"][0]
    assert (raw["path"], raw["dtype"]) == ("key", "uint32")
    for entry in found[1:]:  # a typed key array: key<fry>
        call = json.loads((project / "runs" / entry["folder"] / "call.json").read_text("utf-8"))
        assert call["options"] is None and "key<fry>" in call["why"], call


def test_a_ref_argument_is_aliased_to_the_value_written_back(
    run: tuple[Path, dict[str, Any]],
) -> None:
    project, index = run
    found = entries(index, "into_ref")
    if not found:
        pytest.skip("this JAX has no jax.new_ref")
    data = report(project, found[0])
    ref = data["inputs"][0]
    outputs = {o["index"]: o for o in data["outputs"]}
    assert ref["aliased_output"] in outputs, data["outputs"]
    assert outputs[ref["aliased_output"]]["path"].endswith("(written back to ref)")


def test_a_failure_inside_the_hook_is_counted_and_the_run_goes_on(
    run: tuple[Path, dict[str, Any]],
) -> None:
    _, index = run
    assert index["failed"] == 1
    (failure,) = index["failures"]
    assert failure == {"function": "<lambda>", "error": "RuntimeError: a reader failed",
                       "count": 1}  # fmt: skip


def facts(data: dict[str, Any], side: str) -> list[tuple[Any, ...]]:
    return [
        (leaf["path"], leaf["name"], leaf["status"], leaf["shape"], leaf["dtype"],
         (leaf.get("sharding") or {}).get("readable"), leaf.get("donated"),
         leaf.get("aliased_output"))
        for leaf in data[side]
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["sharded", "train_step"])
def test_a_replay_stages_the_program_the_run_staged(
    run: tuple[Path, dict[str, Any]], name: str
) -> None:
    """The shardings given to a ``jit`` built in ``main()`` and an optax state of
    NamedTuples replay to the same names, shardings and donation as recorded."""
    project, index = run
    (entry,) = entries(index, name)
    call = json.loads((project / "runs" / entry["folder"] / "call.json").read_text("utf-8"))
    assert call["why"] is None, call
    replayed = run_cli("lower", f"programs.py:{name}", "--args-from-record",
                       f"runs/{entry['folder']}", "--format", "json", cwd=project)  # fmt: skip
    assert replayed.returncode == 0, replayed.describe()
    recorded, again = report(project, entry), json.loads(replayed.stdout)
    assert facts(again, "inputs") == facts(recorded, "inputs")
    assert facts(again, "outputs") == facts(recorded, "outputs")
    if name == "sharded":
        assert call["options"]["in_specs"] == "P('data', None), P()"
        assert [i["sharding"]["readable"] for i in again["inputs"]] == ["P('data', None)",
                                                                        "replicated"]  # fmt: skip
    else:
        assert "optax._src.transform.ScaleByAdamState(count=i32[]" in call["options"]["args"]
