"""SIGINT and SIGTERM end a run, its workers and its children, and leave no temporary
folder: ``lower`` (and ``lower --why``'s debug run), ``lint`` with workers, ``record``
and its command. Ctrl-C exits 130 and SIGTERM 143, with one line on stderr and no report,
even where the interrupt was swallowed on its way up (raised inside a garbage-collection
callback, which Python prints as "Exception ignored" and drops).

Each test runs the installed command as a real process (the signal needs its pid), in a
session of its own so that a failing test kills it whole; the user's module writes a
marker named by its pid when its import starts, so the signal lands mid-work, and every
process that imported it is checked to be gone afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import cli_env, eventually, jxinspect_command, needs_shardy_default

START_S = 90.0
"""How long a run has to reach the user's module (a fresh Python importing JAX, on a
loaded machine)."""
STOP_S = 20.0
"""How long the run and its processes have to end after the signal."""

SLOW_IMPORT = """\
import os, pathlib, time
JXINSPECT = {"f": {"args": "f32[4]"}}
markers = pathlib.Path(os.environ["MARKERS"])
(markers / str(os.getpid())).write_text("importing")
if len(list(markers.iterdir())) >= int(os.environ["SLOW_FROM"]):  # the last ones awaited
    for _ in range(1200):
        time.sleep(0.05)

def f(x):
    return x * 2
"""

SWALLOWED = """\
import gc, os, pathlib, time

def _slow_collection(phase, info):  # the Ctrl-C lands here: Python drops what it raises
    marker = pathlib.Path(os.environ["MARKERS"], str(os.getpid()))
    if phase == "start" and not marker.exists():
        marker.write_text("collecting")
        time.sleep(5)

gc.callbacks.append(_slow_collection)
gc.collect()
gc.callbacks.remove(_slow_collection)

def f(x):
    return x * 2
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # a zombie has ended


def _stopped_run(
    folder: Path, argv: list[str], markers: int, how: signal.Signals, *, group: bool = False
) -> tuple[subprocess.CompletedProcess[str], list[int]]:
    """Run ``jxinspect ARGV`` in ``folder`` until ``markers`` processes import the user's
    module (the last of them, the ones awaited, slowly: those before go on to start
    them), send ``how`` (to the whole group where ``group``: a terminal's Ctrl-C), and
    wait for the run to end; it, and the pids that imported the module."""
    marked, tmp = folder / "markers", folder / "tmp"
    marked.mkdir()
    tmp.mkdir()
    env = {**cli_env(), "MARKERS": str(marked), "TMPDIR": str(tmp), "SLOW_FROM": str(markers)}
    process = subprocess.Popen(
        [*jxinspect_command(), *argv], cwd=folder, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_S
        while len(list(marked.iterdir())) < markers and process.poll() is None:
            assert time.monotonic() < deadline, "the run never reached the user's module"
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)  # well inside the import
        (os.killpg if group else os.kill)(process.pid, how)
        stdout, stderr = process.communicate(timeout=STOP_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    pids = [int(p.name) for p in marked.iterdir()]
    # a child ends once it sees its parent gone
    eventually(lambda: not any(_alive(p) for p in pids) and not any(tmp.iterdir()), STOP_S)
    assert not [p for p in pids if _alive(p)], f"left running: {pids}"
    assert not list(tmp.iterdir()), "a temporary folder was left behind"
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr), pids


def _module(tmp_path: Path, text: str = SLOW_IMPORT, *names: str) -> Path:
    for name in names or ("slow",):
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    return tmp_path


def _one_line(run: subprocess.CompletedProcess[str], said: str) -> None:
    assert run.stderr.splitlines() == [said], run.stderr


def test_ctrl_c_swallowed_in_a_gc_callback_still_stops_lower_without_a_report(
    tmp_path: Path,
) -> None:
    """Was: "Exception ignored in: <function _slow_collection>", the run went on, exit 0
    and a report."""
    folder = _module(tmp_path, SWALLOWED)
    run, _ = _stopped_run(folder, ["lower", "slow:f"], 1, signal.SIGINT)
    assert run.returncode == 130, run.stderr
    assert run.stdout == ""
    _one_line(run, "error: interrupted (signal 2, SIGINT)")


@needs_shardy_default
def test_sigterm_to_lower_why_ends_its_debug_run_and_removes_its_folder(tmp_path: Path) -> None:
    """Was: the run died at once; its child staged on and `jxinspect-why-*` stayed."""
    folder = _module(tmp_path)
    run, pids = _stopped_run(folder, ["lower", "slow:f", "--why"], 2, signal.SIGTERM)
    assert run.returncode == 143, run.stderr
    assert run.stdout == "" and len(pids) == 2
    _one_line(run, "error: stopped (signal 15, SIGTERM)")


@needs_shardy_default
def test_lower_why_killed_outright_still_takes_its_debug_run_and_folder(tmp_path: Path) -> None:
    """The child watches its standard input: a parent that could not clean up (SIGKILL:
    a lint worker the supervisor stopped) still takes it and its folder with it."""
    folder = _module(tmp_path)
    run, _ = _stopped_run(folder, ["lower", "slow:f", "--why"], 2, signal.SIGKILL)
    assert run.returncode == -signal.SIGKILL


@needs_shardy_default
def test_sigterm_to_lint_ends_its_workers_and_their_debug_runs(tmp_path: Path) -> None:
    """Was: both workers alive a minute later, their children and folders too."""
    folder = _module(tmp_path, SLOW_IMPORT, "one", "two")
    (folder / "jxinspect.yaml").write_text("why: true\n", encoding="utf-8")
    argv = ["lint", ".", "--jobs", "2", "--no-cache", "--format", "json"]
    run, pids = _stopped_run(folder, argv, 4, signal.SIGTERM)
    assert run.returncode == 143, run.stderr
    assert len(pids) == 4  # two workers and the debug run each started
    assert run.stderr.splitlines()[-1] == "error: stopped (signal 15, SIGTERM)"
    assert '"interrupted": true' in run.stdout  # what finished: none of the targets


@needs_shardy_default
def test_ctrl_c_at_the_terminal_ends_lint_workers_and_their_debug_runs(tmp_path: Path) -> None:
    """Was: the workers' children inherited an ignored SIGINT and ran on."""
    folder = _module(tmp_path, SLOW_IMPORT, "one", "two")
    (folder / "jxinspect.yaml").write_text("why: true\n", encoding="utf-8")
    argv = ["lint", ".", "--jobs", "2", "--no-cache", "--format", "json"]
    run, _ = _stopped_run(folder, argv, 4, signal.SIGINT, group=True)
    assert run.returncode == 130, run.stderr
    assert run.stderr.splitlines()[-1] == "error: interrupted (signal 2, SIGINT)"


def test_sigterm_to_record_is_passed_on_and_the_command_did_not_finish(tmp_path: Path) -> None:
    """Was: `record` died at once, the command ran to its end, `jxinspect-record-*` stayed."""
    folder = _module(tmp_path)
    argv = ["record", "-o", "runs", "--", sys.executable, "slow.py"]
    run, pids = _stopped_run(folder, argv, 1, signal.SIGTERM)
    assert run.returncode == 143, run.stderr
    lines = run.stderr.splitlines()
    assert lines[-1] == "error: stopped (signal 15, SIGTERM)"
    assert "jxinspect record: the command did not finish (signal 15, SIGTERM)" in run.stderr


def _gone(folder: str) -> None:
    """Wait for the debug run's remover (forked as it exits) to remove ``folder``."""
    removed = eventually(lambda: not os.path.lexists(folder), STOP_S)
    assert removed, "the debug run left its folder behind"


def test_a_debug_run_whose_parent_ends_before_it_may_stage_removes_its_folder() -> None:
    """The parent ends (a signal, a kill) after it started the debug run and named its
    folder, but before it said under what to stage (it was still importing the user's
    module): the child, importing JAX meanwhile, removes the folder as it exits."""
    import functools

    from jxinspect.tracer.partitioner_run import PartitionerRun

    run = PartitionerRun.start(functools.partial(print, "never staged"))
    assert os.path.isdir(run.folder)
    assert run.process.stdin is not None
    run.process.stdin.close()  # what the parent's end does to the pipe
    run.process.wait(timeout=START_S)
    _gone(run.folder)


def test_a_debug_run_whose_parent_ends_after_its_work_removes_its_folder() -> None:
    """The debug run staged and compiled, and its parent ends (a ``lint`` worker killed)
    before it read the folder: the child, waiting for its parent since its work ended,
    removes the folder as it exits (it had exited at once and left it to no one)."""
    import functools

    from jxinspect.tracer.partitioner_run import PartitionerRun

    run = PartitionerRun.start(functools.partial(print, "staged"))
    run.send_conditions()
    assert run._wait_for_work(START_S) == b"0"  # done, and waiting for its parent
    assert run.process.poll() is None and os.path.isdir(run.folder)
    assert run.process.stdin is not None
    run.process.stdin.close()  # what the parent's end does to the pipe
    run.process.wait(timeout=START_S)
    _gone(run.folder)


WRITING_ON = """
import os, sys, threading
from jxinspect.tracer.partitioner_run import _remove_and_exit

folder = sys.argv[1]

def write():  # as XLA's compile does: the folder made again for each file it dumps
    for n in range(10**9):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{n % 50}.txt"), "w") as out:
            out.write("dumped")

sys.setswitchinterval(1e-6)  # the writer runs beside the remover, as XLA's threads do
threading.Thread(target=write, daemon=True).start()
while not os.path.exists(os.path.join(folder, "49.txt")):
    pass
_remove_and_exit(folder)
"""


def test_a_debug_run_ending_while_its_compile_writes_leaves_no_folder(tmp_path: Path) -> None:
    """The parent gone while the debug run's compile still dumps into the folder (another
    thread, making the folder again for each file): the folder is removed once the run
    and all its threads have ended, not before and left to be made again."""
    for round_ in range(5):  # a race: the remover that exits first loses it most rounds
        folder = tmp_path / f"jxinspect-why-{round_}"
        done = subprocess.run([sys.executable, "-c", WRITING_ON, str(folder)], env=cli_env(),
                              timeout=START_S, check=False)  # fmt: skip
        assert done.returncode == 1
        _gone(str(folder))


FORK_REFUSED = """
import os, sys
from jxinspect.tracer.partitioner_run import _remove_and_exit

def refused():
    raise BlockingIOError(11, "Resource temporarily unavailable")  # as fork says it

os.fork = refused
_remove_and_exit(sys.argv[1])
"""


def test_a_debug_run_that_cannot_fork_its_remover_removes_its_folder_itself(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "jxinspect-why-refused"
    (folder / "dumps").mkdir(parents=True)
    (folder / "dumps" / "0.txt").write_text("dumped", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", FORK_REFUSED, str(folder)], env=cli_env(),
                          timeout=START_S, check=False)  # fmt: skip
    assert done.returncode == 1
    assert not os.path.lexists(folder)
