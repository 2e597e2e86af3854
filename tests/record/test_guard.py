"""The guard: every process of a ``jax.distributed`` run compiles the same program, checked
at each compile through JAX's coordination service, before the program runs.

Real runs of 2 processes on 127.0.0.1 (2 simulated CPU devices each, CPU collectives over
gloo, a global array over the 4 devices), each process started as a user's launcher
would (a shell loop, or Python itself for ``jxinspect.guard.install()``), every run
bounded in time. Unguarded, each planted skew hangs both processes in the first
collective; guarded, both end within seconds of the first compile, non-zero, each naming
the function and the difference. Without a skew the run prints what it prints unguarded.
"""

from __future__ import annotations

import json
import re
import shlex
import socket
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, run_cli, run_python, warm_jxinspect

PROGRAM = """
import functools, os, sys

me_env = int(os.environ["JAX_PROCESS_ID"])
skew = os.environ.get("SKEW", "") if me_env == 1 else ""
if skew == "flag":
    os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count=2 "
                               "--xla_cpu_enable_fast_math=true")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
                           process_id=me_env, initialization_timeout=60)
if os.environ.get("INSTALL"):
    import jxinspect.guard
    jxinspect.guard.install(wait_s=8)
if skew == "config":
    jax.config.update("jax_default_matmul_precision", "highest")
me = jax.process_index()
mesh = jax.make_mesh((jax.device_count(),), ("data",))
rows = 6 if skew == "batch" else 4
local = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
spec = P("data", None) if skew == "respelled" else P("data")  # one layout, spelled otherwise
x = jax.make_array_from_process_local_data(NamedSharding(mesh, spec), local, (rows * 2, 4))


@functools.partial(jax.jit, static_argnames="scale")
def total(x, scale=2.0):
    y = jnp.tanh(x) * scale
    if skew == "branch":
        y = y + 1.0  # process 1 only
    return y.sum()


@jax.jit
def mean(x):
    return x.mean()


if skew == "exit":
    sys.exit(0)  # process 1 leaves before the program the others compile
if skew != "skip":  # process 1 skips a call the others make
    print(me, "total", float(total(x, scale=3.0 if skew == "static" else 2.0)), flush=True)
print(me, "mean", float(mean(x)), flush=True)
"""

SKEWS = {
    "batch": "argument x: f32[8,4] vs f32[12,4]",
    "branch": "operation `",
    "static": "static argument scale: 2.0 vs 3.0",
    "flag": "XLA flags: ",
    "config": "jax_default_matmul_precision: None vs 'highest'",
    "skip": "different functions: `total at ",
    "exit": "process 1 did not lower `total at ",
}
"""Each planted skew on process 1, and what both processes' message says of it."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch(folder: Path, skew: str, *, guard: str) -> Any:
    """Two processes, each started by a shell loop as a user's launcher would: under
    ``jxinspect record --guard`` (``guard="record"``), or plain Python that installs the
    guard itself (``guard="install"``); each process's streams in ``out-K``/``err-K``."""
    (folder / "program.py").write_text(textwrap.dedent(PROGRAM), encoding="utf-8")
    python = shlex.join(WARM_PYTHON)
    if guard == "record":
        run = shlex.join([*warm_jxinspect(), "record", "--guard", "--guard-wait", "8", "-o",
                          "runs", "--", *WARM_PYTHON, "program.py"])  # fmt: skip
    else:
        run = f"{python} program.py"
    script = (f"for i in 0 1; do JAX_PROCESS_ID=$i {run} >out-$i 2>err-$i & "
              'started="$started $!"; done; code=0; for p in $started; do wait $p || code=$?; '
              "done; exit $code")  # fmt: skip
    env = {"JAX_COORDINATOR_ADDRESS": f"127.0.0.1:{_free_port()}", "JAX_NUM_PROCESSES": "2",
           "SKEW": skew, "INSTALL": "1" if guard == "install" else ""}  # fmt: skip
    return run_cli("-c", script, command=("bash",), cwd=folder, env=env, timeout=120)


def streams(folder: Path, name: str) -> list[str]:
    """Each process's stream, less gloo's own lines (its threads print in any order)."""
    return [
        "".join(line for line in (folder / f"{name}-{k}").read_text(encoding="utf-8")
                .splitlines(keepends=True) if not line.startswith("[Gloo]"))
        for k in (0, 1)
    ]  # fmt: skip


def printed(folder: Path) -> list[list[str]]:
    """What each process's program printed (``0 total 12.0``), found wherever gloo's
    threads wrote their own words between and even inside its lines."""
    said = re.compile(r"\d+ (?:total|mean) -?[\d.]+(?:e[-+]?\d+)?")
    return [said.findall((folder / f"out-{k}").read_text(encoding="utf-8")) for k in (0, 1)]


@pytest.mark.parametrize("skew", SKEWS)
def test_each_skew_stops_every_process_before_the_program_runs(skew: str, tmp_path: Path) -> None:
    started = time.monotonic()
    result = launch(tmp_path, skew, guard="record")
    took = time.monotonic() - started
    assert result.returncode != 0, result.describe()
    assert took < 60, f"took {took:.0f} s"
    errors = streams(tmp_path, "err")
    for process, error in enumerate(errors):
        if skew == "exit" and process == 1:
            continue  # the process that left early has nothing to say
        said = [line for line in error.splitlines() if "jxinspect guard:" in line]
        assert said, f"process {process} said nothing of it:\n{error}"
        assert "`total at " in said[0] or "`mean at " in said[0]
        assert SKEWS[skew] in said[0], said[0]
        assert "Stopped before it compiled" in said[0]
    outputs = streams(tmp_path, "out")
    assert not any(" total " in out for out in outputs)  # the program never ran
    shown = run_cli("show", "runs", "--format", "json", cwd=tmp_path)
    assert shown.returncode in (0, 1), shown.describe()
    runs = json.loads(shown.stdout)["runs"]
    stopped = [run["guard"]["stopped"] for run in runs if run["guard"]["stopped"]]
    assert stopped and SKEWS[skew] in stopped[0]
    text = run_cli("show", "runs", cwd=tmp_path)
    assert "guard: stopped the run: " in text.stdout
    page = run_cli("show", "runs", "--format", "html", cwd=tmp_path).stdout
    assert "<li>guard: stopped the run: " in page


def test_without_a_skew_the_guarded_run_is_the_plain_run(tmp_path: Path) -> None:
    plain_folder, guarded_folder = tmp_path / "plain", tmp_path / "guarded"
    plain_folder.mkdir()
    guarded_folder.mkdir()
    plain = launch(plain_folder, "", guard="none")
    guarded = launch(guarded_folder, "", guard="record")
    assert plain.returncode == 0 and guarded.returncode == 0, guarded.describe()
    assert printed(plain_folder) == printed(guarded_folder)
    assert all(len(out) == 2 for out in printed(guarded_folder)), printed(guarded_folder)
    text = run_cli("show", "runs", cwd=guarded_folder)
    assert "guard: 2 programs across processes checked the same on all 2 processes" in text.stdout
    page = run_cli("show", "runs", "--format", "html", cwd=guarded_folder).stdout
    said = "<li>guard: 2 programs across processes checked the same on all 2 processes</li>"
    assert f'<ul id="guard">{said}</ul>' in page, page


def test_a_sharding_spelled_otherwise_on_one_process_is_the_same_program(tmp_path: Path) -> None:
    """Process 1 places ``x`` as ``P('data', None)``, the layout of the others'
    ``P('data')``: the processes compile one program, and the guard lets it run."""
    result = launch(tmp_path, "respelled", guard="record")
    assert result.returncode == 0, (result.describe(), streams(tmp_path, "err"))
    assert all("total" in out for out in streams(tmp_path, "out"))
    text = run_cli("show", "runs", cwd=tmp_path)
    assert "guard: 2 programs across processes checked the same on all 2 processes" in text.stdout


def test_installed_by_the_program_itself(tmp_path: Path) -> None:
    result = launch(tmp_path, "batch", guard="install")
    assert result.returncode != 0, result.describe()
    for error in streams(tmp_path, "err"):
        assert "jxinspect.record.guard.ProgramsDiffer: jxinspect guard: " in error
        assert SKEWS["batch"] in error


FINGERPRINT_PATH = """
import functools, json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jxinspect.record import guard
from jxinspect.tracer import seam

said = {}


def on_lowering(lowering):
    if lowering.lowered is None or said:
        return
    before = set(sys.modules)
    described = guard.described(lowering)
    said["loaded"] = sorted(m for m in set(sys.modules) - before if m.startswith("jxinspect"))
    from jxinspect.record import fingerprint, recompiles  # record's, as its recorder reads it
    from jxinspect.core.dtypes import short_name

    printed = fingerprint.fingerprint(lowering, fingerprint.static_values(lowering.call), "")
    said["guard"] = [described.inputs, described.statics, described.config]
    said["record"] = [
        {path: [f"{short_name(leaf.dtype)}[{','.join(map(str, leaf.shape))}]",
                printed.layouts[path]] for path, leaf in printed.leaves.items()},
        printed.statics, {**printed.context, "XLA flags": described.config["XLA flags"]}]
    said["reasons"] = [r.kind for r in recompiles.reasons(printed, printed)]


seam.install_lowering_hook(on_lowering, lambda name, err: print(name, repr(err)))
mesh = jax.make_mesh((2,), ("data",))
x = jax.device_put(jnp.ones((4, 3)), NamedSharding(mesh, P("data", None)))


@functools.partial(jax.jit, static_argnames="scale")
def step(params, x, scale=2.0):
    return (params["w"] * x * scale).sum()


step({"w": jnp.ones(3)}, x, scale=3.0)
print(json.dumps(said))
"""


def test_the_fingerprint_path_loads_only_the_fingerprint(tmp_path: Path) -> None:
    """At the first program across processes the guard reads what the program is with
    record's own fingerprint, loading only it (and the spec's text): neither the report
    model nor the staging machinery (a new Python, so nothing is loaded before)."""
    result = run_python(FINGERPRINT_PATH, cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    said = json.loads(result.stdout.splitlines()[-1])
    assert said["loaded"] == ["jxinspect.core.specs", "jxinspect.record.fingerprint"]
    guarded, recorded = said["guard"], said["record"]
    assert guarded == recorded
    assert guarded[0] == {
        "params['w']": ["f32[3]", "UnspecifiedValue"],
        "x": ["f32[4,3]", "P('data')"],
    }
    assert guarded[1] == {"scale": "3.0"}
    assert said["reasons"] == []


def test_diff_debug_of_two_guarded_runs_says_what_each_guard_found(tmp_path: Path) -> None:
    """Two guarded runs, one stopped: diff-debug of their process-0 folders says, in every
    format, what each run's guard checked and what it stopped the run on, in the words
    show says it."""
    clean, stopped = tmp_path / "clean", tmp_path / "stopped"
    clean.mkdir()
    stopped.mkdir()
    assert launch(clean, "", guard="record").returncode == 0
    assert launch(stopped, "batch", guard="record").returncode != 0
    sides = (clean / "runs" / "process-0", stopped / "runs" / "process-0")
    checked = "programs across processes checked the same on all 2 processes"
    counted = "(as process 0 counted them)"

    text = run_cli("diff-debug", *sides, cwd=tmp_path)
    assert text.returncode in (0, 1), text.describe()
    lines = text.stdout.splitlines()
    assert lines[2:4] == [f"guard before: 2 {checked} {counted}",
                          f"guard after: 0 {checked} {counted}"], text.stdout  # fmt: skip
    assert lines[4].startswith("guard after: stopped the run: the processes would "), text.stdout
    assert SKEWS["batch"] in lines[4]
    shown = run_cli("show", stopped / "runs", cwd=tmp_path).stdout  # show's words, the same
    assert lines[4].replace("guard after: ", "guard: ") in shown.splitlines(), shown

    data = json.loads(run_cli("diff-debug", *sides, "--format", "json", cwd=tmp_path).stdout)
    guard = {"wait_s": 8.0, "checked": 2, "stopped": None}
    assert data["guard_before"] == {"process": 0, "processes": 2, "guard": guard}
    after = data["guard_after"]
    assert (after["process"], after["processes"], after["guard"]["checked"]) == (0, 2, 0)
    assert SKEWS["batch"] in after["guard"]["stopped"]

    markdown = run_cli("diff-debug", *sides, "--format", "markdown", cwd=tmp_path).stdout
    assert f"- guard before: 2 {checked} {counted}" in markdown.splitlines(), markdown
    assert "- guard after: stopped the run: the processes would " in markdown

    coloured = run_cli("diff-debug", *sides, "--color", "always", cwd=tmp_path).stdout
    assert f"guard before: 2 {checked} {counted}" in coloured, coloured

    code = "import jax; jax.jit(lambda x: x * 2)(1.0)"
    plain = run_cli("record", "-o", "plain", "--", *WARM_PYTHON, "-c", code, cwd=tmp_path)
    assert plain.returncode == 0, plain.describe()
    beside = run_cli("diff-debug", "plain", sides[0], cwd=tmp_path).stdout.splitlines()
    assert beside[2:4] == ["guard before: the run was not guarded",
                           f"guard after: 2 {checked} {counted}"], beside  # fmt: skip
    alone = run_cli("diff-debug", "plain", "plain", cwd=tmp_path).stdout
    assert "guard" not in alone, alone


ONE_PROCESS = """\
import jax, jax.numpy as jnp

@jax.jit
def total(x):
    return jnp.sum(x * 2)

print("total", float(total(jnp.ones(8))))
"""


def test_a_guarded_run_of_one_process_is_the_plain_run_and_the_guard_says_nothing(
    tmp_path: Path,
) -> None:
    """No ``jax.distributed`` (one process, as on one chip): nothing to compare, so the
    guard publishes and waits for nothing, and the run is the plain one."""
    (tmp_path / "one.py").write_text(ONE_PROCESS, encoding="utf-8")
    plain = run_cli("one.py", cwd=tmp_path, command=(sys.executable,))
    guarded = run_cli("record", "--guard", "-o", "runs", "--", sys.executable, "one.py",
                      cwd=tmp_path)  # fmt: skip
    assert plain.returncode == guarded.returncode == 0, guarded.stderr
    assert guarded.stdout == plain.stdout == "total 16.0\n"
    shown = run_cli("show", "runs", cwd=tmp_path)
    assert shown.returncode == 0 and "total" in shown.stdout
    assert "guard" not in shown.stdout, shown.stdout
