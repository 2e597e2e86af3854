"""`jxinspect record` on real test suites: optax's own tests (shipped in its wheel), a
subset of JAX's (api, pjit, shard_map, pmap, debug_info, read from a JAX git repository at
the tag of the installed release; `--whole`: the whole files) and Equinox's `test_jit.py`
(from an Equinox git repository at the tag of the installed Equinox: every function it
jits goes through `eqx.filter_jit`),
each run three ways in turn: plainly, under `jxinspect record`,
and under record with JAX_DUMP_IR_TO. Prints the pass/fail/error counts of each run (they
must be equal), wall and CPU times (the CPU seconds of the run's processes, which
another load on the machine changes far less than the wall), the ratios record/plain
(aim <= 1.10), any run that crashed
(exit 139, ...) with the test it was in and the fatal frames, and how far the recorded
reports agree with the modules JAX dumped (tests/record/dump_agreement.py).

Usage: python bench/record_suites.py SUITE [SUITE ...] [--runs N] [--check] [-k EXPR]
           [--tests ID ...] [--whole] [--no-dump] [--keep DIR] [--json FILE]
  SUITE: optax, jax-api, jax-pjit, jax-shard_map, jax-pmap, jax-debug_info (its WIP
         skip lifted), equinox (or all)
  --runs N  alternate N more plain/record runs after the first three and print medians
  --check   exit 1 when the counts differ, a run crashed, or the dump disagrees
  --whole   a JAX suite's whole test file, not its default subset (each run may take
            up to WHOLE_TIMEOUT)
  --no-dump  two runs, not three: no run under record with JAX's dump (nor the
            agreement it gives), for the whole files, where a run takes many minutes
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common import ROOT, tool_base

sys.path.insert(0, str(ROOT / "tests" / "record"))
from dump_agreement import Agreement, agreement, summary  # noqa: E402

AIM = 1.10
TIMEOUT = 400
"""Seconds one pytest run may take; a run killed then counts as exit 124 and crashed."""
WHOLE_TIMEOUT = 3600
"""The same for a whole JAX test file (``--whole``)."""
JAX_REPO = os.environ.get("JAX_REPO", "/work/.mirror/jax-ml+jax/repo")
"""A clone (bare is enough) of github.com/jax-ml/jax with its release tags."""
EQUINOX_REPO = os.environ.get("EQUINOX_REPO", "/work/.mirror/patrick-kidger+equinox/repo")
"""A clone (bare is enough) of github.com/patrick-kidger/equinox with its release tags."""
EQUINOX_FILES = ("__init__.py", "conftest.py", "helpers.py", "test_jit.py")
"""Equinox's tests/ files the suite needs: its fixtures and the jit tests."""

OPTAX_FILES = (
    "base_test.py",
    "combine_test.py",
    "factorized_test.py",
    "float64_test.py",
    "lookahead_test.py",
    "numerics_test.py",
    "sharding_test.py",
    "transform_test.py",
    "update_test.py",
    "utils_test.py",
)
"""optax/_src tests in both optax 0.2.5 and 0.2.8, ~50 s together plainly here
(linear_algebra_test alone takes 50 s)."""

JAX_SUITES: dict[str, tuple[str, str]] = {
    # suite: (file under tests/, default -k expression)
    "jax-api": ("api_test.py", "APITest and (jit or donate or pytree or vjp)"),
    "jax-pjit": ("pjit_test.py", "PJitTest"),
    "jax-shard_map": (
        "shard_map_test.py",
        "ShardMapTest and (simple or matmul or jvp or grad or vmap or donat or out_specs)",
    ),
    "jax-pmap": ("pmap_test.py", "PythonPmapTest and not Pallas"),
    "jax-debug_info": ("debug_info_test.py", "DebugInfoTest"),
}
WIP_SKIP = '@unittest.skip("WIP")\nclass DebugInfoTest('
"""The class-level skip of JAX's debug-info tests (0.10), lifted: the suite runs them."""
SUITES = ("optax", *JAX_SUITES, "equinox")

ENV = {
    "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
    "JAX_NUM_GENERATED_CASES": "2",
    "JAX_PLATFORMS": "cpu",
    "PYTHONDONTWRITEBYTECODE": "1",
}
"""The same for every run: JAX's tests ask for 8 CPU devices (test_util's
request_cpu_devices or set_host_platform_device_count; XLA_FLAGS gives them to the
tests that do not ask), and few generated cases per parameterized test."""

_RESULT = re.compile(r"^(\S.*?::\S.*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_START = re.compile(r"^(\S+\.py::\S+)")
_OUTCOMES = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
             "XFAIL": "xfailed", "XPASS": "xpassed"}  # fmt: skip


@dataclass
class Suite:
    name: str
    cwd: Path
    args: list[str]
    """pytest's arguments (files and selection), run with this interpreter."""
    timeout: float = TIMEOUT


@dataclass
class Run:
    label: str
    rc: int
    wall: float
    cpu: float = 0.0
    """CPU seconds (user and system) of the run's processes that were waited for."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """Test id → passed, failed, error, skipped, xfailed, xpassed."""
    crashed_in: str | None = None
    """The test that was running when the process died (``None``: it did not)."""
    fatal: list[str] = field(default_factory=list)
    """The fatal error and its first frames, as faulthandler wrote them."""
    tail: str = ""

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(self.outcomes.values()))

    @property
    def crashed(self) -> bool:
        return self.rc < 0 or self.rc >= 124 or bool(self.fatal)

    def line(self) -> str:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items())) or "no tests"
        text = f"{self.label:<22} {counts}; exit {self.rc}; {self.wall:.1f} s, {self.cpu:.1f} s CPU"
        if self.crashed:
            text += f"\n  CRASHED (exit {self.rc}) in {self.crashed_in or 'an unknown test'}"
            text += "".join(f"\n    {f}" for f in self.fatal)
        return text


def jax_version() -> str:
    return importlib.metadata.version("jax")


def prepare(
    name: str, folder: Path, k: str | None, tests: list[str] | None, whole: bool = False
) -> Suite:
    """The suite's files in (or for) ``folder``, and pytest's arguments."""
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # no outer config
    if name == "optax":
        spec = importlib.util.find_spec("optax")
        if spec is None or not spec.submodule_search_locations:
            sys.exit("optax is not installed beside this Python")
        src = Path(list(spec.submodule_search_locations)[0]) / "_src"
        files = [str(src / f) for f in OPTAX_FILES if (src / f).is_file()]
        args = [*files, *(["-k", k] if k else [])]
        if tests:
            args = [f"{src}/{t}" if "::" in t else t for t in tests]
        return Suite(name, folder, args)
    if name == "equinox":
        tag = f"v{importlib.metadata.version('equinox')}"
        (folder / "tests").mkdir()
        for file in EQUINOX_FILES:
            shown = _from_git(EQUINOX_REPO, "EQUINOX_REPO", tag, f"tests/{file}")
            (folder / "tests" / file).write_text(shown, encoding="utf-8")
        return Suite(name, folder, tests or ["tests/test_jit.py", *(["-k", k] if k else [])])
    if name not in JAX_SUITES:
        sys.exit(f"no suite {name!r}; give one of {', '.join(SUITES)}")
    file, default_k = JAX_SUITES[name]
    shown = _from_git(JAX_REPO, "JAX_REPO", f"jax-v{jax_version()}", f"tests/{file}")
    shown = shown.replace(WIP_SKIP, "class DebugInfoTest(")
    (folder / file).write_text(shown, encoding="utf-8")
    if tests:
        return Suite(name, folder, [t if t.startswith(file) else f"{file}::{t}" for t in tests])
    if whole:
        return Suite(name, folder, [file, *(["-k", k] if k else [])], WHOLE_TIMEOUT)
    return Suite(name, folder, [file, "-k", k or default_k])


def _from_git(repo: str, variable: str, tag: str, path: str) -> str:
    """A file of a git repository at a tag; exits saying which when it cannot."""
    shown = subprocess.run(["git", "-C", repo, "show", f"{tag}:{path}"],
                           capture_output=True, text=True, check=False)  # fmt: skip
    if shown.returncode:
        sys.exit(f"cannot read {path} at {tag} from {repo} ({variable}): {shown.stderr.strip()}")
    return shown.stdout


def run_pytest(
    suite: Suite, label: str, record: Path | None = None, dump: Path | None = None
) -> Run:
    """One run of the suite: plain, or under ``jxinspect record -o record``, with
    ``JAX_DUMP_IR_TO=dump`` when given."""
    command = [sys.executable, "-m", "pytest", "-v", "--tb=line", "-p", "no:cacheprovider",
               "-W", "ignore::DeprecationWarning", *suite.args]  # fmt: skip
    if record is not None:
        command = [*tool_base(), "record", "-o", str(record), "--", *command]
    env = {**os.environ, **ENV}
    env.pop("JAX_DUMP_IR_TO", None)
    if dump is not None:
        env["JAX_DUMP_IR_TO"] = str(dump)
    start, used = time.perf_counter(), _children_cpu()
    try:
        proc = subprocess.run(
            command, cwd=suite.cwd, env=env, capture_output=True, text=True, check=False,
            errors="replace", timeout=suite.timeout,
        )  # fmt: skip
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as err:
        rc, stdout, stderr = 124, _text(err.stdout), _text(err.stderr) + "\nTIMED OUT"
    wall, cpu = time.perf_counter() - start, _children_cpu() - used
    run = Run(label, rc, wall, cpu, tail=(stdout + stderr)[-4000:])
    last_started = None
    for line in stdout.splitlines():
        found = _RESULT.match(line)
        if found:
            run.outcomes[found.group(1)] = _OUTCOMES[found.group(2)]
            continue
        started = _START.match(line)
        if started:
            last_started = started.group(1)
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            frames = [f.strip() for f in lines[i + 1 :] if f.strip().startswith("File ")]
            run.fatal = [line.strip(), *frames[:6]]
            break
    if run.crashed and last_started not in run.outcomes:
        run.crashed_in = last_started
    return run


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return data or ""


def differing(a: Run, b: Run) -> list[str]:
    """Tests whose outcome differs between two runs."""
    return sorted(
        f"{t}: {a.outcomes.get(t, 'not run')} vs {b.outcomes.get(t, 'not run')}"
        for t in set(a.outcomes) | set(b.outcomes)
        if a.outcomes.get(t) != b.outcomes.get(t)
    )


def helper_functions(record: Path) -> list[str]:
    """Recorded functions that are JAX's own helpers or a library's wrapper rather than the
    run's code: no name or source (``<unnamed function>``, ``<unknown>``), a source in
    JAX's or Equinox's package, or a name that JAX or Equinox gives its wrappers (``_fun``,
    ``apply``, ``fun_wrapped``)."""
    try:
        index = json.loads((record / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = []
    for entry in index.get("functions", []):
        source = entry.get("source") or ""
        name = entry.get("name") or ""
        if (
            not source
            or "<unknown>" in source
            or "<unnamed" in name
            or re.search(r"[/\\]jax[/\\]", source)
            or name in ("apply", "_fun", "fun_", "wrapped_fun", "fun_wrapped")
            or re.search(r"[/\\]equinox[/\\]", source)
        ):
            found.append(f"{name} ({source or 'no source'})")
    return sorted(set(found))


@dataclass
class Outcome:
    suite: str
    jax: str
    plain: Run
    record: Run
    dumped: Run | None
    """``None``: not run (``--no-dump``)."""
    agreement: Agreement | None
    differences: list[str]
    helpers: list[str]
    recorded: int = 0
    ratios: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.record.wall / self.plain.wall

    @property
    def cpu_ratio(self) -> float:
        return self.record.cpu / self.plain.cpu if self.plain.cpu else float("nan")

    @property
    def ok(self) -> bool:
        runs = [r for r in (self.plain, self.record, self.dumped) if r is not None]
        agrees = self.dumped is None or (self.agreement is not None and self.agreement.full)
        return (
            not self.differences
            and all(r.counts == self.plain.counts for r in runs)
            and not any(r.crashed for r in runs)
            and agrees
        )

    def to_dict(self) -> dict[str, Any]:
        data = {
            k: v for k, v in asdict(self).items() if k not in ("agreement", "plain", "record",
                                                               "dumped")
        }  # fmt: skip
        for key in ("plain", "record", "dumped"):
            run = getattr(self, key)
            if run is None:
                data[key] = None
                continue
            data[key] = {**asdict(run), "counts": run.counts}
            del data[key]["outcomes"]
        data["agreement"] = self.agreement.to_dict() if self.agreement else None
        data["ratio"] = self.ratio
        data["cpu_ratio"] = self.cpu_ratio
        return data


def measure(
    name: str,
    *,
    k: str | None = None,
    tests: list[str] | None = None,
    runs: int = 0,
    keep: Path | None = None,
    whole: bool = False,
    dump: bool = True,
) -> Outcome:
    """Run one suite plainly, under record, and (``dump``) under record with the dump;
    then ``runs`` more alternating plain/record pairs for the ratio's median."""
    with tempfile.TemporaryDirectory(prefix=f"suite-{name}-") as tmp:
        folder = Path(tmp)
        suite = prepare(name, folder, k, tests, whole)
        work = keep / name if keep else folder / "out"
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        plain = run_pytest(suite, "plain")
        record = run_pytest(suite, "record", record=work / "records")
        dumped = None
        if dump:
            dumped = run_pytest(suite, "record + dump", record=work / "records-dumped",
                                dump=work / "dump")  # fmt: skip
        result = None
        if (work / "records-dumped" / "index.json").is_file():
            result = agreement(work / "records-dumped", work / "dump")
        recorded = 0
        try:
            index = json.loads((work / "records" / "index.json").read_text(encoding="utf-8"))
            recorded = len(index.get("functions", []))
        except (OSError, ValueError):
            pass
        outcome = Outcome(
            suite=name,
            jax=jax_version(),
            plain=plain,
            record=record,
            dumped=dumped,
            agreement=result,
            differences=differing(plain, record) + (differing(plain, dumped) if dumped else []),
            helpers=helper_functions(work / "records"),
            recorded=recorded,
        )
        pairs = [(plain, record)]
        for _ in range(runs):
            p = run_pytest(suite, "plain")
            shutil.rmtree(work / "again", ignore_errors=True)
            pairs.append((p, run_pytest(suite, "record", record=work / "again")))
        if runs:
            outcome.ratios = [r.wall / p.wall for p, r in pairs]
            outcome.plain.wall = statistics.median(p.wall for p, _ in pairs)
            outcome.record.wall = statistics.median(r.wall for _, r in pairs)
            outcome.plain.cpu = statistics.median(p.cpu for p, _ in pairs)
            outcome.record.cpu = statistics.median(r.cpu for _, r in pairs)
    return outcome


def report(outcome: Outcome, examples: int = 1) -> str:
    runs = len(outcome.ratios) or 1
    compared = [r for r in (outcome.plain, outcome.record, outcome.dumped) if r is not None]
    equal = all(r.counts == outcome.plain.counts for r in compared)
    lines = [
        f"== {outcome.suite} on JAX {outcome.jax}",
        *(r.line() for r in compared),
        f"counts {'equal' if equal else 'DIFFER'}"
        + (
            f"; tests whose outcome differs: {', '.join(outcome.differences[:5])}"
            if outcome.differences
            else ""
        ),  # fmt: skip
        f"plain run:{'':<14}median {outcome.plain.wall:.2f} s, {outcome.plain.cpu:.2f} s CPU"
        f" over {runs} runs",
        f"under jxinspect record: median {outcome.record.wall:.2f} s, {outcome.record.cpu:.2f} s"
        f" CPU over {runs} runs",
        f"ratio: {outcome.ratio:.3f} wall, {outcome.cpu_ratio:.3f} CPU (aim <= {AIM})",
        f"functions recorded: {outcome.recorded}",
    ]
    if outcome.dumped is None:
        lines.append("dump agreement: not measured (--no-dump)")
    else:
        lines.append(summary(outcome.agreement, examples) if outcome.agreement else
                     "dump agreement: no record folder from the dumped run")  # fmt: skip
    if outcome.helpers:
        lines.append(f"recorded functions of JAX's own: {len(outcome.helpers)}: "
                     + "; ".join(outcome.helpers[:8]))  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("suites", nargs="+", choices=[*SUITES, "all"], metavar="SUITE")
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("-k", help="pytest -k expression instead of the suite's default")
    parser.add_argument("--tests", nargs="+", help="test ids instead of the default subset")
    parser.add_argument("--whole", action="store_true", help="a JAX suite's whole test file")
    parser.add_argument("--no-dump", action="store_true", help="no run with JAX's dump")
    parser.add_argument("--keep", type=Path, help="keep record and dump folders here")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--examples", type=int, default=1, help="disagreements shown per kind")
    options = parser.parse_args()
    names = list(SUITES) if "all" in options.suites else options.suites
    failed, data = [], []
    for name in names:
        outcome = measure(name, k=options.k, tests=options.tests, runs=options.runs,
                          keep=options.keep, whole=options.whole,
                          dump=not options.no_dump)  # fmt: skip
        print(report(outcome, options.examples), flush=True)
        data.append(outcome.to_dict())
        if not outcome.ok:
            failed.append(name)
    if options.json:
        options.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if options.check and failed:
        sys.exit(f"not clean: {', '.join(failed)}")


if __name__ == "__main__":
    main()
