"""`jxinspect record -- python script.py` and `jxinspect show`, end to end: real scripts
run under the real JAX of this environment, recorded, and compared with `lower`."""

from __future__ import annotations

import difflib
import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, WARM_PYTHON, error_line, index_of, run_cli

PYTHON = sys.executable
"""A new Python, for the tests of how a run starts (the hook loaded before ``import jax``,
signals, a run without JAX); the others run ``WARM_PYTHON``, a second sooner each."""

STEPS = """
import jax.numpy as jnp


def step(params, x):
    y = x @ params["w"] + params["b"]
    return {"params": params, "loss": jnp.sum(y * y)}


JXINSPECT = {"step": {"devices": 8, "mesh": "data=4,model=2", "donate_argnums": 0,
                      "args": "{'w': f32[16,8@model], 'b': f32[8@model]}, f32[32@data,16]"}}
"""

RUN = """
import os
import sys
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

import steps

mesh = jax.make_mesh((4, 2), ("data", "model"))
put = lambda value, *spec: jax.device_put(value, NamedSharding(mesh, P(*spec)))
params = {"w": put(jnp.ones((16, 8)), None, "model"), "b": put(jnp.zeros(8), "model")}
x = put(jnp.ones((32, 16)), "data", None)
out = jax.jit(steps.step, donate_argnums=0)(params, x)
print("loss", float(out["loss"]))
for _ in range(3):
    jax.jit(lambda v: v * 2)(jnp.ones(3))  # a new function each time: traced again
jax.jit(lambda v: v + 1)(jnp.ones(4))
sys.stderr.write("the run's own stderr\\n")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def write_project(folder: Path) -> Path:
    (folder / "steps.py").write_text(STEPS, encoding="utf-8")
    (folder / "run.py").write_text(RUN, encoding="utf-8")
    return folder


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The project and ``record -o runs -- python run.py`` in it, once for the tests
    that only read the recording."""
    project = write_project(tmp_path_factory.mktemp("recorded"))
    return project, record(project / "runs", "--", *WARM_PYTHON, "run.py", cwd=project)


@pytest.fixture()
def recorded_copy(recorded: tuple[Path, Any], tmp_path: Path) -> Path:
    """A copy of the recorded project, for a test that changes it."""
    assert recorded[1].returncode == 0, recorded[1].describe()
    return Path(shutil.copytree(recorded[0], tmp_path / "project"))


def record(folder: Path, *args: str, cwd: Path) -> Any:
    return run_cli("record", "-o", folder, *args, cwd=cwd)


def report_of(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return data


def leaf_facts(report: dict[str, Any], side: str) -> list[tuple[Any, ...]]:
    return [
        (leaf["path"], leaf["name"], leaf["status"], leaf["shape"], leaf["dtype"],
         (leaf.get("sharding") or {}).get("readable"), leaf.get("donated"))
        for leaf in report[side]
    ]  # fmt: skip


def test_record_matches_lower_and_passes_the_run_through(recorded: tuple[Path, Any]) -> None:
    project, result = recorded
    runs = project / "runs"
    assert result.returncode == 0, result.describe()
    assert result.stdout == "loss 65536.0\n"  # the run's stdout, and nothing of ours
    assert "the run's own stderr" in result.stderr
    assert "3 functions recorded" in result.stderr
    index = index_of(runs)
    assert index["complete"] is True and index["exit_code"] == 0
    names = [(e["name"], e["lowerings"]) for e in index["functions"]]
    assert names == [("step", 1), ("<lambda>", 3), ("<lambda>", 1)]
    recorded = report_of(runs / "step")
    assert recorded["target"] == "steps.py:step"
    lowered = run_cli("lower", "steps.py:step", "--format", "json", cwd=project)
    assert lowered.returncode == 0, lowered.describe()
    expected = json.loads(lowered.stdout)
    assert leaf_facts(recorded, "inputs") == leaf_facts(expected, "inputs")
    # names and paths alike; a real call's lowering also annotates the results' shardings,
    # which staging abstract inputs (`lower`) leaves to the compiler
    without_sharding = lambda facts: [f[:5] for f in facts]  # noqa: E731
    assert without_sharding(leaf_facts(recorded, "outputs")) == without_sharding(
        leaf_facts(expected, "outputs")
    )
    assert any(leaf["sharding"] for leaf in recorded["inputs"])  # shardings were recorded
    assert recorded["mesh"] == expected["mesh"]


def test_show_summarizes_the_folder_and_each_function(recorded: tuple[Path, Any]) -> None:
    project, result = recorded
    runs = project / "runs"
    assert result.returncode == 0, result.describe()
    summary = run_cli("show", runs, cwd=project)
    assert summary.returncode == 0, summary.describe()
    assert "run:       the run exited with 0" in summary.stdout
    assert "the same program was traced and lowered 3 times" in summary.stdout
    assert "computations of JAX's own" in summary.stdout
    (row,) = [line for line in summary.stdout.splitlines() if line.startswith("step ")]
    assert row.endswith("  step at steps.py:5"), row  # as every section: under the folder
    as_json = json.loads(run_cli("show", runs, "--format", "json", cwd=project).stdout)
    assert as_json["functions"][0]["source"] == f"step at {project / 'steps.py'}:5"
    assert [f["folder"] for f in as_json["functions"]] == ["step", "lambda", "lambda.2"]
    assert as_json["functions"][0]["inputs"] == {"ok": 3}
    assert [f["replay"] for f in as_json["functions"]] == [True, True, True]
    one = run_cli("show", runs / "step", cwd=project)
    assert one.returncode == 0 and "params['w']" in one.stdout and "P(None, 'model')" in one.stdout
    report = json.loads(run_cli("show", runs / "step", "-f", "json", cwd=project).stdout)
    assert report["schema"] == "jxinspect.report/1" and report["function"].startswith("step at ")


def test_the_runs_exit_code_is_kept_and_the_folder_says_it_is_incomplete(project: Path) -> None:
    runs = project / "runs"
    result = record(runs, "--", *WARM_PYTHON, "run.py", "5", cwd=project)
    assert result.returncode == 5, result.describe()
    index = index_of(runs)
    assert index["complete"] is False and index["exit_code"] == 5
    assert (runs / "step" / "report.json").is_file()  # what was recorded is kept
    assert "exited with 5: the recording may be incomplete" in run_cli("show", runs).stdout


def test_a_killed_run_keeps_what_was_recorded(tmp_path: Path) -> None:
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent("""
        import os, signal
        import jax
        jax.jit(lambda x: x * 2)(1.0)
        jax.jit(lambda x: x + 1)(1.0)  # recorded after the index was last written
        os.kill(os.getpid(), signal.SIGKILL)
    """), encoding="utf-8")  # fmt: skip
    result = record(tmp_path / "runs", "--", PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 128 + 9, result.describe()
    index = index_of(tmp_path / "runs")
    assert index["complete"] is False and index["exit_code"] == -9
    assert [e["folder"] for e in index["functions"]] == ["lambda", "lambda.2"]
    shown = run_cli("show", tmp_path / "runs", cwd=tmp_path)
    assert "killed by signal 9: the recording is incomplete" in shown.stdout


def test_stop_after_only_and_max_functions(project: Path) -> None:
    stopped = record(
        project / "a", "--stop-after", "step", "--", *WARM_PYTHON, "run.py", cwd=project
    )
    assert stopped.returncode == 0, stopped.describe()
    assert stopped.stdout == ""  # the run ended before it printed
    index = index_of(project / "a")
    assert index["stopped_after"] == "step" and index["complete"] is True
    assert [e["name"] for e in index["functions"]] == ["step"]
    only = record(project / "b", "--only", "<lambda>", "--", *WARM_PYTHON, "run.py", cwd=project)
    assert only.returncode == 0, only.describe()
    assert [e["name"] for e in index_of(project / "b")["functions"]] == ["<lambda>", "<lambda>"]
    assert index_of(project / "b")["not_selected"] == 1
    capped = record(
        project / "c", "--max-functions", "1", "--", *WARM_PYTHON, "run.py", cwd=project
    )
    assert capped.returncode == 0, capped.describe()
    assert [e["name"] for e in index_of(project / "c")["functions"]] == ["step"]
    assert index_of(project / "c")["over_limit"] == 4  # the lambdas' lowerings
    assert "after --max-functions was reached" in capped.stderr


def test_a_run_that_records_nothing_does_not_pass(tmp_path: Path) -> None:
    result = record(tmp_path / "runs", "--", PYTHON, "-c", "print('no jax here')", cwd=tmp_path)
    assert result.returncode == 3, result.describe()
    assert result.stdout == "no jax here\n"
    assert "error: nothing recorded in" in result.stderr
    filtered = record(tmp_path / "r2", "--only", "nope", "--", PYTHON, "-c",
                      "import jax; jax.jit(lambda x: x)(1.0)", cwd=tmp_path)  # fmt: skip
    assert filtered.returncode == 3 and "every function was left out by --only" in filtered.stderr


def test_a_folder_another_record_is_starting_in_is_recorded_into(tmp_path: Path) -> None:
    """Each process of a run started by a record of its own at once (a shell loop): the
    folder may hold only the index another one is writing and its processes' folders."""
    runs = tmp_path / "runs"
    (runs / "process-0").mkdir(parents=True)
    (runs / ".index.json.k2x8.tmp").write_text("{", encoding="utf-8")
    code = "import jax; jax.jit(lambda x: x * 2)(1.0)"
    result = record(runs, "--", *WARM_PYTHON, "-c", code, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert [e["name"] for e in index_of(runs)["functions"]] == ["<lambda>"]


def test_bad_uses_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine", encoding="utf-8")
    taken = record(tmp_path / "taken", "--", PYTHON, "-c", "pass", cwd=tmp_path)
    assert taken.returncode == 2 and "is not empty and holds no recording" in error_line(taken)
    assert (tmp_path / "taken" / "notes.txt").read_text(encoding="utf-8") == "mine"
    nothing = run_cli("record", "-o", tmp_path / "x", cwd=tmp_path)
    assert nothing.returncode == 2 and "give the command to record after --" in error_line(nothing)
    missing = record(tmp_path / "y", "--", "no-such-program-here", cwd=tmp_path)
    assert missing.returncode == 2 and "no such program" in error_line(missing)
    not_a_record = run_cli("show", tmp_path / "taken", cwd=tmp_path)
    assert not_a_record.returncode == 2 and "is neither a record folder" in error_line(not_a_record)


def test_recording_again_replaces_the_previous_recording(recorded_copy: Path) -> None:
    project = recorded_copy
    runs = project / "runs"
    assert sorted(p.name for p in runs.iterdir()) == [
        "compiles.json", "index.json", "lambda", "lambda.2", "step"]  # fmt: skip
    again = record(runs, "--only", "step", "--", *WARM_PYTHON, "run.py", cwd=project)
    assert again.returncode == 0, again.describe()
    assert sorted(p.name for p in runs.iterdir()) == ["compiles.json", "index.json", "step"]
    compiles = json.loads((runs / "compiles.json").read_text(encoding="utf-8"))["compiles"]
    assert {c["function"] for c in compiles} == {"step"}  # the previous run's are gone


def test_the_sample_training_script(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    script = REPO / "sample_programs" / "record" / "train.py"
    result = record(runs, "--", *WARM_PYTHON, str(script), "--steps", "2", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert result.stdout.count("step ") == 2
    index = index_of(runs)
    entries = {e["folder"]: e for e in index["functions"]}
    assert set(entries) == {"train_step", "loss_fn", "evaluate", "evaluate.2"}
    assert entries["loss_fn"]["lowerings"] == 2  # a new partial each step
    train = report_of(runs / "train_step")
    assert [leaf["donated"] for leaf in train["inputs"]] == [True] * 4 + [False] * 2
    assert all(leaf["status"] == "ok" for leaf in train["inputs"] + train["outputs"])
    assert train["mesh"] == "data=4,model=2"
    # the README's replay line, on the shipped sample
    replayed = run_cli("lower", f"{script}:train_step", "--args-from-record",
                       runs / "train_step", "--format", "json", cwd=tmp_path)  # fmt: skip
    assert replayed.returncode == 0, replayed.describe()
    again = json.loads(replayed.stdout)
    assert [leaf["path"] for leaf in again["inputs"]] == [leaf["path"] for leaf in train["inputs"]]
    assert again["mesh"] == "data=4,model=2"


def test_pmap_is_recorded(tmp_path: Path) -> None:
    script = tmp_path / "pm.py"
    script.write_text(textwrap.dedent("""
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        import jax, jax.numpy as jnp
        def step(w, x):
            return {"w": w * jax.lax.pmean(x, "batch").sum(), "n": jax.lax.psum(1, "batch")}
        p = jax.pmap(step, axis_name="batch", in_axes=(None, 0), out_axes={"w": None, "n": None})
        print(p(jnp.ones(3), jnp.ones((4, 3)))["n"])
    """), encoding="utf-8")  # fmt: skip
    result = record(tmp_path / "runs", "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    (entry,) = index_of(tmp_path / "runs")["functions"]
    assert entry["name"] == "step" and entry["stage"] == "pmap"
    report = report_of(tmp_path / "runs" / entry["folder"])
    assert report["stage"] == "pmap" and report["num_devices"] == 4


def test_arguments_with_reduced_and_unreduced_axes_are_recorded(tmp_path: Path) -> None:
    """A pruned argument's sharding is read from its type's ``PartitionSpec``, which from
    JAX 0.10.2 refuses to be iterated when it names ``reduced`` or ``unreduced`` axes (the
    whole shard_map test file of 0.10.2 had ten lowerings unrecorded, record exiting 4).
    A reduced value is a copy on every device; an unreduced one (partial sums) is said
    ``unknown``, with JAX's own spec as its text (where the release makes one so)."""
    script = tmp_path / "partial.py"
    script.write_text(textwrap.dedent("""
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
        import numpy as np
        import jax
        from jax.sharding import AxisType, PartitionSpec as P
        mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
        with jax.set_mesh(mesh):
            reduced = jax.device_put(np.arange(8.0), P(reduced={"x"}))
            split = jax.device_put(np.arange(8.0), P("x"))
            jax.jit(lambda a, y: y * 2)(reduced, split)
            print(jax.typeof(reduced).sharding.spec)
            try:  # 0.12 wants the partial sums cast to unreduced first
                partial_sums = jax.shard_map(lambda a, b: a @ b, out_specs=P(unreduced={"x"}))
                unreduced = jax.jit(partial_sums)(split, split)
            except ValueError:
                raise SystemExit(0)
            jax.jit(lambda b, y: y * 3)(unreduced, split)
            print(jax.typeof(unreduced).sharding.spec)
    """), encoding="utf-8")  # fmt: skip
    plain = run_cli(script.name, command=WARM_PYTHON, cwd=tmp_path)
    if plain.returncode != 0:  # the release has no reduced axes, or refuses these
        pytest.skip(f"this JAX runs no such program: {plain.stderr.strip()[-200:]}")
    result = record(tmp_path / "runs", "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert result.stdout == plain.stdout
    specs = plain.stdout.splitlines()
    reports = [report_of(tmp_path / "runs" / e["folder"])
               for e in index_of(tmp_path / "runs")["functions"]]  # fmt: skip
    pruned = [(i["path"], i["sharding"]["kind"], i["sharding"]["raw"])
              for r in reports for i in r["inputs"] if i["status"] == "pruned"]  # fmt: skip
    expected = [("a", "replicated", specs[0])]
    if len(specs) == 2:  # a release whose types keep no unreduced axes says P(): replicated
        expected.append(("b", "unknown" if "unreduced" in specs[1] else "replicated", specs[1]))
    assert pruned == expected


LIBRARY_RUNS = {
    "nnx_mnist": (
        "flax",
        "train_step",
        """
        # built under one jit (eager, each operation is a compile of its own); the
        # optimizer over another model, as `make` builds it
        model, optimizer = nnx.jit(
            lambda: (mod.CNN(nnx.Rngs(0)), mod._optimizer(mod.CNN(nnx.Rngs(0))))
        )()
        metrics = nnx.MultiMetric(accuracy=nnx.metrics.Accuracy(),
                                  loss=nnx.metrics.Average("loss"))
        batch = {"image": jnp.ones((8, 16)), "label": jnp.zeros((8,), jnp.int32)}
        for _ in range(2):
            mod.train_step(model, optimizer, metrics, batch)
        """,
    ),
    "eqx_parallel": (
        "equinox",
        "train_step",
        """
        model = eqx.filter_jit(lambda: eqx.nn.MLP(4, 2, 16, 2, key=jax.random.PRNGKey(0)))()
        opt_state = eqx.filter_jit(lambda m: mod.optim.init(eqx.filter(m, eqx.is_array)))(model)
        x, y = jnp.ones((32, 4)), jnp.zeros((32, 2))
        for _ in range(2):
            model, opt_state = mod.train_step(model, opt_state, x, y)
        """,
    ),
}


@pytest.mark.parametrize("sample", sorted(LIBRARY_RUNS))
def test_library_wrappers_are_recorded_with_the_names_they_carry(
    sample: str, tmp_path: Path
) -> None:
    """A real run through ``nnx.jit`` / ``eqx.filter_jit`` records the names the library's
    lowering carries: the same as `lower` reports as the program's (checked there against
    the library's own `.lower`)."""
    library, function, body = LIBRARY_RUNS[sample]
    pytest.importorskip(library, reason=f"{library} is not installed (pip install -e '.[test]')")
    script = tmp_path / "run.py"
    script.write_text(
        "import importlib.util, sys\n"
        "import jax, jax.numpy as jnp\n"
        + ("from flax import nnx\n" if library == "flax" else "import equinox as eqx\n")
        + f"spec = importlib.util.spec_from_file_location('m', {str(REPO / 'sample_programs' / 'libraries' / (sample + '.py'))!r})\n"  # noqa: E501
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        + textwrap.dedent(body),
        encoding="utf-8",
    )
    result = record(
        tmp_path / "runs", "--only", function, "--", *WARM_PYTHON, script.name, cwd=tmp_path
    )
    assert result.returncode == 0, result.describe()
    (entry,) = index_of(tmp_path / "runs")["functions"]
    assert entry["name"] == function and entry["lowerings"] == 1  # the second call is cached
    recorded = report_of(tmp_path / "runs" / entry["folder"])
    lowered = run_cli("lower", f"sample_programs/libraries/{sample}.py:{function}",
                      "--args-from", "make", "--format", "json")  # fmt: skip
    assert lowered.returncode == 0, lowered.describe()
    expected = json.loads(lowered.stdout)
    carried = [leaf["name"] for leaf in expected["inputs"] if leaf["status"] != "pruned"]
    assert [leaf["name"] for leaf in recorded["inputs"] if leaf["status"] != "pruned"] == carried
    assert [leaf["shape"] for leaf in recorded["inputs"]] == [
        leaf["shape"] for leaf in expected["inputs"]
    ]


def test_a_recorded_call_replays_without_the_run(recorded_copy: Path) -> None:
    project = recorded_copy
    runs = project / "runs"
    call = json.loads((runs / "step" / "call.json").read_text(encoding="utf-8"))
    assert call["options"]["args"] == ("{'w': f32[16,8@model], 'b': f32[8@model]}, f32[32@data,16]")
    assert call["options"]["donate_argnums"] == [0] and call["options"]["devices"] == 8
    (project / "steps.py").write_text(STEPS.split("JXINSPECT")[0], encoding="utf-8")  # no inputs
    replayed = run_cli("lower", "steps.py:step", "--args-from-record", runs / "step",
                       "--format", "json", cwd=project)  # fmt: skip
    assert replayed.returncode == 0, replayed.describe()
    again = json.loads(replayed.stdout)
    assert leaf_facts(again, "inputs") == leaf_facts(report_of(runs / "step"), "inputs")
    assert again["mesh"] == "data=4,model=2"
    # a new jit of a lambda each time: replayable; the flags still win over the record
    lam = run_cli("lower", "steps.py:step", "--args-from-record", runs / "step",
                  "--args", "{'w': f32[4,2], 'b': f32[2]}, f32[3,4]", "--format", "json",
                  cwd=project)  # fmt: skip
    assert lam.returncode == 0, lam.describe()
    assert [leaf["shape"] for leaf in json.loads(lam.stdout)["inputs"]] == [[2], [4, 2], [3, 4]]


def test_a_call_that_cannot_be_written_says_why(tmp_path: Path) -> None:
    script = tmp_path / "odd.py"
    script.write_text(textwrap.dedent("""
        import functools
        import jax, jax.numpy as jnp

        class Box:
            pass

        def scaled(x, scale):
            return x * scale

        jax.jit(functools.partial(scaled, scale=2.0))(jnp.ones(3))
        jax.jit(lambda x, box: x, static_argnums=1)(jnp.ones(2), Box())
    """), encoding="utf-8")  # fmt: skip
    runs = tmp_path / "runs"
    assert record(runs, "--", *WARM_PYTHON, script.name, cwd=tmp_path).returncode == 0
    folders = [e["folder"] for e in index_of(runs)["functions"]]
    assert folders == ["scaled", "lambda"]
    partial = run_cli("lower", "odd.py:scaled", "--args-from-record", runs / "scaled",
                      cwd=tmp_path)  # fmt: skip
    assert partial.returncode == 2
    assert "functools.partial that binds values" in error_line(partial)
    box = json.loads((runs / "lambda" / "call.json").read_text(encoding="utf-8"))
    assert box["options"] is None and "argument 1 is a Box" in box["why"]
    shown = json.loads(run_cli("show", runs, "--format", "json", cwd=tmp_path).stdout)
    assert [f["replay"] for f in shown["functions"]] == [False, False]
    assert "functools.partial" in shown["functions"][0]["replay_problem"]
    nowhere = run_cli("lower", "odd.py:scaled", "--args-from-record", runs, cwd=tmp_path)
    assert nowhere.returncode == 2 and "not a recorded function's folder" in error_line(nowhere)


NULLARY = {
    "pmap of a constant": "import jax, jax.numpy as jnp\njax.pmap(lambda _: 1)(jnp.arange(1))",
    "jit with no arguments": (
        "import jax, jax.numpy as jnp\n"
        "from jax.sharding import NamedSharding, PartitionSpec as P\n"
        "mesh = jax.make_mesh((1,), ('x',))\n"
        "jax.jit(lambda: jnp.zeros(1), out_shardings=NamedSharding(mesh, P()))()"
    ),
}


@pytest.mark.parametrize("code", list(NULLARY.values()), ids=list(NULLARY))
def test_a_program_whose_main_reads_no_argument_names_runs_as_without_record(
    tmp_path: Path, code: str
) -> None:
    """Reading ``@main`` never changes the module JAX lowered (it once cloned and erased
    it, and the recorded run died with SIGSEGV): the run exits as it does alone."""
    result = record(tmp_path / "runs", "--", *WARM_PYTHON, "-c", code, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert "1 function recorded" in result.stderr, result.describe()


def test_recording_leaves_what_jax_emits_unchanged(tmp_path: Path) -> None:
    """The program a recorded run lowers carries the same debug locations as without
    ``record``: the hook's own frame is in none of them."""
    script = tmp_path / "emit.py"
    script.write_text(textwrap.dedent("""
        import jax, jax.numpy as jnp
        def f(x):
            return jnp.sin(x) * 2
        module = jax.jit(f).lower(jnp.ones(3)).compiler_ir()
        print(module.operation.get_asm(enable_debug_info=True))
        """), encoding="utf-8")  # fmt: skip
    plain = run_cli(script.name, command=WARM_PYTHON, cwd=tmp_path)
    assert plain.returncode == 0 and "emit.py" in plain.stdout, plain.describe()
    recorded = record(tmp_path / "runs", "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert recorded.returncode == 0, recorded.describe()
    assert "hooks.py" not in recorded.stdout and "hooked" not in recorded.stdout
    # whole lines, both runs' stderr: a difference seen once on a loaded machine was never
    # reproduced (warm or new interpreters, with or without record, under load 9)
    lines = plain.stdout.splitlines(), recorded.stdout.splitlines()
    differs = "\n".join(difflib.unified_diff(*lines, "plain", "recorded", lineterm=""))
    assert not differs, f"{differs}\n{plain.describe()}\n{recorded.describe()}"


def test_functions_lowered_at_once_by_threads_each_get_their_own_record(tmp_path: Path) -> None:
    """Threads that lower at the same time (as JAX's own concurrent-jit tests do) never
    share a folder, nor mix one lowering's report with another's call."""
    script = tmp_path / "threads.py"
    script.write_text(textwrap.dedent("""
        import threading
        import jax, jax.numpy as jnp

        def f(x):
            return jnp.sin(x) * 2

        start = threading.Barrier(8)
        def run(n):
            start.wait()
            jax.jit(f)(jnp.ones(n))

        threads = [threading.Thread(target=run, args=(n,)) for n in range(1, 9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        """), encoding="utf-8")  # fmt: skip
    runs = tmp_path / "runs"
    result = record(runs, "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    entries = index_of(runs)["functions"]
    assert len(entries) == 8 and len({e["folder"] for e in entries}) == 8, entries
    sizes = set()
    for entry in entries:
        (leaf,) = report_of(runs / entry["folder"])["inputs"]
        call = json.loads((runs / entry["folder"] / "call.json").read_text(encoding="utf-8"))
        assert call["options"]["args"] == f"f32[{leaf['shape'][0]}]", (leaf, call)
        sizes.add(leaf["shape"][0])
    assert sizes == set(range(1, 9))


def test_a_numpy_float64_argument_is_replayed_as_the_float32_jax_lowered(tmp_path: Path) -> None:
    script = tmp_path / "np64.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, jax
        @jax.jit
        def f(x):
            return x * 2
        f(np.ones(5))
        """), encoding="utf-8")  # fmt: skip
    runs = tmp_path / "runs"
    result = record(runs, "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    (leaf,) = report_of(runs / "f")["inputs"]
    call = json.loads((runs / "f" / "call.json").read_text(encoding="utf-8"))
    assert (leaf["dtype"], call["options"]["args"]) == ("float32", "f32[5]"), (leaf, call)


def test_what_other_processes_of_the_run_lowered_is_counted(tmp_path: Path) -> None:
    """Only the first process that stages a function is recorded (a pytest-xdist worker,
    a multiprocessing child, ...): what the others lowered is counted in the index."""
    script = tmp_path / "procs.py"
    script.write_text(textwrap.dedent("""
        import subprocess, sys
        import jax
        jax.jit(lambda x: x * 2)(1.0)
        child = "import jax; jax.jit(lambda x: x + 1)(1.0); jax.jit(lambda x: x - 1)(2.0)"
        subprocess.run([sys.executable, "-c", child], check=True)
    """), encoding="utf-8")  # fmt: skip
    runs = tmp_path / "runs"
    result = record(runs, "--", *WARM_PYTHON, script.name, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    index = index_of(runs)
    assert len(index["functions"]) == 1
    assert (index["other_processes"], index["other_lowerings"]) == (1, 2), index
    assert not list(runs.glob(".process-*"))
    shown = run_cli("show", runs, cwd=tmp_path)
    assert "2 lowerings of functions of yours in 1 other processes" in shown.stdout
