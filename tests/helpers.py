"""Shared helpers for the end-to-end tests: run the installed ``jxinspect`` command,
find the sample entries, validate JSON reports, normalize output for golden files.

Importing this module does not import JAX.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import functools
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess as _subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cli_server
import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_programs"
FIXTURES = REPO / "tests" / "fixtures"
CORPUS = REPO / "src" / "jxinspect" / "survey" / "corpus"
"""The survey's corpus: user code shipped as package data (it imports JAX and calls jit)."""
JAX_RELEASE = importlib.metadata.version("jax")
"""The installed JAX release, ``0.10.2``."""
JAX_SERIES = ".".join(JAX_RELEASE.split(".")[:2])
"""``0.10`` for JAX 0.10.2: each release series emits its own programs."""


def needs_gspmd(test: Any) -> Any:
    """Skip ``test`` where JAX lowers with Shardy whatever it is asked (0.12.1 on:
    ``seam.gspmd_lowers``)."""
    import pytest

    from jxinspect.tracer import seam

    reason = f"JAX {JAX_RELEASE} lowers with Shardy only"
    return pytest.mark.skipif(not seam.gspmd_lowers(), reason=reason)(test)


def ci_releases() -> tuple[str, ...]:
    """The JAX releases CI tests: the legs of ``.ci/releases`` (``WHOLE`` and
    ``SUBSET_RELEASES``), oldest first."""
    from jxinspect.core.vocabulary import release_key

    text = (REPO / ".ci" / "releases").read_text(encoding="utf-8")
    legs = {
        version
        for line in text.splitlines()
        if re.match(r"^(WHOLE|SUBSET_RELEASES)=\(", line)
        for version in re.findall(r'"([0-9][^"]*)"', line)
    }
    return tuple(sorted(legs, key=release_key))


GOLDEN_ROOT = REPO / "tests" / "golden"
GOLDEN_SERIES: tuple[str, ...] = tuple(
    dict.fromkeys(".".join(release.split(".")[:2]) for release in ci_releases())
)
"""The series that have golden files, oldest first: those of CI's legs. Each series'
folder (``jax-0.10``) holds only the files in which it differs from the series before it
(the oldest, ``jax-0.4``, holds them all); a file is read from the newest series up to
this one that has it."""
GOLDEN = GOLDEN_ROOT / f"jax-{JAX_SERIES}"
"""This JAX series' golden folder: where its files are written (read through
:func:`golden_file`)."""
RELEASE_GOLDEN = GOLDEN_ROOT / f"jax-{JAX_RELEASE}"
"""What this release prints where it differs from its series' golden files (0.4.38,
0.10.0 and 0.10.1 grade some nested jaxprs otherwise than 0.4.35 and 0.10.2; 0.7.1's
pmap keeps the names that 0.7.2's drops): one file per difference, read first."""


def _series_folders(series: str) -> list[Path]:
    """The folders a file of ``series`` is read from, in order: its own, then each older
    series'."""
    if series not in GOLDEN_SERIES:
        return []
    older = GOLDEN_SERIES[: GOLDEN_SERIES.index(series) + 1]
    return [GOLDEN_ROOT / f"jax-{s}" for s in reversed(older)]


def _first(folders: list[Path], relative: Path) -> Path | None:
    return next((f / relative for f in folders if (f / relative).is_file()), None)


def golden_file(path: Path) -> Path | None:
    """Where the golden file ``path`` (under :data:`GOLDEN`) is read from for this
    release: its own override, else the newest series up to this one that has it."""
    relative = path.relative_to(GOLDEN)
    return _first([RELEASE_GOLDEN, *_series_folders(JAX_SERIES)], relative)


def inherited_golden(series: str, relative: Path) -> Path | None:
    """The file ``series`` would read for ``relative`` without a copy of its own."""
    return _first(_series_folders(series)[1:], relative)


CLI_TIMEOUT_S = 300
"""Generous: one run takes about a second, but CI machines can be slow and loaded."""

# Variables that would make the command colour its output or change where JAX runs.
_COLOR_VARS = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE",
               "TTY_INTERACTIVE", "COLUMNS", "LINES")  # fmt: skip
_JAX_VARS = ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "JAX_USE_SHARDY_PARTITIONER",
             "JAX_ENABLE_X64", "JAX_TRACEBACK_FILTERING")  # fmt: skip


@dataclass(frozen=True)
class CliResult:
    """What one run of the command gave; unpacks as ``rc, out, err``."""

    returncode: int
    stdout: str
    stderr: str
    argv: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return iter((self.returncode, self.stdout, self.stderr))

    def describe(self) -> str:
        """For assertion messages."""
        return (
            f"$ {' '.join(self.argv)}\n-> exit {self.returncode}\n"
            f"--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"
        )


@functools.cache
def jxinspect_command() -> tuple[str, ...]:
    """The installed console script.

    The script next to the running interpreter comes first (a virtual environment's
    ``bin/`` even when it is not activated), then ``jxinspect`` on PATH, then
    ``python -m jxinspect``.
    """
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        for name in ("jxinspect", "jxinspect.exe"):
            script = folder / name
            if script.is_file() and os.access(script, os.X_OK):
                return (str(script),)
    found = shutil.which("jxinspect")
    if found:
        return (found,)
    return (sys.executable, "-m", "jxinspect")


def cli_env() -> dict[str, str]:
    """The environment for a run: plain output and CPU JAX, whatever the caller's shell has.

    Output is plain because stdout is a pipe, not because of ``NO_COLOR``: the colour
    variables are removed, not set.
    """
    env = {k: v for k, v in os.environ.items() if k not in _COLOR_VARS + _JAX_VARS}
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("PYTHONSTARTUP", None)
    env.pop("JXINSPECT_CACHE_SECRET", None)  # the cache's secret: the user's key file
    return env


WARM_PYTHON = (sys.executable, cli_server.WARM_PYTHON)
"""``python`` for a command that a test runs under ``jxinspect record``: forked from a warm
server that has imported JAX and the libraries (:mod:`warm_python`), about a second
sooner than a new Python; a test of how a new process starts runs ``sys.executable``."""


def warm_jxinspect() -> tuple[str, ...]:
    """``jxinspect`` for a command line that a test's own launcher runs (a shell loop that
    starts one ``jxinspect record`` per process): forked from the warm server without JAX
    through :mod:`warm_python`, as :func:`run_cli` forks the commands it runs itself, about
    half a second sooner than the installed command; that command where runs are not
    forked (``JXINSPECT_TESTS_SUBPROCESS=1``)."""
    base = jxinspect_command()
    if not _warm_runs():
        return base
    return (*WARM_PYTHON, f"--server={_SERVERS['plain'].started().address}", *_as_python(base))


def _as_python(command: tuple[str, ...]) -> tuple[str, ...]:
    """The installed command as the arguments a Python forked from a server runs: the
    script, or ``-m jxinspect`` after ``python``."""
    return (command[0],) if len(command) == 1 else command[1:]


def timings_out(text: str) -> str:
    """``text`` (JAX's log) with its durations (``in 0.12 sec``, ``1.5e-05 s``) as ``… s``:
    two runs' logs compared line for line."""
    return re.sub(r"\d+\.\d+(e-?\d+)? ?(sec|s)\b", "… s", text)


def run_cli(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None,
            command: tuple[str, ...] | None = None,
            timeout: float = CLI_TIMEOUT_S,
            env: dict[str, str] | None = None,
            subprocess: bool = False,
            stdout: Path | None = None) -> CliResult:  # fmt: skip
    """Run ``jxinspect ARGS`` (or ``command ARGS``) in ``cwd`` (default: the repository),
    with ``env`` added to the environment, killed after ``timeout`` seconds; its standard
    output is captured, or is the existing file ``stdout`` (a device, say).

    A run of the installed command is forked from a warm server (:mod:`cli_server`): a
    new process as ``subprocess`` would start, with JAX already imported, about a second
    sooner. ``subprocess=True`` (the end-to-end tests of the installed command), another
    ``command``, a variable read when Python or JAX starts (``PYTHON*``, ``JAX_*``,
    ``TF_*``, ``LD_*``) that differs from the server's, or ``JXINSPECT_TESTS_SUBPROCESS=1``
    in the tests' environment start a real one.
    """
    base = jxinspect_command()
    argv = (*(command or base), *(str(a) for a in args))
    folder = str(cwd or REPO)
    environment = {**cli_env(), **(env or {})}
    if any(WARM_PYTHON[1] in arg for arg in argv) and _warm_runs():  # a shell line too
        # started now, not by chance before: every run of a test forked alike
        environment["JXINSPECT_TESTS_PYTHON"] = _SERVERS["libs"].started().address
    if not subprocess and (command or base) == base and _warm_runs():
        server = _SERVERS[_server_kind(args, folder)]
        if server.serves(environment):
            return server.run((*_as_python(base), *argv[len(base):]), argv, folder,
                              environment, timeout, stdout)  # fmt: skip
    return _run_process(argv, folder, environment, timeout, stdout)


def _run_process(argv: tuple[str, ...], cwd: str, env: dict[str, str],
                 timeout: float, stdout: Path | None = None) -> CliResult:  # fmt: skip
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(stdout, "w")) if stdout else _subprocess.PIPE
        proc = _subprocess.run(argv, cwd=cwd, env=env, stdin=_subprocess.DEVNULL, stdout=out,
                               stderr=_subprocess.PIPE, text=True, encoding="utf-8",
                               timeout=timeout, check=False)  # fmt: skip
    return CliResult(proc.returncode, proc.stdout or "", proc.stderr, argv)


_STARTUP_VARS = ("PYTHON", *cli_server.STARTUP_VARS)
"""Prefixes of variables read when the interpreter, JAX or jaxlib start: a run that sets
one needs a process of its own."""


def _warm_runs() -> bool:
    return os.environ.get("JXINSPECT_TESTS_SUBPROCESS", "") in ("", "0")


def _startup(env: dict[str, str]) -> dict[str, str]:
    return cli_server.startup(env, _STARTUP_VARS)


_JAX_COMMANDS = ("lower", "diff-debug", "lint", "survey", "profile")
"""The commands whose process imports JAX itself (``lint`` before it forks its workers
from it, ``profile`` to run the target); the others are forked from a server without
JAX."""


def _server_kind(args: tuple[str | os.PathLike[str], ...], cwd: str) -> str:
    if not args or str(args[0]) not in _JAX_COMMANDS:
        return "plain"
    return "libs" if any(_imports_libraries(Path(cwd), str(a)) for a in args[1:]) else "jax"


_LIBRARY_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:flax|equinox|optax)\b", re.MULTILINE)


def _imports_libraries(cwd: Path, arg: str) -> bool:
    """Whether ``arg`` names a Python file (``path.py`` or ``path.py:function``) that
    imports Flax, Equinox or Optax: its run is forked from a server that already did."""
    path, _, _ = arg.partition(".py")
    if not path or path == arg:
        return False
    file = cwd / f"{path}.py"
    try:
        return bool(_LIBRARY_IMPORT.search(file.read_text(encoding="utf-8", errors="replace")))
    except (OSError, ValueError):
        return False


_OWNER = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()
"""The run's first pytest process (pytest-xdist's controller): the servers it owns serve
all its workers, and end with it."""


def process_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the process's name (its state first);
    ``None`` where there is no such process (or no ``/proc``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    return stat.rpartition(")")[2].split()


def running(pid: int) -> bool:
    """Whether a process is running (a zombie waiting to be reaped is not)."""
    stat = process_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def eventually(done: Callable[[], bool], seconds: float, interval: float = 0.05) -> bool:
    """Whether ``done()`` holds, asking every ``interval`` seconds for up to ``seconds``
    (what another process does, seen from outside it)."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(interval)
    return done()


def ended_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` is not running, waiting up to ``seconds`` for it to end (a
    SIGKILL is delivered when the process next runs, which on a busy machine is later)."""
    return eventually(lambda: not running(pid), seconds)


def _started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot; empty where ``/proc`` is not):
    with the pid, a name no later run reuses."""
    stat = process_stat(pid)
    return stat[19] if stat is not None and len(stat) > 19 else ""


_SHARED = Path(tempfile.gettempdir()) / f"jxinspect-tests-{_OWNER}-{_started(_OWNER)}"
"""A folder the run's test processes share (:func:`run_cli_once`), removed when the run's
first process ends its session."""

_STREAMS = Path(tempfile.mkdtemp(prefix="jxinspect-cli-streams-"))
"""Where this process's forked runs write their standard output and error."""
atexit.register(shutil.rmtree, _STREAMS, ignore_errors=True)


class _Server:
    """The run's ``cli_server.py`` process of a kind, shared by every test process of the
    run (pytest-xdist's workers) at one abstract socket; the first that needs it starts
    it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.address = f"jxinspect-tests-{kind}-{_OWNER}"
        self.lock = threading.Lock()
        self.running = False
        """Whether this test process has reached the server once (it then serves until
        the run ends)."""
        self.env = cli_env()
        """The environment the server starts with (each test process's is the same)."""

    def serves(self, env: dict[str, str]) -> bool:
        """Whether a run in ``env`` can be forked from this server: the variables read
        when the interpreter, JAX or jaxlib start are the ones the server started with."""
        return _startup(env) == _startup(self.env)

    def started(self) -> _Server:
        """This server, started if no process of the run has started it yet: a client
        that finds no server (``warm_python.py``) becomes a new Python, and a test whose
        first run found none and whose second found one (another test process started
        it meanwhile) compared a new process with a forked one."""
        if not self.running:
            with contextlib.closing(self._connect()):
                self.running = True
        return self

    def _connect(self) -> socket.socket:
        for attempt in (1, 2):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect("\0" + self.address)
                return sock
            except OSError:
                sock.close()
                if attempt == 2:
                    raise
                self.start()
        raise AssertionError("unreachable")

    def start(self) -> None:
        """Start the server unless a process of the run already did (it answers
        ``taken``, and that one serves)."""
        with self.lock:
            process = _subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("cli_server.py")), self.kind,
                 str(_OWNER), self.address],
                cwd=str(REPO),
                env=self.env,
                stdin=_subprocess.DEVNULL,
                stdout=_subprocess.PIPE,
                stderr=_subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            assert process.stdout is not None
            line = process.stdout.readline()
            process.stdout.close()
            assert line, f"the {self.kind} CLI server did not start"
            ready = json.loads(line)
            assert "ready" in ready or "taken" in ready, ready

    def run(self, python_args: tuple[str, ...], argv: tuple[str, ...], cwd: str,
            env: dict[str, str], timeout: float,
            stdout: Path | None = None) -> CliResult:  # fmt: skip
        """``python PYTHON_ARGS`` forked from the server, standard output to ``stdout``
        (a file of its own by default); ``argv`` is what the result says ran."""
        out_fd, out_name = tempfile.mkstemp(dir=_STREAMS, suffix=".out")
        err_fd, err_name = tempfile.mkstemp(dir=_STREAMS, suffix=".err")
        out, err = Path(out_name), Path(err_name)
        if stdout is not None:
            os.close(out_fd)
            out_fd = os.open(stdout, os.O_WRONLY)
        stdin = os.open(os.devnull, os.O_RDONLY)
        request = {"argv": list(python_args), "cwd": cwd, "env": env}
        try:
            with self._connect() as sock:
                socket.send_fds(sock, [json.dumps(request).encode() + b"\n"],
                                [stdin, out_fd, err_fd])  # fmt: skip
                for fd in (stdin, out_fd, err_fd):
                    os.close(fd)
                stdin = out_fd = err_fd = -1
                replies = sock.makefile("rb")
                started = json.loads(replies.readline() or b"{}")
                if "pid" not in started:
                    if started.get("fallback"):
                        return _run_process(argv, cwd, env, timeout)
                    raise ConnectionError(f"the {self.kind} CLI server answered {started}")
                readable, _, _ = select.select([sock], [], [], timeout)
                if not readable:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(started["pid"], signal.SIGKILL)
                    replies.readline()
                    raise _subprocess.TimeoutExpired(
                        list(argv), timeout, _text(out), _text(err)
                    ) from None
                code = json.loads(replies.readline() or b'{"rc": -9}')["rc"]
            return CliResult(code, "" if stdout else _text(out), _text(err), argv)
        finally:
            for fd in (stdin, out_fd, err_fd):
                if fd >= 0:
                    os.close(fd)
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)

    def stop(self) -> None:
        """Ask the server to end (nothing when none is running)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(OSError), sock:
            sock.connect("\0" + self.address)
            socket.send_fds(sock, [b'{"stop": true}\n'], [])


def _text(path: Path) -> str:
    """A stream's bytes as ``subprocess.run(text=True, encoding="utf-8")`` reads them
    (universal newlines)."""
    data = path.read_bytes().decode("utf-8") if path.exists() else ""
    return data.replace("\r\n", "\n").replace("\r", "\n")


_SERVERS = {kind: _Server(kind) for kind in ("plain", "jax", "libs")}


def close_servers() -> None:
    """Stop the run's CLI servers and remove its shared folder (when the run's first
    pytest process ends its session; a server also ends within a second of that
    process)."""
    if _OWNER == os.getpid():
        for server in _SERVERS.values():
            server.stop()
        shutil.rmtree(_SHARED, ignore_errors=True)


def run_cli_once(*args: str, cwd: str | os.PathLike[str] | None = None) -> CliResult:
    """``run_cli(*args, cwd=cwd)`` once in the whole run: the first test process to ask
    runs it, and the others (pytest-xdist's workers: the golden files and the end-to-end
    tests lower the same samples) wait for it and read what it gave."""
    import fcntl
    import hashlib

    _SHARED.mkdir(exist_ok=True)
    key = hashlib.sha256(json.dumps([args, str(cwd or REPO)]).encode()).hexdigest()[:32]
    given = _SHARED / f"{key}.json"
    with open(_SHARED / f"{key}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if given.exists():
            said = json.loads(given.read_text(encoding="utf-8"))
            return CliResult(said["returncode"], said["stdout"], said["stderr"],
                             tuple(said["argv"]))  # fmt: skip
        result = run_cli(*args, cwd=cwd)
        written = given.with_suffix(".part")
        written.write_text(json.dumps(result.__dict__), encoding="utf-8")
        written.replace(given)
        return result


PLAIN_JAX_ON_8_DEVICES = """
import json, os, sys
import jax
if "jax_num_cpu_devices" in jax.config.values:
    jax.config.update("jax_num_cpu_devices", 8)
else:
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax.numpy as jnp
import jax.sharding as js
from jax.sharding import NamedSharding, PartitionSpec as P
sys.path.insert(0, ".")
import programs
try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map

def mesh_of(text):
    axes = [axis.split("=") for axis in text.split(",")]
    types = {"axis_types": (js.AxisType.Auto,) * len(axes)} if hasattr(js, "AxisType") else {}
    return jax.make_mesh(tuple(int(n) for _, n in axes), tuple(a for a, _ in axes), **types)
"""
"""The start of a plain JAX script that an oracle test runs beside its ``programs.py``: 8
CPU devices on every release, ``programs`` imported, ``shard_map`` from where the release
has it, and ``mesh_of("data=2,model=4")``: a mesh of Auto axes (Explicit ones decide
layouts by type, where XLA's propagation is what these tests read)."""


def lint_outcomes(stderr: str, targets: list[str]) -> dict[str, str]:
    """``lint -v``'s lines for ``targets``: each target → ``cached``, ``staged`` or
    ``failed``."""
    found = {}
    for line in stderr.splitlines():
        name, _, what = line.partition(": ")
        if name in targets:
            found[name] = what.split()[0]
    return found


GROW_SCRIPT = """\
import jax, jax.numpy as jnp

@jax.jit
def grow(a):
    return a + 1

for n in (2, 3):
    grow(jnp.ones(n))
"""
"""A run that records one function as two programs (``grow``, ``grow.2``)."""


def record_grow(folder: Path) -> Path:
    """``jxinspect record -o runs -- python grow.py`` of :data:`GROW_SCRIPT` in ``folder``;
    the recording's folder."""
    (folder / "grow.py").write_text(GROW_SCRIPT, encoding="utf-8")
    result = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "grow.py", cwd=folder)
    assert result.returncode == 0, result.describe()
    return folder / "runs"


def index_of(folder: Path) -> dict[str, Any]:
    """A record folder's ``index.json``, as plain JSON."""
    data: dict[str, Any] = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    return data


RAW_LIBTPU = {"ALLOW_MULTIPLE_LIBTPU_LOAD": "1", "TPU_SKIP_MDS_QUERY": "1"}
"""For a test's raw-JAX script compiling for a TPU topology: libtpu may be loaded by other
processes at once (the command under test, a parallel test; without, the second is refused:
``libtpu multi-process lockfile``) and looks for no metadata server. Not the accelerator
type jxinspect's own processes set (``seam.no_tpu_host``): raw JAX's compile stays the
oracle that the type does not change the topology's compile."""


def run_python(code: str, cwd: str | os.PathLike[str] | None = None,
               warm: bool = False, env: dict[str, str] | None = None) -> CliResult:  # fmt: skip
    """Run ``python -c CODE`` with the same interpreter and environment (``env`` added).

    ``warm=True`` forks it from a server that has imported JAX and the tool (and Flax,
    Equinox and Optax when the code imports them), about a second sooner: for code that
    imports them itself and does not look at what is imported.
    """
    command = (sys.executable,)
    server = _SERVERS["libs" if _LIBRARY_IMPORT.search(code) else "jax"]
    if env is not None or not warm or not _warm_runs() or not server.serves(cli_env()):
        return run_cli("-c", code, cwd=cwd, command=command, env=env)
    return server.run(("-c", code), (*command, "-c", code), str(cwd or REPO), cli_env(),
                      CLI_TIMEOUT_S)  # fmt: skip


# ---- errors -------------------------------------------------------------------------


def error_line(result: CliResult) -> str:
    """The one ``error:`` line a failed run must print; asserts there is exactly one
    line on stderr and no traceback."""
    assert "Traceback" not in result.stderr, result.describe()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected exactly one line on stderr\n{result.describe()}"
    assert lines[0].startswith("error: "), result.describe()
    return lines[0]


def marker_line(path: Path, marker: str) -> int:
    """The line number of the line ending in ``# <-- marker``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.rstrip().endswith(f"# <-- {marker}"):
            return number
    raise AssertionError(f"no line marked `# <-- {marker}` in {path}")


# ---- sample entries -----------------------------------------------------------------


def declared_functions(path: Path) -> list[str]:
    """The keys of a module's ``JXINSPECT`` dict, read from the source (values may be
    expressions, so they are not evaluated)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "JXINSPECT" for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict), f"{path}: JXINSPECT is not a dict display"
            keys = []
            for key in node.value.keys:
                assert isinstance(key, ast.Constant) and isinstance(key.value, str), path
                keys.append(key.value)
            return keys
    return []


def sample_entries() -> list[str]:
    """``stem.function`` for every entry declared in ``sample_programs/*.py``."""
    return [
        f"{path.stem}.{name}"
        for path in sorted(SAMPLES.glob("*.py"))
        for name in declared_functions(path)
    ]


def sample_target(entry: str) -> str:
    """``mlp.predict`` → ``sample_programs/mlp.py:predict`` (relative to the repository)."""
    stem, _, function = entry.partition(".")
    return f"sample_programs/{stem}.py:{function}"


# ---- the JSON schema ------------------------------------------------------------------


@functools.cache
def report_schema() -> dict[str, Any]:
    """The schema as the installed package ships it."""
    resource = importlib.resources.files("jxinspect").joinpath("schemas/report.schema.json")
    return json.loads(resource.read_text(encoding="utf-8"))


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = report_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(data: Any) -> list[str]:
    """Every way ``data`` breaks the schema, one line each (empty: valid)."""
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
        for error in sorted(_validator().iter_errors(data), key=lambda e: list(e.path))
    ]


def assert_valid_report(data: Any, what: str = "report") -> None:
    errors = schema_errors(data)
    assert not errors, f"{what} breaks report.schema.json:\n" + "\n".join(errors[:20])


# ---- golden-file normalization ----------------------------------------------------------


@functools.cache
def _site_packages_dirs() -> list[str]:
    dirs = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    for package in ("jax", "jaxlib"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin:
            dirs.add(str(Path(spec.origin).resolve().parent.parent))
    return sorted((d for d in dirs if d), key=len, reverse=True)


_SITE_RE = re.compile(r"[^\s\"'(]*/(?:site|dist)-packages(?=/)")
_AT_LINE_RE = re.compile(r"(\bat [^\s\"']+?\.py):\d+")
_JAX_LINE_RE = re.compile(r"^(jax:\s+)\S+$", re.MULTILINE)


_ADDRESS_RE = re.compile(r" at 0x[0-9a-f]+")


def normalize_string(text: str) -> str:
    """Paths, line numbers and the running release in the findings' advice, which differ
    between machines and JAX versions, replaced.

    Site-packages first: in a virtual environment it lies inside the repository.
    """
    for folder in _site_packages_dirs():
        text = text.replace(folder, "<site-packages>")
    text = _SITE_RE.sub("<site-packages>", text)
    text = text.replace(str(REPO), "<repo>")
    text = _ADDRESS_RE.sub(" at 0x<address>", text)  # object reprs in older jaxprs
    text = text.replace(f", this is {JAX_RELEASE})", ", this is <jax>)")  # fixed-in advice
    return _AT_LINE_RE.sub(r"\1:<line>", text)


def normalize_text(text: str) -> str:
    """A text report, normalized for a golden file."""
    return _JAX_LINE_RE.sub(r"\1<jax>", normalize_string(text))


def normalize_json(data: Any) -> Any:
    """A JSON report, normalized for a golden file (every string; ``jax_version``)."""
    if isinstance(data, dict):
        return {
            key: "<jax>" if key == "jax_version" else normalize_json(value)
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [normalize_json(item) for item in data]
    if isinstance(data, str):
        return normalize_string(data)
    return data


def dump_json(data: Any) -> str:
    """JSON as the golden files hold it: the tool's own layout (indent 2, key order kept)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


UPDATE_GOLDEN = os.environ.get("JXINSPECT_UPDATE_GOLDEN", "") not in ("", "0")
"""``JXINSPECT_UPDATE_GOLDEN=1``: the golden-file tests write what they got instead, into
the series' folder where it differs from what the series inherits (and remove the
series' copy where it does not: run it series by series, oldest first); ``=release``:
into this release's (:data:`RELEASE_GOLDEN`), only where it differs from the series'."""
UPDATE_RELEASE = os.environ.get("JXINSPECT_UPDATE_GOLDEN", "") == "release"


def _text(path: Path | None) -> str | None:
    return path.read_text(encoding="utf-8") if path is not None else None


def _keep_where_it_differs(own: Path, actual: str, below: Path | None) -> None:
    """``own`` holds ``actual`` unless ``below`` already says it."""
    if _text(below) == actual:
        own.unlink(missing_ok=True)
    elif _text(own if own.is_file() else None) != actual:
        own.parent.mkdir(parents=True, exist_ok=True)
        own.write_text(actual, encoding="utf-8")


def compare_golden(path: Path, actual: str, regenerate: str) -> None:
    """Fail, with a diff and the ``regenerate`` command, where ``actual`` differs from the
    golden file ``path`` (read through :func:`golden_file`); write it instead under
    :data:`UPDATE_GOLDEN`. Skips where this JAX series has no golden files."""
    import difflib

    import pytest

    if JAX_SERIES not in GOLDEN_SERIES:
        pytest.skip(f"no golden files for JAX {JAX_SERIES}: CI has no leg of that series")
    relative = path.relative_to(GOLDEN)
    if UPDATE_RELEASE:
        below = _first(_series_folders(JAX_SERIES), relative)
        _keep_where_it_differs(RELEASE_GOLDEN / relative, actual, below)
        return
    if UPDATE_GOLDEN:
        _keep_where_it_differs(path, actual, inherited_golden(JAX_SERIES, relative))
        return
    found = golden_file(path)
    missing = f"no golden file {path.relative_to(REPO)}; create it with: {regenerate}"
    assert found is not None, missing
    path = found
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            f"{path.name} (golden)", f"{path.name} (now)", n=2,
        )  # fmt: skip
        shown = "".join(list(diff)[:120])
        pytest.fail(f"output differs from {path.relative_to(REPO)}; if intended, run: "
                    f"{regenerate}\n{shown}", pytrace=False)  # fmt: skip


# ---- the views (--show jaxpr, mlir, sharding) -------------------------------------------------

VIEWS = ("jaxpr", "mlir", "sharding")
SHOW_VIEWS = ("--show", "jaxpr", "--show", "mlir", "--show", "sharding")
"""The flags of one run that prints every text view after the report."""
_VIEW_HEAD = re.compile(r"^── (\w+) ──$", re.MULTILINE)
_PY_LINE_RE = re.compile(r"(\.py):\d+\b")


def split_views(stdout: str) -> dict[str, str]:
    """``--show`` output: the text after each ``── name ──`` heading, by name."""
    parts = _VIEW_HEAD.split(stdout)
    return {parts[i]: parts[i + 1].lstrip("\n") for i in range(1, len(parts), 2)}


_AXIS_SET_RE = re.compile(r"(\]\{|frozenset\(\{)([^{}]*)\}")
_VMA_SET_RE = re.compile(r"(\]\{V:\()([^(){}]*)\)\}")
"""``f32[8,256]{V:(model,data)}``: the axes a value varies over, as 0.6 prints them."""


def _sorted_set(match: re.Match[str]) -> str:
    sep = ", " if match.group(1).startswith("frozenset") else ","
    return match.group(1) + sep.join(sorted(match.group(2).split(sep))) + "}"


def normalize_view(text: str) -> str:
    """A view, normalized for a golden file: as :func:`normalize_string`, every
    ``file.py:N`` (``--source`` labels, nested jaxprs' sources) is ``file.py:<line>``, and
    sets of mesh axes (``f32[8]{model,data}``, ``frozenset({...})``,
    ``f32[8]{V:(model,data)}``), which some JAX releases print in hash order, are sorted."""
    text = _AXIS_SET_RE.sub(_sorted_set, normalize_string(text))
    text = _VMA_SET_RE.sub(
        lambda m: m.group(1) + ",".join(sorted(m.group(2).split(","))) + ")}", text
    )
    return _PY_LINE_RE.sub(r"\1:<line>", text)


# ---- raw JAX, the oracle ---------------------------------------------------------------------

RAW_JAX_PRELUDE = r"""
import importlib.util, json, re, sys
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jxinspect.tracer import seam

seam.simulate_cpu_devices(8)

def load(stem):
    spec = importlib.util.spec_from_file_location(stem, {repo!r} + f"/sample_programs/{{stem}}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
"""
"""The start of a ``run_python`` script that stages samples with plain JAX (8 simulated
CPU devices, ``load("mlp")``); a ``str.format`` template with ``repo``."""


VIEW_ENTRIES: dict[str, tuple[str, ...]] = {
    "big_mlp.forward": ("--max-lines", "40"),  # 512 inputs; the cut and its note
    "compiled.tp_mlp": (),  # three layouts on a data=2,model=4 mesh
    "custom_pytree.apply_seq": (),  # attribute paths
    "data_parallel.step": (),  # pmap: synthetic names, a shared jaxpr
    "mlp.predict": (),  # nested parameter paths, dict results
    "nested.model": ("--source",),  # scan, cond, while, remat, custom_jvp/vjp, inner jit
    "nested.model_grad": (),  # transposed scan: shared jaxprs
    "sharded.update": (),  # shardings, partial replication, donation
    "static_arg.f": (),  # static arguments
    "tp.layer_rs": (),  # shard_map
    "unused_arg.f": (),  # a pruned argument
}
"""Entries whose views have golden files, and the extra flags of their run."""


def view_run(lower_text: Any, entry: str) -> dict[str, str]:
    """The views of ``entry``'s golden run (cached: ``test_views.py`` reads it too)."""
    result = lower_text(sample_target(entry), *SHOW_VIEWS, *VIEW_ENTRIES[entry])
    views = split_views(result.stdout)
    assert sorted(views) == sorted(VIEWS), result.describe()
    return views


RAW_MAIN = (
    RAW_JAX_PRELUDE
    + r"""
def S(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)
{call}
text = seam.lowered_text(lowered, "stablehlo", True)
aliases = dict(re.findall(r'^(#loc\d*) = loc\((.*)\)$', text, re.M))
head = text[text.index("@main(") + 6:]
args_text, results_text = head.split(") -> ", 1)
args = []
for chunk in re.split(r"%arg\d+: ", args_text)[1:]:
    locs = re.findall(r" loc\(([^()]*(?:\([^()]*\))?)\)", chunk)
    loc = aliases.get(locs[-1], locs[-1]) if locs else ""
    name = re.match(r'^"((?:[^"\\]|\\.)*)"(?!:)', loc)
    sharding = re.search(r'(sdy\.sharding = #sdy\.sharding<[^>]*>|mhlo\.sharding = "[^"]*")', chunk)
    alias = re.search(r"tf\.aliasing_output = (\d+)", chunk)
    args.append({{"name": name.group(1) if name else None,
                  "sharding": sharding.group(1) if sharding else None,
                  "alias": int(alias.group(1)) if alias else None}})
# a shard_map at the top: the sharding its manual computation gives an argument of @main
manual = {{}}
entry = re.search(r"sdy\.manual_computation\(([^)]*)\) in_shardings=\[(.*?)\] out_shardings", head)
if entry:
    specs = re.findall(r"<@[^,>]+, \[[^\]]*\][^>]*>", entry.group(2))
    for operand, spec in zip(entry.group(1).split(", "), specs):
        if re.fullmatch(r"%arg\d+", operand):
            manual.setdefault(int(operand[4:]), "sdy.sharding = #sdy.sharding" + spec)
for i, arg in enumerate(args):
    arg["manual"] = manual.get(i)
signature = results_text.split(" {{\n", 1)[0]
results = re.findall(r'tensor<[^>]*>(?: \{{([^}}]*)\}})?', signature)
paths = [re.search(r'jax\.result_info = "([^"]*)"', r) for r in results]
print(json.dumps({{"args": args, "results": [p.group(1) if p else None for p in paths]}}))
"""
)


def raw_main(call: str) -> dict[str, Any]:
    """What raw JAX's lowering of ``call`` (code that sets ``lowered``; ``S(*shape)`` is an
    f32 ``ShapeDtypeStruct``, ``load(stem)`` a sample module) carries in ``@main``: each
    argument's name, sharding attribute and alias, each result's path, read from the
    printed text with a regex (never through the tool's reader); ``manual``: the sharding
    that a shard_map's ``sdy.manual_computation`` gives an argument it takes directly."""
    result = run_python(RAW_MAIN.format(repo=str(REPO), call=call), warm=True)
    assert result.returncode == 0, result.describe()
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _jax_has(module: str, name: str) -> bool:
    import importlib

    return hasattr(importlib.import_module(module), name)


needs_axis_types = pytest.mark.skipif(
    not _jax_has("jax.sharding", "AxisType"),
    reason="the program lays out a model over a mesh of typed axes (jax.sharding.AxisType), "
    "which this JAX lacks",
)
"""A test of a program written for a JAX with typed mesh axes (Flax NNX's sharding idiom)."""

needs_profile_reader = pytest.mark.skipif(
    not _jax_has("jax.profiler", "ProfileData"),
    reason="the trace is compared with jax.profiler.ProfileData's reading, which this JAX lacks",
)
"""A test that checks a profile against JAX's own reader of the trace."""


def _shardy_by_default() -> bool:
    import jax

    return bool(jax.config.values.get("jax_use_shardy_partitioner", False))


needs_shardy_default = pytest.mark.skipif(
    not _shardy_by_default(),
    reason="--why's debug run needs Shardy's record, and this JAX partitions with GSPMD",
)
"""A test of ``--why``'s partitioner run (Shardy by default from 0.7; before, none runs)."""
