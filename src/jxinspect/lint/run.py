"""``jxinspect lint``: stage every target of a project, judge them, compare with a baseline.

1. **Plan** (no JAX): targets come from the configuration and from modules under the
   given paths that declare ``JXINSPECT`` (read from the source, nothing imported). Each
   gets its options (config entry over declaration over ``defaults``) and its policy
   (select/ignore/severity/budgets, per-target overrides over the global ones).
2. **Devices**: JAX fixes the CPU device count when its backend starts, so the most any
   target needs is simulated once in each worker, before any user module is imported.
3. **Stage**: never in this process. :mod:`jxinspect.lint.workers.supervisor` runs ``jobs`` worker
   processes (one with ``--jobs 1``) that send back their reports as the codec's JSON
   text, read back typed here. A target that
   fails to import, trace or build its inputs, exits, crashes or times out is reported
   as failed; the others still run, and a run with a failed target never exits 0.
4. **Judge**: each report once, here (:func:`jxinspect.pipeline.judge`: the rules with
   the target's settings and facts, then the policy's select/ignore/severities; workers
   and the cache hold reports unjudged), then the baseline (keyed by target, code and
   leaf path, never by line).
"""

from __future__ import annotations

import ast
import contextlib
import fnmatch
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from jxinspect._version import __version__
from jxinspect.core import progress
from jxinspect.core.errors import JxError, UsageError, error_kind
from jxinspect.core.files import write_output
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.lint import GoneEntry, LintFinding, LintResult, ShardInfo, TargetResult
from jxinspect.core.model import AcceptedCost
from jxinspect.core.processes import ProcessesSummary
from jxinspect.core.recompiles import Compile
from jxinspect.core.recording import Index
from jxinspect.core.vocabulary import USAGE, USER_CODE, ErrorKind
from jxinspect.lint import history
from jxinspect.lint.baseline import Accepted, Key, make_key, read_baseline, render_baseline
from jxinspect.lint.cache import Cache
from jxinspect.lint.options import LintRequest, RunOptions, run_options, target_policy
from jxinspect.lint.shards import partition, shard_info
from jxinspect.lint.workers.protocol import NOT_STAGED, Job, Outcome
from jxinspect.lint.workers.supervisor import (
    Interrupted,
    KeepWorkers,
    Supervisor,
)
from jxinspect.pipeline import judge as judge_report
from jxinspect.pipeline import needs as needs_staged
from jxinspect.project.config import (
    Config,
    Policy,
    PolicyOverride,
    TargetEntry,
    project_config,
)
from jxinspect.project.config_search import used
from jxinspect.project.declarations import (
    Declaration,
    definition_line,
    parse_module,
    static_declaration,
)
from jxinspect.project.resolve import resolve
from jxinspect.project.rule_table import rule_infos
from jxinspect.project.sourcefile import search_text
from jxinspect.project.targets import DECLARATION, parse_target
from jxinspect.record.folder import Entry, read_index, read_record, target_name
from jxinspect.record.judged import compiles_by_folder
from jxinspect.record.processes import is_multi_process, process_folders
from jxinspect.record.programs import processes_summary

T = TypeVar("T")
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}


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
    error_kind: ErrorKind = USAGE
    compiles: tuple[Compile, ...] = ()
    """A recorded function's compiles (JX401, JX402): facts its report is judged with."""
    comparisons: tuple[ProgramComparison, ...] = ()
    """A recorded function's lowerings compared across the run's processes (JX403)."""


def _once(store: dict[Path, T | JxError], key: Path, make: Callable[[Path], T]) -> T:
    """``make(key)``, or the same error again, computed once per key."""
    if key not in store:
        try:
            store[key] = make(key)
        except JxError as err:
            store[key] = err
    found = store[key]
    if isinstance(found, JxError):
        raise found
    return found


class _Planner:
    """Turns the configuration and the paths into :class:`Planned` targets."""

    def __init__(self, config: Config, request: LintRequest) -> None:
        self.config, self.request, self.root = config, request, config.root
        self.trees: dict[Path, ast.Module | JxError] = {}
        self.declarations: dict[Path, Declaration | None | JxError] = {}
        self.real: dict[Path, Path] = {}

    def resolved(self, path: Path) -> Path:
        """``path.resolve()``, once per path (planning asks for each several times)."""
        if path not in self.real:
            self.real[path] = path.resolve()
        return self.real[path]

    def display(self, path: Path) -> str:
        try:
            return self.resolved(path).relative_to(self.root).as_posix()
        except ValueError:
            return str(self.resolved(path))

    def tree(self, path: Path) -> ast.Module:
        """The module's syntax tree, parsed once."""
        return _once(self.trees, self.resolved(path), parse_module)

    def declaration(self, path: Path) -> Declaration | None:
        """The module's declaration, read once from its source (the resolver's reader)."""
        return _once(self.declarations, self.resolved(path),
                     lambda key: static_declaration(key, self.tree(key)))  # fmt: skip

    def policy(self, entry: TargetEntry | None, declared: PolicyOverride | None = None) -> Policy:
        """The configuration's policy, under the declaration's per-target keys, under
        the configuration entry's, under the command line's."""
        policy = declared.apply(self.config.policy) if declared else self.config.policy
        policy = entry.override.apply(policy) if entry else policy
        return target_policy(policy, self.request)

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
                raise UsageError(
                    f"no such file or folder: {start}; give a folder of modules that declare "
                    "JXINSPECT, or a file"
                )
            files = [start] if start.is_file() else self._walk(start)
            for path in files:
                resolved = self.resolved(path)
                if resolved in seen or any(
                    fnmatch.fnmatch(self.display(path), pattern) for pattern in config.exclude
                ):
                    continue
                seen.add(resolved)
                text = search_text(path)  # as Python decodes it; planning says what is wrong
                if text is not None and DECLARATION in text:
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
                    error_kind=USAGE,
                )
            ]
        try:
            source = target.source_path
        except Exception as err:  # importing a parent package can fail in any way
            error = f"cannot find module {target.module}: {type(err).__name__}: {err}"
            return [Planned(target.text, policy, None, None, error=error, error_kind=USER_CODE)]
        return [self.planned(target.text, target.text, source, target.attribute, entry)]

    def from_file(
        self, path: Path, attribute: str | None, entry: TargetEntry | None
    ) -> list[Planned]:
        name = self.display(path)
        policy = self.policy(entry)
        if attribute is None:
            try:
                declaration = self.declaration(path)
            except JxError as err:
                return [
                    Planned(name, policy, name, None, error=str(err), error_kind=error_kind(err))
                ]
            attributes = list(declaration.functions if declaration else ())
            if not attributes and entry is not None:
                error = f"{name} declares no {DECLARATION}; name the function: {name}:FUNCTION"
                return [Planned(name, policy, name, entry.line, error=error)]
        else:
            attributes = [attribute]
        text = str(self.resolved(path))
        return [self.planned(f"{name}:{a}", f"{text}:{a}", path, a, entry) for a in attributes]

    def planned(
        self, name: str, text: str, source: Path | None, attribute: str, entry: TargetEntry | None
    ) -> Planned:
        policy = self.policy(entry)
        file = self.display(source) if source else None
        line = None
        try:
            if source is not None and source.is_file():
                line = definition_line(self.tree(source), attribute)
            resolved = resolve(text, config=self.config, read=self.declaration)
        except JxError as err:
            return Planned(name, policy, file, line, error=str(err), error_kind=error_kind(err))
        policy = self.policy(entry, resolved.declared_policy)
        needed = needs_staged(policy, topology=resolved.options.topology is not None)
        compile = "compiled" in needed
        # the peak where a rule needs it, or where a history keeps the compiled cost
        memory = compile and ("peak" in needed or self.request.history is not None)
        job = Job(name, resolved, compile, str(source or text), memory, "origins" in needed)
        return Planned(name, policy, file, line, job=job)


def devices_needed(jobs: list[Job]) -> int | None:
    """The most CPU devices any target asks for (``devices``, or a concrete mesh's size);
    a target with a bad mesh says so when it is staged."""
    most = None
    for job in jobs:
        with contextlib.suppress(UsageError):
            count = job.resolved.devices_needed
            if count and (most is None or count > most):
                most = count
    return most


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

    def result(
        self, planned: Planned, outcome: Outcome | None, accepted: AcceptedCost | None = None
    ) -> TargetResult:
        """The target's findings: its report judged once, under its policy, with the facts
        its plan holds (a recording's compiles and comparisons) and ``accepted``, the
        baseline's cost of it, where it was compiled (JX304, JX305)."""
        if planned.error is not None:
            return TargetResult(
                planned.name,
                planned.file,
                planned.line,
                error=self.text(planned.error),
                error_kind=planned.error_kind,
            )
        assert outcome is not None
        if outcome.report is None:
            return TargetResult(
                planned.name,
                planned.file,
                planned.line,
                error=self.text(outcome.error),
                error_kind=outcome.kind,
                seconds=outcome.seconds,
            )
        report = judge_report(
            outcome.report,
            planned.policy,
            compiles=planned.compiles,
            accepted_cost=accepted if outcome.report.compiled is not None else None,
            comparisons=planned.comparisons,
        )
        findings = tuple(
            LintFinding.of(
                f,
                message=self.text(f.message) or "",
                file=self.path(f.file) or planned.file,
                line=f.line or planned.line,
            )
            for f in report.findings
        )
        return TargetResult(
            target=planned.name,
            file=self.path(report.file) or planned.file,
            line=report.line or planned.line,
            function=self.text(report.function),
            reached=report.reached,
            findings=findings,
            cached=outcome.cached,
            seconds=outcome.seconds,
        )


def _apply_baseline(
    targets: list[TargetResult], planned: dict[str, Planned], baseline: Counter[Key]
) -> tuple[list[TargetResult], list[GoneEntry]]:
    remaining = Counter(baseline)
    judged = []
    for target in targets:
        findings = []
        for finding in target.findings:
            key = make_key(target.target, finding.code, finding.path)
            seen = remaining[key] > 0
            if seen:
                remaining[key] -= 1
            findings.append(replace(finding, baselined=seen))
        judged.append(replace(target, findings=tuple(findings)))
    ran = {t.target for t in targets if not t.failed}
    gone = [
        GoneEntry(name, code, path or None, count)
        for (name, code, path), count in sorted(remaining.items())
        if count > 0 and name in ran and planned[name].policy.enabled(code)
    ]
    return judged, gone


def load(request: LintRequest) -> Config:
    """The configuration asked for, found, or an empty one rooted at the working folder."""
    return project_config(request.config)


def run_lint(request: LintRequest) -> LintResult:
    """Plan, stage, judge; with ``write_baseline``, record every finding as accepted."""
    config = load(request)
    options = run_options(request, config)
    if request.records is not None:
        return _run_records(request, config, options, request.records)
    from jxinspect.tracer import seam

    seam.require_supported()  # once, before any worker: not once per target
    root = config.root
    supervisor = Supervisor(
        request.jobs, root, options.timeout, request.traceback, _keep_workers(options, root)
    )
    supervisor.prestart()
    if str(root) not in sys.path:  # module targets (pkg.module:function) resolve from the root
        sys.path.insert(0, str(root))
    try:
        return _run(request, config, options, supervisor)
    finally:
        supervisor.close()


def _keep_workers(options: RunOptions, root: Path) -> KeepWorkers | None:
    """Where kept workers of this environment wait, and for how long; ``None`` when off
    (or where they cannot be kept: off Linux, or the cache folder cannot be made, or it
    or its ``workers`` folder is a link)."""
    if not options.keep_workers:
        return None
    from jxinspect.lint.cache import environment, prepare_folder, real_subfolder
    from jxinspect.lint.workers import kept as kept_workers

    if not kept_workers.available():
        return None
    try:
        folder = real_subfolder(prepare_folder(root), "workers")  # never through a link
    except OSError:
        return None
    idle = options.idle if options.idle is not None else kept_workers.DEFAULT_IDLE_S
    return KeepWorkers(folder / kept_workers.environment_key(environment()), idle)


@dataclass(frozen=True)
class _Baseline:
    path: Path
    name: str | None
    accepted: Accepted


def _read_baseline(request: LintRequest, options: RunOptions, judge: _Judge) -> _Baseline:
    path = options.baseline
    name = judge.path(str(path))
    accepted = Accepted()
    if path.exists():  # a FIFO or a device too: refused in one line, never written over
        accepted = read_baseline(path, name or str(path), replacing=request.write_baseline)
    elif request.baseline is not None and not request.write_baseline:
        raise UsageError(f"no such baseline: {request.baseline} (create it with --write-baseline)")
    return _Baseline(path, name, accepted)


def _record_names(entries: list[Entry]) -> list[str]:
    """Each recorded function's lint target name: ``train.py:step``, with its input types,
    ``train.py:step (f32[8])``, when the run recorded the name with several."""
    names = [target_name(e) for e in entries]
    return [
        f"{name} {e.input_types}" if names.count(name) > 1 else name
        for name, e in zip(names, entries)
    ]


def _run_records(
    request: LintRequest, config: Config, options: RunOptions, folder: Path
) -> LintResult:
    """Judge every function of a record folder: its saved report, the rules run again
    with the configured settings; nothing staged. A recording of several processes is
    judged process by process (``process-K/`` before each target) and across them (JX403,
    on the function's target in the first process of the largest group). A run that did
    not complete is a failed target (the functions it had not lowered yet were never
    judged)."""
    given = [f for f, on in (("paths", request.paths), ("--shard", request.shard)) if on]
    if given:
        raise UsageError(f"--records judges a record folder; drop {' and '.join(given)}")
    judge = _Judge(config.root)
    baseline = _read_baseline(request, options, judge)
    judged = _Recorded(_Planner(config, request).policy(None))
    if is_multi_process(folder):
        for process, where in process_folders(folder):
            judged.folder(where, f"process-{process}/")
        judged.across(processes_summary(folder, judged.policy))
    else:
        judged.folder(folder, "")
    if not judged.planned and not judged.failed:
        raise UsageError(f"no targets: the record folder {folder} holds no recorded function")
    return _finish(request, config, options, judge, baseline, judged.planned, judged.outcomes,
                   failed=judged.failed)  # fmt: skip


@dataclass
class _Recorded:
    """The targets of a recording, each with the facts its report is judged with (its
    compiles; the comparison of its lowerings across processes), as they are read."""

    policy: Policy
    planned: list[Planned] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failed: list[TargetResult] = field(default_factory=list)
    names: dict[tuple[str, str | None, str], str] = field(default_factory=dict)
    """Each target's name by its function, source and prefix (its process)."""

    def folder(self, folder: Path, prefix: str) -> None:
        """Read one process's folder (``prefix``: ``process-K/``, or none)."""
        index = read_index(folder)
        compiles = compiles_by_folder(folder)
        for name, entry in zip(_record_names(index.functions), index.functions):
            facts = tuple(compiles.get(entry.folder, ()))
            self.planned.append(Planned(prefix + name, self.policy, None, None, compiles=facts))
            self.outcomes[prefix + name] = Outcome(read_record(folder, entry))
            self.names.setdefault((entry.name, entry.source, prefix), prefix + name)
        if not index.complete:
            self.failed.append(_incomplete(folder, index))

    def across(self, summary: ProcessesSummary) -> None:
        """Give each function's JX403 to its target in the first process of the largest
        group of processes that agree."""
        at = {planned.name: i for i, planned in enumerate(self.planned)}
        for function in summary.functions:
            if function.comparison is None or not function.programs:
                continue
            first = f"process-{function.programs[0].processes[0]}/"
            name = self.names.get((function.function, function.source, first))
            if name is not None:
                planned = self.planned[at[name]]
                comparisons = (*planned.comparisons, function.comparison)
                self.planned[at[name]] = replace(planned, comparisons=comparisons)


def _incomplete(folder: Path, index: Index) -> TargetResult:
    """The failed target of a recorded run that did not complete."""
    ended = (
        "is still running or was killed"
        if index.exit_code is None
        else f"ended with signal {-index.exit_code}"
        if index.exit_code < 0
        else f"exited with code {index.exit_code}"
    )
    return TargetResult(
        str(folder),
        None,
        None,
        error=f"the recorded run did not complete (it {ended}): the functions it "
        "had not lowered yet were not judged; record a run that completes",
        error_kind=USER_CODE,
    )


def _run(
    request: LintRequest, config: Config, options: RunOptions, supervisor: Supervisor
) -> LintResult:
    root = config.root
    planner = _Planner(config, request)
    planned = _planned(planner, request, root)
    judge = _Judge(root)
    baseline = _read_baseline(request, options, judge)
    devices = _devices(planned)
    cache = Cache(root, options.cache, planner.tree)  # modules the planner read are not read again
    planned, shard = _this_shard(planned, request, cache)
    jobs = [p.job for p in planned if p.job is not None]
    keys = {job.name: cache.key(job, devices) for job in jobs} if cache.folder else {}
    outcomes: dict[str, Outcome] = {}
    # targets with no entry go to the workers first; the stored entries are read and
    # checked while they stage (a large model's report takes milliseconds to check)
    stored: list[Job] = []
    stale: list[Job] = []
    for job in jobs:
        (stored if keys and cache.has(keys[job.name]) else stale).append(job)
    interrupted = False
    progress.more(len(stale))

    def read_stored() -> list[Job]:
        untrusted = []
        for job in stored:
            found = cache.get(keys[job.name])
            if found is not None:
                outcomes[job.name] = Outcome(found, cached=True)
            else:
                untrusted.append(job)
        progress.more(len(untrusted))
        stale.extend(untrusted)
        return untrusted

    try:
        outcomes.update(supervisor.run(stale, devices, progress.done, read_stored))
    except Interrupted as stop:
        outcomes.update(stop.outcomes)
        interrupted = True
    for job in jobs:  # interrupted before its entry was read: it did not report
        if job.name not in outcomes:
            outcomes[job.name] = NOT_STAGED
    _store(cache, keys, stale, outcomes)
    return _finish(
        request,
        config,
        options,
        judge,
        baseline,
        planned,
        outcomes,
        interrupted=interrupted,
        shard=shard,
        notes=(*([config.refused] if config.refused else []), *cache.ignored),
    )


def _planned(planner: _Planner, request: LintRequest, root: Path) -> list[Planned]:
    """Every target of the run, or one line saying there are none."""
    planned = planner.plan()
    if not planned:
        where = " or ".join(request.paths) if request.paths else "the configuration or " + str(root)
        raise UsageError(
            f"no targets: nothing in {where} declares {DECLARATION}; list targets "
            "in jxinspect.yaml or give a folder of modules that declare them"
        )
    return planned


def _devices(planned: list[Planned]) -> int | None:
    """The CPU devices the run simulates, refused once here rather than by every worker.

    Every part of a sharded run (and an unsharded one) simulates the same devices: the
    reports, and the cache keys, do not depend on how the run was split."""
    devices = devices_needed([p.job for p in planned if p.job is not None])
    if devices is not None:
        from jxinspect.tracer.devices import check_count

        check_count(None, devices, "a target's `devices` or concrete `mesh`")
    return devices


def _this_shard(
    planned: list[Planned], request: LintRequest, cache: Cache
) -> tuple[list[Planned], ShardInfo | None]:
    """The targets of this part of a sharded run (``--shard K/N``), and what it is."""
    if request.shard is None:
        return planned, None
    names = [p.name for p in planned]
    chosen = set(partition(names, cache.costs(), request.shard.count)[request.shard.index - 1])
    return [p for p in planned if p.name in chosen], shard_info(request.shard, names)


def _store(
    cache: Cache, keys: dict[str, str], stale: list[Job], outcomes: dict[str, Outcome]
) -> None:
    """Keep the reports the workers staged, and how long each took."""
    for job in stale:
        outcome = outcomes.get(job.name)
        if keys and outcome is not None and outcome.text is not None:
            cache.put(keys[job.name], job.name, outcome.text, outcome.seconds or 0.0)
    cache.record_costs(
        {n: o.seconds for n, o in outcomes.items() if o.seconds is not None and not o.cached}
    )


def _costs(outcomes: dict[str, Outcome]) -> dict[str, AcceptedCost]:
    """The compiled cost of every target of this run that was compiled, by target."""
    return {
        name: AcceptedCost.of(name, outcome.report.compiled)
        for name, outcome in outcomes.items()
        if outcome.report is not None and outcome.report.compiled is not None
    }


def _finish(
    request: LintRequest,
    config: Config,
    options: RunOptions,
    judge: _Judge,
    read: _Baseline,
    planned: list[Planned],
    outcomes: dict[str, Outcome],
    failed: list[TargetResult] | None = None,
    interrupted: bool = False,
    shard: ShardInfo | None = None,
    notes: tuple[str, ...] = (),
) -> LintResult:
    """Judge the outcomes (against the baseline's costs: those of this run when it writes
    the baseline); write and apply the baseline."""
    baseline_path, baseline_name, accepted = read.path, read.name, read.accepted
    costs = accepted.costs
    if request.write_baseline:  # the costs of the targets staged now replace theirs
        staged = {name for name, outcome in outcomes.items() if outcome.report is not None}
        costs = {**{t: c for t, c in costs.items() if t not in staged}, **_costs(outcomes)}
    targets = [judge.result(p, outcomes.get(p.name), costs.get(p.name)) for p in planned]
    targets += failed or []
    by_name = {p.name: p for p in planned}
    baseline = accepted.counts
    if request.write_baseline:
        ran = {t.target for t in targets if not t.failed}
        counts: Counter[Key] = Counter({key: n for key, n in baseline.items() if key[0] not in ran})
        for target in targets:
            for finding in target.findings:
                counts[make_key(target.target, finding.code, finding.path)] += 1
        try:
            write_output(baseline_path, render_baseline(Accepted(counts, costs)))
        except OSError as err:
            raise UsageError(f"cannot write the baseline {baseline_name}: {err.strerror}") from None
        baseline = counts
    judged, gone = _apply_baseline(targets, by_name, baseline)
    if request.history is not None:
        history.record_run(request.history, config.root, outcomes)
    return LintResult(
        targets=tuple(judged),
        rules=rule_infos(config.policy),
        fail_on=options.fail_on,
        gone=tuple(gone),
        baseline=baseline_name if baseline_path.is_file() else None,
        baseline_size=sum(baseline.values()),
        baseline_costs=len(costs),
        config=used(config.path) if config.path else None,
        version=__version__,
        interrupted=interrupted,
        shard=shard,
        notes=notes,
    )
