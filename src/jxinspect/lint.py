"""``jxinspect lint``: stage every target of a project, judge them, compare with a baseline.

1. **Plan** (no JAX): targets come from the configuration and from modules under the
   given paths that declare ``JXINSPECT`` (read from the source, nothing imported). Each
   gets its options (config entry over declaration over ``defaults``) and its policy
   (select/ignore/severity/budgets, per-target overrides over the global ones).
2. **Devices**: JAX fixes the CPU device count when its backend starts, so the most any
   target needs is simulated once, before any user module is imported.
3. **Stage**: in this process (JAX imported once), or in ``jobs`` spawned workers that
   each stage a share and send back ``Report.to_dict()``. A target that fails to import,
   trace or build its inputs is reported; the others still run.
4. **Judge**: rules with each target's settings, then select/ignore/severity, then the
   baseline (keyed by target, code and leaf path, never by line).
"""

from __future__ import annotations

import contextlib
import fnmatch
import gc
import os
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jxinspect import __version__
from jxinspect.baseline import Key, make_key, read_baseline, render_baseline
from jxinspect.checks import RULES
from jxinspect.checks.settings import Settings
from jxinspect.config import Config, Policy, TargetEntry, find_config, load_config
from jxinspect.declarations import Declaration, definition_line, parse_module, static_declaration
from jxinspect.errors import JxError, UsageError, UserCodeError
from jxinspect.lint_result import GoneEntry, LintFinding, LintResult, RuleInfo, TargetResult
from jxinspect.model import Report
from jxinspect.options import TargetOptions, options_from_mapping
from jxinspect.spec import SpecError, parse_mesh
from jxinspect.targets import DECLARATION, parse_target, user_prints_to_stderr

DEFAULT_BASELINE = "jxinspect-baseline.json"
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}


@dataclass(frozen=True)
class LintRequest:
    """What the command line asks for; ``None`` means "as configured"."""

    paths: tuple[str, ...] = ()
    config: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None
    baseline: Path | None = None
    write_baseline: bool = False
    jobs: int = 1
    compile: bool | None = None
    progress: bool = False
    traceback: bool = False


@dataclass(frozen=True)
class Job:
    """One target to stage; plain data, so it can be sent to a worker process."""

    name: str
    text: str
    """What :func:`jxinspect.api.inspect_target` gets (an absolute path for files)."""
    options: TargetOptions
    settings: Settings
    compile: bool
    group: str
    """The module's source file: targets of one module are staged by one worker."""


@dataclass(frozen=True)
class Planned:
    """A target with everything needed to stage and judge it."""

    name: str
    policy: Policy
    file: str | None
    line: int | None
    job: Job | None = None
    error: str | None = None
    """Why it cannot be staged at all (a bad declaration); then ``job`` is ``None``."""
    error_kind: str = "usage"


@dataclass(frozen=True)
class Outcome:
    """What staging one target gave."""

    report: Report | None
    error: str | None = None
    kind: str | None = None


class _Planner:
    """Turns the configuration and the paths into :class:`Planned` targets."""

    def __init__(self, config: Config, request: LintRequest) -> None:
        self.config, self.request, self.root = config, request, config.root
        self.modules: dict[Path, tuple[Any, Declaration | None] | JxError] = {}

    def display(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path.resolve())

    def module(self, path: Path) -> tuple[Any, Declaration | None]:
        """The module's syntax tree and declaration, read once."""
        key = path.resolve()
        if key not in self.modules:
            try:
                tree = parse_module(key)
                self.modules[key] = (tree, static_declaration(key, tree))
            except JxError as err:
                self.modules[key] = err
        found = self.modules[key]
        if isinstance(found, JxError):
            raise found
        return found

    def policy(self, entry: TargetEntry | None) -> Policy:
        policy = entry.override.apply(self.config.policy) if entry else self.config.policy
        request = self.request
        return replace(
            policy,
            select=request.select if request.select is not None else policy.select,
            ignore=policy.ignore + request.ignore,
            compile=request.compile if request.compile is not None else policy.compile,
        )

    def plan(self) -> list[Planned]:
        planned: dict[str, Planned] = {}
        for entry in self.config.targets:
            for item in self.from_entry(entry):
                planned[item.name] = item
        for path in self.discover():
            for item in self.from_file(path, None, None):
                planned.setdefault(item.name, item)
        return [planned[name] for name in sorted(planned)]

    def discover(self) -> Iterator[Path]:
        """Modules that mention JXINSPECT under the given (or configured) paths."""
        request, config = self.request, self.config
        if request.paths:
            roots = [Path(p) for p in request.paths]
        elif config.paths:
            roots = [self.root / p for p in config.paths]
        elif config.targets:
            return
        else:
            roots = [self.root]
        seen: set[Path] = set()
        for start in roots:
            if not start.exists():
                raise UsageError(f"no such file or folder: {start}")
            files = [start] if start.is_file() else self._walk(start)
            for path in files:
                resolved = path.resolve()
                if resolved in seen or any(
                    fnmatch.fnmatch(self.display(path), pattern) for pattern in config.exclude
                ):
                    continue
                seen.add(resolved)
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if DECLARATION in text:
                    yield path

    def _walk(self, folder: Path) -> list[Path]:
        found = []
        for current, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
            found += [Path(current) / f for f in sorted(files) if f.endswith(".py")]
        return found

    def from_entry(self, entry: TargetEntry) -> list[Planned]:
        target = parse_target(entry.target)
        if target.is_file:
            return self.from_file(self.root / target.module, target.attribute, entry)
        policy = self.policy(entry)
        if target.attribute is None:
            return [
                Planned(
                    entry.target,
                    policy,
                    None,
                    entry.line,
                    error="name the function: module:function",
                    error_kind="usage",
                )
            ]
        try:
            source = target.source_path
        except Exception as err:  # importing a parent package can fail in any way
            error = f"cannot find module {target.module}: {type(err).__name__}: {err}"
            return [Planned(target.text, policy, None, None, error=error, error_kind="user-code")]
        return [self.planned(target.text, target.text, source, target.attribute, entry)]

    def from_file(
        self, path: Path, attribute: str | None, entry: TargetEntry | None
    ) -> list[Planned]:
        name = self.display(path)
        policy = self.policy(entry)
        try:
            _, declaration = self.module(path)
        except JxError as err:
            label = f"{name}:{attribute}" if attribute else name
            return [Planned(label, policy, name, None, error=str(err), error_kind=_kind_of(err))]
        attributes = (
            [attribute] if attribute else list(declaration.functions if declaration else ())
        )
        if not attributes and entry is not None:
            return [
                Planned(
                    name,
                    policy,
                    name,
                    entry.line,
                    error=f"{name} declares no {DECLARATION}; name the function: {name}:FUNCTION",
                )
            ]
        text = str(path.resolve())
        return [self.planned(f"{name}:{a}", f"{text}:{a}", path, a, entry) for a in attributes]

    def planned(
        self, name: str, text: str, source: Path | None, attribute: str, entry: TargetEntry | None
    ) -> Planned:
        policy = self.policy(entry)
        file = self.display(source) if source else None
        line = None
        declared: TargetOptions | None = None
        try:
            if source is not None and source.is_file():
                tree, declaration = self.module(source)
                line = definition_line(tree, attribute)
                if declaration and declaration.entries.get(attribute) is not None:
                    where = f"{file}:{declaration.line}: {attribute!r} in {DECLARATION}"
                    declared = options_from_mapping(declaration.entries[attribute], where)
        except JxError as err:
            return Planned(name, policy, file, line, error=str(err), error_kind=_kind_of(err))
        options = self.config.defaults
        if declared is not None:
            options = declared.merged_over(options)
        if entry is not None:
            options = entry.options.merged_over(options)
        settings, compile = policy.settings, policy.compile
        job = Job(name, text, options, settings, compile, str(source or text))
        return Planned(name, policy, file, line, job=job)


def _kind_of(err: BaseException) -> str:
    if isinstance(err, UsageError):
        return "usage"
    if isinstance(err, UserCodeError):
        return "user-code"
    return "internal"


def devices_needed(jobs: list[Job]) -> int | None:
    """The most CPU devices any target asks for (``devices``, or a concrete mesh's size)."""
    most = None
    for job in jobs:
        count = job.options.devices
        if count is None and job.options.mesh and not job.options.abstract:
            try:
                count = 1
                for _, size in parse_mesh(job.options.mesh):
                    count *= size
            except SpecError:
                count = None
        if count is not None and (most is None or count > most):
            most = count
    return most


def prepare(devices: int | None, root: Path) -> None:
    """Before any user module: make the root importable, simulate the devices, import JAX.

    JAX's modules then move to the collector's permanent generation (``gc.freeze``): they
    live as long as the process, and tracing 50 targets otherwise spends a tenth of its
    time rescanning them.
    """
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from jxinspect.tracer import seam
    from jxinspect.tracer.devices import prepare_devices

    if devices is not None and devices > 1:
        prepare_devices(None, devices)
    seam.import_jax()  # what every target needs, loaded before the freeze

    gc.freeze()


def stage(job: Job, show_traceback: bool = False) -> Outcome:
    """Stage one target and run the rules with its settings; never raises (but ^C)."""
    from jxinspect.api import inspect_target
    from jxinspect.targets import describe_exception

    try:
        with user_prints_to_stderr():
            report = inspect_target(
                job.text, job.options, compile=job.compile, settings=job.settings
            )
        return Outcome(report)
    except KeyboardInterrupt:
        raise
    except JxError as err:
        if show_traceback:
            traceback.print_exc()
        return Outcome(None, str(err), _kind_of(err))
    except Exception as err:
        if show_traceback:
            traceback.print_exc()
        return Outcome(
            None,
            f"internal error: {type(err).__name__}: {err} (rerun with --traceback and report it)",
            "internal",
        )
    except BaseException as err:  # SystemExit or GeneratorExit raised by the user's code
        return Outcome(None, f"the target raised {describe_exception(err)}", "user-code")


def _worker_init(devices: int | None, root: str, show_traceback: bool) -> None:
    os.dup2(2, 1)  # a worker's stdout is the parent's payload: send the user's prints to stderr
    global _SHOW_TRACEBACK
    _SHOW_TRACEBACK = show_traceback
    prepare(devices, Path(root))


_SHOW_TRACEBACK = False


def _worker_stage(
    jobs: list[Job],
) -> list[tuple[str, dict[str, Any] | None, str | None, str | None]]:
    """Stage a share of the targets in a worker: (name, report dict, error, kind) each."""
    results = []
    for job in jobs:
        outcome = stage(job, _SHOW_TRACEBACK)
        report = outcome.report.to_dict() if outcome.report is not None else None
        results.append((job.name, report, outcome.error, outcome.kind))
    return results


def _stage_in_workers(
    jobs: list[Job],
    count: int,
    devices: int | None,
    root: Path,
    show_traceback: bool,
    done: Callable[[int], None],
) -> dict[str, Outcome]:
    """Stage the targets in ``count`` spawned workers, one module's targets per task.

    If a worker process dies (a crash in XLA, ``os._exit`` in user code), the targets
    it took down are staged again one by one in a fresh worker, so only the target
    that ends the process is reported as failed.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def pool(workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
            initargs=(devices, str(root), show_traceback),
        )

    def record(results: list[tuple[str, dict[str, Any] | None, str | None, str | None]]) -> None:
        for name, report, error, kind in results:
            outcomes[name] = Outcome(
                Report.from_dict(report) if report is not None else None, error, kind
            )

    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.group, []).append(job)
    outcomes: dict[str, Outcome] = {}
    lost: list[Job] = []
    with pool(min(count, len(groups))) as workers:
        futures = {workers.submit(_worker_stage, share): share for share in groups.values()}
        for future in as_completed(futures):
            try:
                record(future.result())
                done(len(futures[future]))
            except Exception:  # the worker process died; find out which target ended it
                lost += futures[future]
    while lost:
        with pool(1) as worker:
            while lost:
                job = lost.pop(0)
                try:
                    record(worker.submit(_worker_stage, [job]).result())
                except Exception as err:
                    message = f"the process staging it ended abruptly ({type(err).__name__})"
                    outcomes[job.name] = Outcome(None, message, "user-code")
                    break
                finally:
                    done(1)
    return outcomes


@contextlib.contextmanager
def _progress(total: int, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A transient progress bar on stderr (only when asked: stderr is a terminal)."""
    if not enabled or total == 0:
        yield lambda _: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("staging"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("staging", total=total)
        yield lambda n: bar.advance(task, n)


class _Judge:
    """Findings → :class:`TargetResult`: policy, relative paths, the baseline."""

    def __init__(self, root: Path) -> None:
        self.prefixes = sorted(
            {f"{root}{os.sep}", f"{root.resolve()}{os.sep}"}, key=len, reverse=True
        )
        self.root = root

    def text(self, value: str | None) -> str | None:
        if value is None:
            return None
        for prefix in self.prefixes:
            value = value.replace(prefix, "")
        return value

    def path(self, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return Path(value).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return value

    def result(self, planned: Planned, outcome: Outcome | None) -> TargetResult:
        if planned.error is not None:
            return TargetResult(
                planned.name,
                planned.file,
                planned.line,
                error=self.text(planned.error),
                error_kind=planned.error_kind,
            )
        assert outcome is not None
        report = outcome.report
        if report is None:
            return TargetResult(
                planned.name,
                planned.file,
                planned.line,
                error=self.text(outcome.error),
                error_kind=outcome.kind,
            )
        policy = planned.policy
        findings = tuple(
            LintFinding(
                code=f.code,
                severity=policy.severity_of(f.code, f.severity),
                message=self.text(f.message) or "",
                path=f.path,
                file=self.path(f.file) or planned.file,
                line=f.line or planned.line,
            )
            for f in report.findings
            if policy.enabled(f.code)
        )
        return TargetResult(
            name=planned.name,
            file=self.path(report.file) or planned.file,
            line=report.line or planned.line,
            function=self.text(report.function),
            reached=report.reached,
            findings=findings,
        )


def _apply_baseline(
    targets: list[TargetResult], planned: dict[str, Planned], baseline: Counter[Key]
) -> tuple[list[TargetResult], list[GoneEntry]]:
    remaining = Counter(baseline)
    judged = []
    for target in targets:
        findings = []
        for finding in target.findings:
            key = make_key(target.name, finding.code, finding.path)
            seen = remaining[key] > 0
            if seen:
                remaining[key] -= 1
            findings.append(replace(finding, baselined=seen))
        judged.append(replace(target, findings=tuple(findings)))
    ran = {t.name for t in targets if not t.failed}
    gone = [
        GoneEntry(name, code, path or None, count)
        for (name, code, path), count in sorted(remaining.items())
        if count > 0 and name in ran and planned[name].policy.enabled(code)
    ]
    return judged, gone


def _rules(policy: Policy) -> tuple[RuleInfo, ...]:
    return tuple(
        RuleInfo(
            rule.code, policy.severity_of(rule.code, rule.severity), rule.summary, rule.explanation
        )
        for rule in RULES
    )


def load(request: LintRequest) -> Config:
    """The configuration asked for, found, or an empty one rooted at the working folder."""
    path = request.config or find_config(Path.cwd())
    if request.config is not None and not request.config.is_file():
        raise UsageError(f"no such configuration file: {request.config}")
    if path is None:
        return Config(path=None, root=Path.cwd().resolve())
    return load_config(path)


def run_lint(request: LintRequest) -> LintResult:
    """Plan, stage, judge; with ``write_baseline``, record every finding as accepted."""
    config = load(request)
    root = config.root
    if str(root) not in sys.path:  # module targets (pkg.module:function) resolve from the root
        sys.path.insert(0, str(root))
    planned = _Planner(config, request).plan()
    if not planned:
        where = " or ".join(request.paths) if request.paths else "the configuration or " + str(root)
        raise UsageError(
            f"no targets: nothing in {where} declares {DECLARATION}; list targets "
            "in jxinspect.yaml or give a folder of modules that declare them"
        )
    baseline_path = request.baseline or (root / (config.baseline or DEFAULT_BASELINE))
    judge = _Judge(root)
    baseline_name = judge.path(str(baseline_path))
    baseline: Counter[Key] = Counter()
    if baseline_path.is_file():
        baseline = read_baseline(baseline_path, baseline_name or str(baseline_path))
    elif request.baseline is not None and not request.write_baseline:
        raise UsageError(f"no such baseline: {request.baseline} (create it with --write-baseline)")

    jobs = [p.job for p in planned if p.job is not None]
    devices = devices_needed(jobs)
    if devices is not None:
        from jxinspect.tracer.devices import check_count

        check_count(None, devices, "a target's `devices` or concrete `mesh`")  # not per worker
    outcomes: dict[str, Outcome] = {}
    with _progress(len(jobs), request.progress) as done:
        if request.jobs > 1 and len(jobs) > 1:
            outcomes = _stage_in_workers(jobs, request.jobs, devices, root, request.traceback, done)
        else:
            prepare(devices, root)
            for job in jobs:
                outcomes[job.name] = stage(job, request.traceback)
                done(1)

    targets = [judge.result(p, outcomes.get(p.name)) for p in planned]
    by_name = {p.name: p for p in planned}
    if request.write_baseline:
        counts: Counter[Key] = Counter(
            {
                key: n
                for key, n in baseline.items()
                if key[0] not in {t.name for t in targets if not t.failed}
            }
        )
        for target in targets:
            for finding in target.findings:
                counts[make_key(target.name, finding.code, finding.path)] += 1
        try:
            baseline_path.write_text(render_baseline(counts), encoding="utf-8")
        except OSError as err:
            raise UsageError(f"cannot write the baseline {baseline_name}: {err.strerror}") from None
        baseline = counts
    judged, gone = _apply_baseline(targets, by_name, baseline)
    fail_on = request.fail_on or config.fail_on or "error"
    return LintResult(
        targets=tuple(judged),
        rules=_rules(config.policy),
        fail_on=fail_on,
        gone=tuple(gone),
        baseline=baseline_name if baseline_path.is_file() else None,
        baseline_size=sum(baseline.values()),
        config=judge.path(str(config.path)) if config.path else None,
        version=__version__,
    )
