"""``lint --keep-workers``, end to end: a worker kept from one run serves the next as a
fresh worker would (the user's modules imported again, JAX's configuration as it was, the
user's prints on that run's stderr), and stops when idle or when its folder is removed.

Each test stops the workers it kept (the ``project`` fixture kills every process
registered under its cache folder).
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import ended_within, error_line, eventually, run_cli, running

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="kept workers need Linux (abstract sockets, pidfds)"
)

MODULE = """\
import os
import sys
import threading

print("imported m from", os.getpid(), file=sys.stderr)
print("note", os.environ.get("JXT_NOTE"), os.getcwd(), file=sys.stderr)

JXINSPECT = {"f": {"args": "f32[4]"}}


def f(x):
    return x * 2
"""


def workers_of(project: Path) -> list[int]:
    """The pids of the kept workers registered under the project's cache folder (regular
    files named by a pid: never what a test put there, such as a FIFO ``1.json``)."""
    found = project.glob(".jxinspect_cache/workers/*/*.json")
    return [int(p.stem) for p in found if p.stem.isdigit() and int(p.stem) > 1 and p.is_file()]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "m.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text("paths: [.]\n", encoding="utf-8")
    # a project module that shadows the standard library's for whoever puts the project
    # first on the import path: a kept worker starts with the run's own path
    (tmp_path / "json.py").write_text("raise ImportError('the project json')\n", encoding="utf-8")
    yield tmp_path
    for pid in workers_of(tmp_path):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def lint(project: Path, *extra: str, note: str = "") -> tuple[int, dict[str, object], str]:
    result = run_cli("lint", "--keep-workers", "--jobs", "1", "--format", "json", *extra,
                     cwd=project, env={"JXT_NOTE": note})  # fmt: skip
    return result.returncode, json.loads(result.stdout or "null"), result.stderr


def importers(stderr: str) -> list[int]:
    return [int(pid) for pid in re.findall(r"^imported m from (\d+)$", stderr, re.M)]


def test_a_kept_worker_serves_the_next_run_as_a_fresh_one_would(project: Path) -> None:
    code, first, stderr = lint(project, "--no-cache")
    assert code == 0, stderr
    (pid,) = importers(stderr)
    assert workers_of(project) == [pid]  # it stayed, and waits for the next run
    # the next run: the same process, which imports the user's module again (its print
    # reaches this run's stderr, and it reads this run's environment) and reports the same
    code, second, stderr = lint(project, "--no-cache", note="second")
    assert (code, importers(stderr), second) == (0, [pid], first)
    assert f"note second {project.resolve()}" in stderr
    # an edit is seen: the module is not the one the worker imported before
    edit = MODULE.replace("def f(x):", "def f(x, unused):").replace('"f32[4]"', '"f32[4], f32[4]"')
    (project / "m.py").write_text(edit, encoding="utf-8")
    code, edited, stderr = lint(project, "--no-cache")
    assert importers(stderr) == [pid]
    codes = [f["code"] for t in edited["targets"] for f in t["findings"]]  # type: ignore[index]
    assert "JX105" in codes, edited  # the argument the edit added is unused


def test_jax_configuration_set_by_one_module_does_not_reach_the_next(project: Path) -> None:
    # a.py turns on 64-bit types at import; m.py, staged after it by the same worker (and
    # in the next run), must see JAX as a fresh process does
    (project / "a.py").write_text(
        "import sys\n\nimport jax\n\njax.config.update('jax_enable_x64', True)\n"
        "print('imported a', file=sys.stderr)\n"
        "JXINSPECT = {'g': {'args': 'f32[2]'}}\n\n\ndef g(x):\n    return x\n",
        encoding="utf-8",
    )
    (project / "m.py").write_text(
        MODULE.replace(
            'print("imported m from", os.getpid(), file=sys.stderr)',
            'import jax\nprint("imported m from", os.getpid(), file=sys.stderr)\n'
            'print("x64", jax.config.jax_enable_x64, file=sys.stderr)',
        ),
        encoding="utf-8",
    )
    code, _, stderr = lint(project, "--no-cache")
    assert code == 0, stderr
    # one worker staged a.py's target, then m.py's
    assert 0 <= stderr.find("imported a") < stderr.find("x64 False"), stderr
    assert "x64 True" not in stderr
    (project / "a.py").unlink()
    code, _, stderr = lint(project, "--no-cache")
    assert (code, "x64 False" in stderr, "x64 True" in stderr) == (0, True, False), stderr


def test_a_kept_worker_that_died_is_replaced(project: Path) -> None:
    code, first, _ = lint(project, "--no-cache")
    (pid,) = workers_of(project)
    os.kill(pid, signal.SIGKILL)
    code, again, stderr = lint(project, "--no-cache")
    assert (code, again) == (0, first), stderr
    (new,) = importers(stderr)
    assert new != pid and workers_of(project) == [new]


def test_kept_workers_exit_when_idle_or_when_their_folder_is_removed(project: Path) -> None:
    (project / "jxinspect.yaml").write_text("paths: [.]\nkeep_workers: 1\n", encoding="utf-8")
    code, _, stderr = lint(project, "--no-cache")
    assert code == 0, stderr
    (pid,) = workers_of(project)
    assert ended_within(pid, 30) and workers_of(project) == []
    assert list((project / ".jxinspect_cache" / "workers").iterdir()) == []  # nothing left
    # the default idle time is minutes: removing the cache folder stops it sooner
    (project / "jxinspect.yaml").write_text("paths: [.]\n", encoding="utf-8")
    lint(project, "--no-cache")
    (pid,) = workers_of(project)
    for path in sorted(project.glob(".jxinspect_cache/**/*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    assert ended_within(pid, 30)


def test_without_keep_workers_no_worker_outlives_the_run(project: Path) -> None:
    result = run_cli("lint", "--no-cache", "--format", "json", cwd=project)
    assert result.returncode == 0, result.stderr
    (pid,) = importers(result.stderr)
    assert not running(pid) and workers_of(project) == []


@pytest.mark.parametrize("value", ["'yes'", "0", "-5", "[1]"])
def test_a_bad_keep_workers_value_is_a_usage_error(project: Path, value: str) -> None:
    (project / "jxinspect.yaml").write_text(f"paths: [.]\nkeep_workers: {value}\n",
                                            encoding="utf-8")  # fmt: skip
    result = run_cli("lint", cwd=project)
    assert result.returncode == 2
    assert "keep_workers" in error_line(result) and "idle seconds" in error_line(result)


def test_a_run_with_every_target_cached_leaves_its_kept_worker_warmed(project: Path) -> None:
    (project / "m.py").write_text(MODULE.replace('"f32[4]"}', '"f32[4]", "devices": 2}'),
                                  encoding="utf-8")  # fmt: skip
    assert run_cli("lint", cwd=project).returncode == 0  # fills the cache
    code, _, stderr = lint(project)  # nothing to stage: the worker it starts is not used
    assert (code, importers(stderr)) == (0, []), stderr
    # it goes on after the run: JAX's import, the warm-up
    eventually(lambda: bool(workers_of(project)), 60, interval=0.2)
    (entry,) = project.glob(".jxinspect_cache/workers/*/*.json")
    # its backend started for the run's devices, so the next run's first target does not
    # wait for it
    assert json.loads(entry.read_text(encoding="utf-8"))["devices"] == 2
    assert json.loads(entry.read_text(encoding="utf-8"))["simulated"] is True


def test_a_run_never_uses_a_kept_worker_that_simulates_other_devices(project: Path) -> None:
    counting = MODULE.replace(
        'print("imported m from", os.getpid(), file=sys.stderr)',
        'import jax\nprint("imported m from", os.getpid(), file=sys.stderr)\n'
        'print("devices", len(jax.devices()), file=sys.stderr)',
    )
    two = counting.replace('"f32[4]"}', '"f32[4]", "devices": 2}')
    (project / "m.py").write_text(two, encoding="utf-8")
    code, _, stderr = lint(project, "--no-cache")
    assert (code, "devices 2" in stderr) == (0, True), stderr
    (pid,) = importers(stderr)
    # the next run needs one device: the kept two-device worker is not the one that
    # stages it (it stays for runs that need two)
    (project / "m.py").write_text(counting, encoding="utf-8")
    code, _, stderr = lint(project, "--no-cache")
    assert (code, "devices 1" in stderr, "devices 2" in stderr) == (0, True, False), stderr
    assert pid not in importers(stderr) and pid in workers_of(project)


def test_a_target_that_kills_its_kept_worker_fails_alone(project: Path) -> None:
    code, first, _ = lint(project, "--no-cache")
    (pid,) = workers_of(project)
    (project / "z.py").write_text(
        "import os\n\nJXINSPECT = {'boom': {'args': 'f32[2]'}}\n\n\n"
        "def boom(x):\n    os._exit(7)\n",
        encoding="utf-8",
    )
    code, result, stderr = lint(project, "--no-cache")
    assert code == 3, stderr  # a target that did not report: never exit 0
    failed = {t["target"]: t for t in result["targets"]}  # type: ignore[index]
    assert "ended abruptly" in failed["z.py:boom"]["error"], failed
    assert not failed["m.py:f"].get("error"), failed
    assert ended_within(pid, 5)  # the worker that staged it is gone; the next run starts another
    (project / "z.py").unlink()
    code, again, stderr = lint(project, "--no-cache")
    assert (code, again) == (0, first), stderr
    assert workers_of(project) and pid not in workers_of(project)


def test_registry_entries_that_are_not_files_are_never_waited_on(project: Path) -> None:
    """A FIFO lock, or a FIFO entry beside a worker's lock, is passed over and left; the
    kept worker registered after them serves the run."""
    code, _, stderr = lint(project, "--no-cache")
    (pid,) = importers(stderr)
    (folder,) = project.glob(".jxinspect_cache/workers/*")
    os.mkfifo(folder / "0.lock")  # both sorted before the worker's own files
    (folder / "1.lock").write_bytes(b"")
    os.mkfifo(folder / "1.json")
    result = run_cli("lint", "--keep-workers", "--jobs", "1", "--no-cache", cwd=project,
                     timeout=60)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert importers(result.stderr) == [pid]
    assert all(stat.S_ISFIFO(os.lstat(folder / name).st_mode) for name in ("0.lock", "1.json"))


def test_a_workers_folder_that_is_a_link_is_never_written_through(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (project / ".jxinspect_cache").mkdir()
    (project / ".jxinspect_cache" / "workers").symlink_to(elsewhere)
    code, _, stderr = lint(project, "--no-cache")
    assert code == 0, stderr  # staged by a worker of this run alone
    assert list(elsewhere.iterdir()) == []


def a_dead_pid() -> int:
    """A pid no process has now."""
    pid = 4_000_000
    while running(pid) or os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


def victim_folder(folder: Path, pid: int) -> dict[str, bytes]:
    """A folder of someone's files, among them a lock and a record shaped like a kept
    worker's (of a worker that exited); what each holds."""
    files = {
        "poetry.lock": b"# poetry\n",
        "uv.lock": b"version = 1\n",
        "uv.json": b"{}",
        f"{pid}.lock": b"",
        f"{pid}.json": json.dumps({"pid": pid, "address": "\0gone"}).encode(),
    }
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return files


def environment_folder(project: Path) -> Path:
    """The environment's folder of a first run's kept worker, the worker stopped."""
    code, _, stderr = lint(project, "--no-cache")
    assert code == 0, stderr
    (pid,) = workers_of(project)
    os.kill(pid, signal.SIGKILL)
    assert ended_within(pid, 30)
    (folder,) = project.glob(".jxinspect_cache/workers/*")
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    return folder


def test_nothing_is_removed_through_an_environment_folder_that_is_a_link(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``.jxinspect_cache/workers/ENV`` a link to someone's folder: the run stages with
    a worker of its own and reads, writes and removes nothing there."""
    folder = environment_folder(project)
    victim = tmp_path_factory.mktemp("victim")
    files = victim_folder(victim, a_dead_pid())
    folder.symlink_to(victim)
    try:
        for _ in range(2):
            code, result, stderr = lint(project, "--no-cache")
            assert code == 0 and result["targets"], stderr  # type: ignore[index]
            assert {p.name: p.read_bytes() for p in victim.iterdir()} == files
    finally:
        folder.unlink()  # before the fixture looks for workers to stop


def test_a_lock_that_is_a_link_or_a_hard_link_removes_no_one_elses_file(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """In the real folder: a link named as a worker's lock is never opened; a hard link
    with a record of an exited worker beside it loses only that name (the folder's own),
    never the file it shares; a record that names another pid, or none, is left."""
    folder = environment_folder(project)
    folder.mkdir()
    victim = tmp_path_factory.mktemp("victim")
    files = victim_folder(victim, a_dead_pid())
    dead = a_dead_pid()
    (folder / f"{dead}.lock").symlink_to(victim / "poetry.lock")
    (folder / f"{dead}.json").write_text(json.dumps({"pid": dead, "address": "\0gone"}))
    os.link(victim / "uv.lock", folder / f"{dead + 1}.lock")
    (folder / f"{dead + 1}.json").write_text(json.dumps({"pid": dead + 1, "address": "\0x"}))
    (folder / f"{dead + 2}.lock").write_bytes(b"")
    (folder / f"{dead + 2}.json").write_text(json.dumps({"pid": 1, "address": "\0x"}))
    (folder / "notes.lock").write_bytes(b"mine")
    code, _, stderr = lint(project, "--no-cache")
    assert code == 0, stderr
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == files
    (worker,) = importers(stderr)
    left = {p.name for p in folder.iterdir()} - {f"{worker}.json", f"{worker}.lock"}
    assert left == {f"{dead}.lock", f"{dead}.json", f"{dead + 2}.lock", f"{dead + 2}.json",
                    "notes.lock"}  # fmt: skip
    for name in left:  # before the fixture looks for workers to stop
        (folder / name).unlink()


def test_an_environment_folder_swapped_with_a_link_while_runs_look_removes_nothing(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A thread swaps ``ENV`` between a real folder and a link to someone's folder while
    runs look for workers there (``adopt``, in this process): nothing of theirs goes."""
    from jxinspect.lint.workers import kept

    root = tmp_path / "project"
    folder = root / ".jxinspect_cache" / "workers" / "ENV"
    folder.mkdir(parents=True)
    victim = tmp_path_factory.mktemp("victim")
    files = victim_folder(victim, a_dead_pid())
    real, spare = folder.with_name("real"), folder.with_name("spare")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            folder.rename(real)
            spare.symlink_to(victim)
            spare.rename(folder)  # now a link to their folder
            time.sleep(0.0002)
            folder.unlink()
            real.rename(folder)  # and the real one again
            time.sleep(0.0002)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        for _ in range(2000):
            assert kept.adopt(folder, root) is None
    finally:
        stop.set()
        thread.join(10)
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == files
