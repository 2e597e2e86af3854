"""Why it compiled again, through the installed command: a scenario corpus (shape, dtype,
weak type, static value, structure, a new function object, the x64 context, a last
batch of each size, and a steady loop) recorded with JAX's own ``jax_explain_cache_misses``
on; every miss JAX explains has a reason of its kind and path in the recording (JAX is
the oracle: its wording differs between releases, the tracing cache's key does not),
``show`` groups them with advice, and ``--max-compiles`` gates the run."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, needs_axis_types, run_cli, timings_out

SCENARIOS = textwrap.dedent("""
    import functools
    import jax, jax.numpy as jnp

    @jax.jit
    def step(batch):
        return batch["x"].sum()

    step({"x": jnp.ones((32, 4))})
    step({"x": jnp.ones((31, 4))})
    step({"x": jnp.ones((31, 4), jnp.int32)})
    step({"x": jnp.ones((31, 4)), "y": jnp.ones(3)})

    @functools.partial(jax.jit, static_argnames="k")
    def scale(x, k):
        return x * k

    scale(jnp.ones(3), k=1)
    scale(jnp.ones(3), k=2)

    @jax.jit
    def mul(x, s):
        return x * s

    mul(jnp.ones(3), 2.0)
    mul(jnp.ones(3), jnp.float32(2.0))

    for i in range(2):
        jax.jit(lambda x: x + 1)(jnp.ones(3))

    @jax.jit
    def ctx(x):
        return x + 1

    ctx(jnp.ones(3))
    jax.config.update("jax_enable_x64", True)
    ctx(jnp.ones(3, jnp.float32))
    jax.config.update("jax_enable_x64", False)

    @jax.jit
    def last_batch(x):
        return x.mean()

    for n in range(32, 0, -1):
        last_batch(jnp.ones((n, 8)))
""")

STEADY = textwrap.dedent("""
    import jax, jax.numpy as jnp

    @jax.jit
    def steady(x):
        return x * 2

    for _ in range(5):
        steady(jnp.ones(3))
""")

TYPES = {"shape", "dtype", "weak_type", "sharding"}


def _record(tmp: Path, script: str, *flags: str) -> tuple[Any, list[dict[str, Any]]]:
    (tmp / "scenarios.py").write_text(script, encoding="utf-8")
    result = run_cli("record", "-o", "runs", *flags, "--", *WARM_PYTHON, "scenarios.py",
                     cwd=tmp, env={"JAX_EXPLAIN_CACHE_MISSES": "1"})  # fmt: skip
    data = json.loads((tmp / "runs" / "compiles.json").read_text(encoding="utf-8"))
    return result, data["compiles"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("recompiles")
    result, compiles = _record(tmp, SCENARIOS, "--max-compiles", "1")
    return tmp, result, compiles


def _explained(stderr: str, script: Path) -> list[tuple[str, str, str | None]]:
    """JAX's explanations of misses of the script's own functions: ``(function, family,
    path)``, the family ``types``, ``pytree``, ``context`` or ``function``."""
    found = []
    for block in re.split(r"(?=TRACING CACHE MISS)", stderr):
        if not block.startswith("TRACING CACHE MISS") or str(script) not in block:
            continue
        named = re.search(r"for (\S+) defined at (\S+)", block) or re.search(
            r"never seen function:\s+(\S+) id=\S+ defined at (\S+)", block)  # fmt: skip
        if named is None or not named.group(2).startswith(str(script)):
            continue
        function = named.group(1)
        if "seen another function defined on the same line" in block:
            found.append((function, "function", None))
        elif re.search(r"tracing context doesn't match|different tracing context", block, re.I):
            # the option is named from 0.7 on; 0.4.35 and 0.6 give a tuple position
            options = re.findall(r"\* (\w+) differs", block) or [None]
            found.extend((function, "context", option) for option in options)
        elif "input pytree" in block or "input path" in block:
            found.append((function, "pytree", None))
        else:
            for path in re.findall(r"\* at ([^,]+),", block):
                found.append((function, "types", path))
    return found


def test_every_miss_jax_explains_has_a_reason_of_its_kind_and_path(
    recorded: tuple[Path, Any, list[dict[str, Any]]],
) -> None:
    tmp, result, compiles = recorded
    explained = _explained(result.stderr, tmp / "scenarios.py")
    assert {f for f, _, _ in explained} >= {"step", "mul", "<lambda>", "ctx", "last_batch"}, (
        result.stderr
    )
    reasons = {(c["function"], r["kind"], r["path"]) for c in compiles for r in c["reasons"]}
    for function, family, path in explained:
        kinds = {k for f, k, p in reasons if f == function and (path is None or p == path)}
        wanted = {"types": TYPES, "pytree": {"static", "structure"}, "context": {"context"},
                  "function": {"function"}}[family]  # fmt: skip
        assert kinds & wanted, (function, family, path, sorted(reasons))


def test_each_scenario_gets_exactly_its_reason(
    recorded: tuple[Path, Any, list[dict[str, Any]]],
) -> None:
    _, _, compiles = recorded
    said = {(c["function"], c["number"]): [(r["kind"], r["path"], r["before"], r["after"])
                                           for r in c["reasons"]] for c in compiles}  # fmt: skip
    assert said[("step", 1)] == []
    assert said[("step", 2)] == [("shape", "batch['x']", "f32[32,4]", "f32[31,4]")]
    assert said[("step", 3)] == [("dtype", "batch['x']", "f32[31,4]", "i32[31,4]")]
    assert said[("step", 4)] == [("structure", "batch['y']", None, "f32[3]")]
    assert said[("scale", 2)] == [("static", "k", "1", "2")]
    assert [r[:2] for r in said[("mul", 2)]] == [("weak_type", "s")]
    assert [r[:2] for r in said[("<lambda>", 2)]] == [("function", None)]
    assert said[("ctx", 2)] == [("context", "jax_enable_x64", "False", "True")]
    assert max(n for f, n in said if f == "last_batch") == 32
    for compile in compiles:  # JAX's own durations
        assert compile["trace_s"] is not None and compile["compile_s"] is not None, compile


def test_max_compiles_names_each_function_over_it_and_exits_1(
    recorded: tuple[Path, Any, list[dict[str, Any]]], tmp_path: Path
) -> None:
    _, result, _ = recorded
    assert result.returncode == 1, result.describe()
    over = [line.split(": JX402 ", 1) for line in result.stderr.splitlines()
            if line.startswith("error: ") and ": JX402 " in line]  # fmt: skip
    assert [said.split()[0] for _, said in over] == [
        "step", "scale", "mul", "<lambda>", "ctx", "last_batch"]  # fmt: skip
    assert over[-1] == [  # JX402's finding, at the function's line
        "error: scenarios.py:40", "last_batch compiled 32 times, over the budget of 1: 31× x "
        "shape (see `jxinspect show` of the recording)"]  # fmt: skip
    steady, compiles = _record(tmp_path, STEADY, "--max-compiles", "1")
    assert steady.returncode == 0, steady.describe()
    assert [(c["function"], c["number"]) for c in compiles] == [("steady", 1)]


def test_show_groups_the_reasons_with_advice(
    recorded: tuple[Path, Any, list[dict[str, Any]]],
) -> None:
    tmp, _, _ = recorded
    shown = run_cli("show", "runs", cwd=tmp)
    assert shown.returncode == 0, shown.describe()
    section = shown.stdout.split("\nrecompiles\n", 1)[1]
    assert "  last_batch (last_batch at " in section and ": 32 compiles, " in section
    assert "    compiles 2–32 (31×, " in section
    assert "      31× x shape f32[32,8] → f32[N,8], N in 1..31" in section
    assert "    advice (shape): pad or bucket the dimension that varies" in section
    assert "    advice (function): hoist the jit out of the loop" in section
    data = json.loads(run_cli("show", "runs", "--format", "json", cwd=tmp).stdout)
    step = next(f for f in data["recompiles"] if f["function"] == "step")
    assert step["count"] == 4 and [c["number"] for c in step["compiles"]] == [1, 2, 3, 4]
    assert {g["kind"] for g in step["groups"]} == {"shape", "dtype", "structure"}


CLEARED = textwrap.dedent("""
    import jax, jax.numpy as jnp

    @jax.jit
    def scale(x):
        return x * 2.0

    scale(jnp.ones(3))
    jax.clear_caches()
    scale(jnp.ones(3))
""")


def test_lint_records_judges_compiles_with_jx401_and_jx402(
    recorded: tuple[Path, Any, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """``lint --records``: JX402 on each function compiled more than ``max_compiles``
    (a budget at the top level), once, on its first program's target; JX401 where the
    same program compiled again (a cleared cache)."""
    tmp, _, compiles = recorded
    (tmp / "jxinspect.yaml").write_text("budgets: {max_compiles: 2}\n", encoding="utf-8")
    result = run_cli("lint", "--records", "runs", "--format", "json", cwd=tmp)
    assert result.returncode == 1, result.describe()
    found = [(t["target"], f["code"], f["message"]) for t in json.loads(result.stdout)["targets"]
             for f in t["findings"] if f["code"].startswith("JX4")]  # fmt: skip
    counts = {f: sum(1 for c in compiles if c["function"] == f) for f in ("step", "last_batch")}
    assert counts == {"step": 4, "last_batch": 32}
    # once per function, on its first program's target ("step (f32[32,4])"); JX401 on the
    # lambda made anew each time round its loop, which made the same program twice
    assert [(t.split(":")[1], code) for t, code, _ in found] == [
        ("step (f32[32,4])", "JX402"), ("<lambda>", "JX401"),
        ("last_batch (f32[32,8])", "JX402")]  # fmt: skip
    assert found[0][2] == ("step compiled 4 times, over the budget of 2: 1× batch['x'] shape, "
                           "1× batch['x'] dtype, 1× batch['y'] structure (see `jxinspect show` "
                           "of the recording)")  # fmt: skip
    assert found[2][2] == ("last_batch compiled 32 times, over the budget of 2: 31× x shape "
                           "(see `jxinspect show` of the recording)")  # fmt: skip
    (tmp_path / "cleared.py").write_text(CLEARED, encoding="utf-8")
    assert run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "cleared.py",
                   cwd=tmp_path).returncode == 0  # fmt: skip
    cleared = run_cli("lint", "--records", "runs", "--format", "json", cwd=tmp_path)
    assert cleared.returncode == 0, cleared.describe()  # a warning: below --fail-on error
    [target] = json.loads(cleared.stdout)["targets"]
    assert [(f["code"], f["severity"], f["message"]) for f in target["findings"]] == [
        ("JX401", "warning", "scale compiled the same program again 1× (#2 of 2 compiles) "
         "(called from cleared.py:10): nothing JAX's cache tells calls apart changed")]  # fmt: skip


OBSERVED = textwrap.dedent("""
    import collections, jax, jax.numpy as jnp
    events = collections.Counter()
    jax.monitoring.register_event_listener(lambda event, **kw: events.update([event]))
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, duration, **kw: events.update([event]))

    @jax.jit
    def f(x, n):
        return x * n

    for shape in ((3,), (3,), (4,)):
        f(jnp.ones(shape), 2)
    for i in range(2):
        jax.jit(lambda x: x + 1)(jnp.ones(3))
    print("cache", f._cache_size())
    for event, count in sorted(events.items()):
        print("event", event, count)
""")


def _jax_says(stderr: str) -> list[str]:
    """JAX's own log lines (cache-miss explanations, compile logs), with object ids,
    addresses and timings taken out."""
    kept = [line for line in stderr.splitlines()
            if not line.startswith(("jxinspect record", "note:"))]  # fmt: skip
    text = "\n".join(kept)
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+", "…", text)  # a log record's time
    text = re.sub(r"costing \d+\.\d+ ms", "costing … ms", text)
    text = re.sub(r"id=\d+", "id=…", text)
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    return timings_out(text).splitlines()


def test_record_is_invisible_to_jaxs_logs_counters_and_events(tmp_path: Path) -> None:
    """Nothing of jxinspect traces, lowers or compiles in the recorded process: JAX's
    cache-miss explanations, its compile log, its cache and its monitoring events read
    the same with and without ``record``."""
    (tmp_path / "observed.py").write_text(OBSERVED, encoding="utf-8")
    env = {"JAX_EXPLAIN_CACHE_MISSES": "1", "JAX_LOG_COMPILES": "1"}
    plain = run_cli("observed.py", command=WARM_PYTHON, cwd=tmp_path, env=env)
    assert plain.returncode == 0, plain.describe()
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "observed.py",
                       cwd=tmp_path, env=env)  # fmt: skip
    assert recorded.returncode == 0, recorded.describe()
    assert recorded.stdout == plain.stdout
    assert "TRACING CACHE MISS" in plain.stderr and "event " in plain.stdout
    assert _jax_says(recorded.stderr) == _jax_says(plain.stderr)


EQUINOX = textwrap.dedent("""
    import equinox as eqx, jax.numpy as jnp

    @eqx.filter_jit
    def f(x, flag):
        return x * 2 if flag else x

    @eqx.filter_jit
    def g(x):
        return x + 1

    f(jnp.ones(3), True)
    f(jnp.ones(4), True)
    f(jnp.ones(4), False)
    g(jnp.ones(3))
""")


def test_compiles_under_equinox_name_and_group_by_the_users_function(tmp_path: Path) -> None:
    """``eqx.filter_jit`` jits a function of Equinox's own (``fun_wrapped``): the
    compiles are the user's ``f`` and ``g``, each with its own file and line, and their
    reasons name the user's arguments."""
    pytest.importorskip("equinox")
    result, compiles = _record(tmp_path, EQUINOX)
    assert result.returncode == 0, result.describe()
    script = tmp_path / "scenarios.py"
    assert [(c["source"], c["number"]) for c in compiles] == [
        (f"f at {script}:4", 1), (f"f at {script}:4", 2), (f"f at {script}:4", 3),
        (f"g at {script}:8", 1)]  # fmt: skip
    # the user's paths and static values, not filter_jit's dynamic_nodonate['rest'][0][0]
    reasons = [[(r["kind"], r["path"], r["before"], r["after"]) for r in c["reasons"]]
               for c in compiles]  # fmt: skip
    assert reasons == [[], [("shape", "x", "f32[3]", "f32[4]")],
                       [("static", "flag", "True", "False")], []]  # fmt: skip
    # the user's line that called f, not Equinox's own call of its inner jit
    assert [c["call_site"] for c in compiles] == [f"{script}:{n}" for n in (12, 13, 14, 15)]


LAMBDA_PER_STEP = textwrap.dedent("""
    import jax, jax.numpy as jnp

    x = jnp.ones(3)
    for step in range(8):
        x = jax.jit(lambda v: v * 2.0)(x)
""")


def test_a_new_function_object_per_step_that_makes_the_same_program_is_jx401(
    tmp_path: Path,
) -> None:
    """A ``jax.jit(lambda ...)`` made anew each step compiles 8 times (JAX: "never seen
    function" each time) and makes one program: with no configuration, ``lint --records``
    reports it (it passed without a word)."""
    (tmp_path / "lam.py").write_text(LAMBDA_PER_STEP, encoding="utf-8")
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "lam.py", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.describe()
    linted = run_cli("lint", "--records", "runs", "--format", "json", cwd=tmp_path)
    assert linted.returncode == 0, linted.describe()  # a warning: below --fail-on error
    [target] = json.loads(linted.stdout)["targets"]
    assert [(f["code"], f["severity"], f["message"]) for f in target["findings"]] == [
        ("JX401", "warning", "<lambda> compiled the same program again 7× for a new function "
         "object of the same code (8 compiles) (called from lam.py:6): a jit (or lambda) "
         "made anew each call")]  # fmt: skip


STATIC_FLAG = textwrap.dedent("""
    import functools
    import jax, jax.numpy as jnp

    @functools.partial(jax.jit, static_argnames="training")
    def evaluate(p, b, training=False):
        return p * b if training else p + b

    p, b = jnp.ones(3), jnp.ones(3)
    evaluate(p, b)
    evaluate(p, b, training=False)
    evaluate(p, b, training=True)
""")


def test_a_static_flag_passed_or_changed_is_a_static_reason(tmp_path: Path) -> None:
    """A static argument left to its default, then passed (its default, then another
    value): JAX misses its cache each time ("different input pytree"); each reason is a
    static argument given or changed, with the static-argument advice, never a pytree
    structure (``training structure (none) → True``)."""
    (tmp_path / "flag.py").write_text(STATIC_FLAG, encoding="utf-8")
    env = {"JAX_EXPLAIN_CACHE_MISSES": "1"}
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "flag.py", cwd=tmp_path,
                       env=env)  # fmt: skip
    assert recorded.returncode == 0, recorded.describe()
    # the oracle: JAX misses its cache at each of the three calls (0.4.35 also at its own
    # eager operations of line 9, which are no compile of evaluate)
    calls = re.findall(r"TRACING CACHE MISS at \S*flag\.py:(\d+)", recorded.stderr)
    assert [line for line in calls if line in ("10", "11", "12")] == ["10", "11", "12"], calls
    compiles = json.loads((tmp_path / "runs" / "compiles.json").read_text())["compiles"]
    said = [[(r["kind"], r["path"], r["before"], r["after"]) for r in c["reasons"]]
            for c in compiles if c["function"] == "evaluate"]  # fmt: skip
    assert said == [
        [],
        [("static", "training", "not passed (its default)", "False")],
        # against the nearest earlier compile (the first: each differs from it by one)
        [("static", "training", "not passed (its default)", "True")],
    ]
    shown = run_cli("show", "runs", cwd=tmp_path)
    assert "advice (static): mark it static only where it takes a few values" in shown.stdout
    assert "structure" not in shown.stdout, shown.stdout


MIXED = textwrap.dedent("""
    import jax, jax.numpy as jnp

    x = jnp.ones(3)
    for step in range(3):
        x = jax.jit(lambda v: v * 2.0)(x)
    y = jnp.sin(x) + jnp.cos(x)
""")


def test_records_summary_says_where_the_compile_time_went(tmp_path: Path) -> None:
    """``record``'s summary and ``show`` give the compile time, the user's functions' and
    JAX's own (eager operations) apart, with the lines that made JAX's own, as JAX's own
    duration events count them: as many compiles as a plain run's backend compiles."""
    (tmp_path / "mixed.py").write_text(MIXED, encoding="utf-8")
    counter = (
        "import collections, jax\n"
        "seen = collections.Counter()\n"
        "jax.monitoring.register_event_duration_secs_listener("
        "lambda event, duration, **kw: seen.update([event]))\n"
        "exec(open('mixed.py').read())\n"
        "print(seen['/jax/core/compile/backend_compile_duration'])\n"
    )
    plain = run_cli("-c", counter, command=WARM_PYTHON, cwd=tmp_path)
    assert plain.returncode == 0, plain.describe()
    compiled = int(plain.stdout.split()[-1])
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "mixed.py", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.describe()
    line = next(x for x in recorded.stderr.splitlines() if "compiling took" in x)
    found = re.fullmatch(
        r"jxinspect record: compiling took ([\d.]+) s of the run's ([\d.]+) s: 3 compiles of "
        r"your functions ([\d.]+) s; (\d+) of JAX's own ([\d.]+) s, most at (.*)",
        line,
    )
    assert found, line
    total, run, yours, own, theirs, most = found.groups()
    assert 3 + int(own) == compiled, (line, compiled)
    assert float(total) <= float(run) and abs(float(yours) + float(theirs) - float(total)) < 0.15
    assert most.startswith(f"{tmp_path / 'mixed.py'}:7 3×") or most.startswith("mixed.py:7 3×"), (
        most
    )
    shown = run_cli("show", "runs", cwd=tmp_path)
    assert f"compiles:  {line.removeprefix('jxinspect record: ')}" in shown.stdout.splitlines()


OWN_OUTPUTS = textwrap.dedent("""
    import functools, os
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    import jax, jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((4,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
    replicated = NamedSharding(mesh, P(None, None))

    @functools.partial(jax.jit, out_shardings=replicated)
    def step(w, x):
        return w - 0.01 * (x.T @ (x @ w))

    w = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P()))
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("data")))
    for _ in range(4):
        w = step(w, x)
    print(w.sharding.spec)
""")


@needs_axis_types
def test_a_loop_fed_its_own_outputs_records_the_compiles_jax_logs(tmp_path: Path) -> None:
    """A step fed its own replicated outputs (``P(None, None)``, the layout of the first
    call's ``P()`` spelled otherwise): JAX's C++ dispatch misses on the second call and
    every cache below it answers; ``record`` counts the compiles JAX's own log counts,
    and ``--max-compiles 1`` holds."""
    (tmp_path / "loop.py").write_text(OWN_OUTPUTS, encoding="utf-8")
    result, compiles = _record(tmp_path, OWN_OUTPUTS, "--max-compiles", "1")
    assert "P(None, None)" in result.stdout, result.describe()
    logged = run_cli("loop.py", command=WARM_PYTHON, cwd=tmp_path,
                     env={"JAX_LOG_COMPILES": "1"})  # fmt: skip
    assert logged.returncode == 0, logged.describe()
    # JAX logs "Compiling jit(step) …" (0.4.35: "Compiling step …") once per lowering
    jax_compiles = len(re.findall(r"Compiling (?:jit\()?step\b", logged.stderr))
    assert jax_compiles >= 1, logged.stderr
    assert [c["function"] for c in compiles] == ["step"] * jax_compiles, compiles
    assert result.returncode == 0, result.describe()
    assert all(c["trace_s"] is not None and c["lower_s"] is not None for c in compiles), compiles
    shown = run_cli("show", "runs", cwd=tmp_path)
    assert shown.returncode == 0, shown.describe()
    assert "P() → P(None, None)" not in shown.stdout and "\nrecompiles\n" not in shown.stdout


RESPELLED = textwrap.dedent("""
    import os
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:4]), ("data",))

    @jax.jit
    def step(w, x):
        return (w * x.sum()).sum()

    def placed(value, *spec):
        return jax.device_put(value, NamedSharding(mesh, P(*spec)))

    step(placed(jnp.ones((8, 8)), "data", None), placed(jnp.ones(8)))
    step(placed(jnp.ones((8, 8)), "data"), placed(jnp.ones(8), "data"))
""")


def test_a_sharding_only_spelled_otherwise_is_no_reason(tmp_path: Path) -> None:
    """The second call passes ``w`` as ``P('data')``, the layout of the first call's
    ``P('data', None)`` (a trailing ``None`` splits nothing), and ``x`` split where it
    was replicated: ``x``'s sharding alone is the second compile's reason."""
    result, compiles = _record(tmp_path, RESPELLED)
    assert result.returncode == 0, result.describe()
    assert [c["number"] for c in compiles] == [1, 2], compiles
    said = [(r["kind"], r["path"], r["before"], r["after"]) for r in compiles[1]["reasons"]]
    assert said == [("sharding", "x", "P()", "P('data')")], said
    shown = run_cli("show", "runs", cwd=tmp_path)
    assert "      x sharding P() → P('data')" in shown.stdout, shown.describe()
    assert "P('data', None) →" not in shown.stdout, shown.stdout


TWICE = textwrap.dedent("""
    import jax, jax.numpy as jnp

    @jax.jit
    def scale(x):
        return x * 2.0

    scale(jnp.ones(3))
    scale(jnp.ones(4))
""")


def test_show_and_lint_records_judge_one_recording_alike(tmp_path: Path) -> None:
    """``budgets: {max_compiles: 1}`` set after the run was recorded, a function compiled
    twice: ``show --fail-on error`` and ``lint --records`` judge the recording under the
    one policy with its compiles, and give the same exit and findings; the recording's
    function folder shows the same finding; ``ignore`` silences it in both."""
    (tmp_path / "twice.py").write_text(TWICE, encoding="utf-8")
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "twice.py", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.describe()
    config = tmp_path / "jxinspect.yaml"
    config.write_text("budgets: {max_compiles: 1}\n", encoding="utf-8")
    shown = run_cli("show", "runs", "--fail-on", "error", "--format", "json", cwd=tmp_path)
    linted = run_cli("lint", "--records", "runs", "--format", "json", cwd=tmp_path)
    assert shown.returncode == linted.returncode == 1, (shown.describe(), linted.describe())
    targets = json.loads(linted.stdout)["targets"]
    linted_found = [(t["target"].split(":")[1], f["code"], f["message"])
                    for t in targets for f in t["findings"]]  # fmt: skip
    assert [(target, code) for target, code, _ in linted_found] == [("scale (f32[3])", "JX402")]
    functions = json.loads(shown.stdout)["functions"]
    assert [(f["folder"], f["finding_codes"], f["findings"]) for f in functions] == [
        ("scale", ["JX402"], 1), ("scale.2", [], 0)]  # fmt: skip
    one = run_cli("show", "runs/scale", "--fail-on", "error", "-f", "json", cwd=tmp_path)
    assert one.returncode == 1, one.describe()
    found = [(f["code"], f["message"]) for f in json.loads(one.stdout)["findings"]]
    assert found == [(code, message) for _, code, message in linted_found]
    config.write_text("ignore: [JX402]\nbudgets: {max_compiles: 1}\n", encoding="utf-8")
    shown = run_cli("show", "runs", "--fail-on", "error", cwd=tmp_path)
    linted = run_cli("lint", "--records", "runs", cwd=tmp_path)
    assert shown.returncode == linted.returncode == 0, (shown.describe(), linted.describe())


BUDGETED = textwrap.dedent("""
    import jax, jax.numpy as jnp
    from jxinspect.testing import assert_max_compiles

    @jax.jit
    def scale(x):
        return x * 2.0

    try:
        with assert_max_compiles(1):
            scale(jnp.ones(3))
            scale(jnp.ones(4))
    except AssertionError as failed:
        print("assert_max_compiles:", str(failed).splitlines()[0].split(": JX402 ", 1)[1])
    else:
        print("assert_max_compiles: held")
""")

BUDGET = ("scale compiled 2 times, over the budget of 1: 1× x shape (see `jxinspect show` of "
          "the recording)")  # fmt: skip


@pytest.mark.parametrize(
    ("configured", "fail_on", "fails", "said"),
    [
        ("", "error", True, "error"),
        ("ignore: [JX402]\n", "error", False, None),
        ("severity: {JX402: warning}\n", "error", False, "warning"),
        ("severity: {JX402: warning}\nfail_on: warning\n", "warning", True, "warning"),
    ],
)
def test_the_compile_budget_is_jx402_judged_alike_by_every_reader(
    tmp_path: Path, configured: str, fail_on: str, fails: bool, said: str | None
) -> None:
    """One run of a function compiled twice, a budget of one: ``record --max-compiles 1``,
    ``assert_max_compiles(1)`` inside the recorded run, and ``lint --records`` and ``show``
    of the recording under ``budgets: {max_compiles: 1}`` each say JX402's one finding (or
    none) at one severity and fail alike; the project's ``ignore``, ``severity`` and
    ``fail_on`` change every one of them the same way."""
    (tmp_path / "budgeted.py").write_text(BUDGETED, encoding="utf-8")
    config = tmp_path / "jxinspect.yaml"
    config.write_text(configured, encoding="utf-8")
    recorded = run_cli("record", "-o", "runs", "--max-compiles", "1", "--",
                       *WARM_PYTHON, "budgeted.py", cwd=tmp_path)  # fmt: skip
    config.write_text(configured + "budgets: {max_compiles: 1}\n", encoding="utf-8")
    linted = run_cli("lint", "--records", "runs", "--format", "json", cwd=tmp_path)
    shown = run_cli("show", "runs/scale", "--fail-on", fail_on, "-f", "json", cwd=tmp_path)
    exits = 1 if fails else 0
    assert (recorded.returncode, linted.returncode, shown.returncode) == (exits,) * 3, (
        recorded.describe(), linted.describe(), shown.describe())  # fmt: skip
    expected = [(said, BUDGET)] if said is not None else []
    in_record = [(line.split(": ", 1)[0], line.split(": JX402 ", 1)[1])
                 for line in recorded.stderr.splitlines() if ": JX402 " in line]  # fmt: skip
    assert in_record == expected, recorded.describe()
    asserted = [line for line in recorded.stdout.splitlines() if line.startswith("assert_max")]
    held = not fails
    assert asserted == (
        ["assert_max_compiles: held"] if held else [f"assert_max_compiles: {said} {BUDGET}"]
    ), recorded.describe()
    found = [(f["severity"], f["message"]) for t in json.loads(linted.stdout)["targets"]
             for f in t["findings"] if f["code"] == "JX402"]  # fmt: skip
    assert found == expected, linted.describe()
    found = [(f["severity"], f["message"]) for f in json.loads(shown.stdout)["findings"]
             if f["code"] == "JX402"]  # fmt: skip
    assert found == expected, shown.describe()
