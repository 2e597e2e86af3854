"""The two sides of ``diff-debug``: what each input is, which targets pair up, and their
reports, staged in one process.

An input is a ``.py`` file or module (every function its ``JXINSPECT`` declares, or
those named with ``--function``), a ``file.py:function`` / ``module:function`` target,
a saved JSON report (``jxinspect lower --format json``, or one recorded function's
folder), StableHLO text (``.mlir``), or a record folder (``jxinspect record``; compared
with another, function by function).
Everything that can be checked without JAX is checked first (files, JSON, pairing);
then the simulated device count both sides need is set, once, before either is staged.
"""

from __future__ import annotations

import functools
from collections import Counter, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, TypeAlias

from jxinspect.core import artifacts
from jxinspect.core.diff import TargetDiff
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.exhaustive import assert_never
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Report
from jxinspect.core.recording import Entry, RunGuard
from jxinspect.core.units import source_parts
from jxinspect.project.config import Config, Policy
from jxinspect.project.options import TargetOptions
from jxinspect.project.resolve import Resolved, declared_functions, resolve
from jxinspect.project.targets import DECLARATION, Target, load_module, parse_target
from jxinspect.record.folder import (
    KINDS_HELP,
    REPORT,
    is_record,
    is_record_folder,
    read_index,
    read_report,
)
from jxinspect.record.processes import is_multi_process

SourceKind = Literal["python", "target", "json", "mlir", "record"]
"""The kind of an input, as its text and file tell (:func:`open_source` reads it)."""


@dataclass(frozen=True)
class PythonSource:
    """A ``.py`` file or module: every function its ``JXINSPECT`` declares, or those
    named with ``--function``."""

    text: str
    """As given on the command line."""
    target: Target
    functions: tuple[str, ...]
    """The functions to stage."""

    def target_text(self, function: str | None) -> str:
        """``file.py:function`` to stage (``function``: one of :attr:`functions`)."""
        assert function is not None, "a .py side pairs by function name"
        return f"{self.target.module}:{function}"


@dataclass(frozen=True)
class TargetSource:
    """A ``file.py:function`` or ``module:function`` target."""

    text: str
    """As given on the command line; the target to stage."""
    target: Target

    @property
    def functions(self) -> tuple[str | None, ...]:
        return (self.target.attribute,)

    def target_text(self, function: str | None) -> str:
        """The target to stage: the one given, whatever the pair calls its function."""
        return self.text


@dataclass(frozen=True)
class JsonSource:
    """A saved JSON report (``lower --format json``, or one recorded function's folder)."""

    text: str
    """As given on the command line."""
    report: Report

    @property
    def functions(self) -> tuple[str, ...]:
        """The report's function: its target's name after ``:``."""
        return (self.report.target.rpartition(":")[2] or self.report.target,)


@dataclass(frozen=True)
class MlirSource:
    """StableHLO text: one program whose function is unnamed."""

    text: str
    """As given on the command line."""
    mlir_text: str

    @property
    def functions(self) -> tuple[None]:
        return (None,)


@dataclass(frozen=True)
class RecordSource:
    """A record folder (``jxinspect record``), compared with another function by function."""

    text: str
    """As given on the command line."""
    folder: Path
    entries: tuple[Entry, ...]
    """Its recorded functions."""
    complete: bool
    """The recorded run ended by itself with exit 0."""
    environment: dict[str, str] | None = None
    """Its run's cache-key environment (the index's ``cache_key_environment``)."""
    guard: RunGuard | None = None
    """What the guard checked in its process (``None``: the run was not guarded)."""

    @property
    def functions(self) -> tuple[str, ...]:
        """The recorded functions' folders."""
        return tuple(e.folder for e in self.entries)

    def entry(self, function: str | None) -> Entry:
        """The recorded function whose folder is ``function``."""
        return self._by_folder[function]

    @functools.cached_property
    def _by_folder(self) -> dict[str | None, Entry]:
        found: dict[str | None, Entry] = {}
        for entry in self.entries:
            found.setdefault(entry.folder, entry)
        return found


Program: TypeAlias = PythonSource | TargetSource | JsonSource | MlirSource
"""An input that holds programs to pair by function (anything but a record folder)."""
Source: TypeAlias = Program | RecordSource
"""One input of ``diff-debug``, checked but not staged: one type per kind of input."""


@dataclass(frozen=True)
class Pair:
    """A target to compare: its label and the function on each side."""

    name: str
    before: str | None
    after: str | None


def _read(path: Path, text: str) -> str:
    """A program's text as the user named it, by the one reader of artifacts: a regular
    UTF-8 file of at most :data:`~jxinspect.core.artifacts.PROGRAM_LIMIT` (a FIFO or a
    device is one line, never read)."""
    if path.is_dir():
        raise UsageError(_folder_given(path, text))
    try:
        return artifacts.read_text(path, limit=artifacts.PROGRAM_LIMIT, shown=text)
    except FileNotFoundError:
        raise no_such_file(text) from None
    except UsageError as err:
        raise UsageError(f"{err}; {KINDS_HELP}") from None


def _folder_given(path: Path, text: str) -> str:
    """The error for a folder given where diff-debug takes one program or module."""
    try:
        example = next((p for p in sorted(path.iterdir()) if p.suffix == ".py"), None)
    except OSError:
        example = None
    shown = str(example) if example is not None else str(path / "model.py")
    return (
        f"{text} is a folder; diff-debug compares two programs: give a .py file in it "
        f"(e.g. {shown}), module:function, a .json report, a .mlir file or a record folder "
        f"(`jxinspect lint {text}` checks every module in a folder)"
    )


def _kind_of(text: str) -> SourceKind:
    path = Path(text)
    if is_multi_process(path):
        raise UsageError(
            f"{text} holds a recording of several processes: compare one process's folder "
            f"(e.g. {path / 'process-0'}); `jxinspect show {text}` compares the processes"
        )
    if is_record_folder(path):
        return "record"
    if is_record(path):  # one recorded function: its saved report
        return "json"
    suffix = path.suffix.lower()
    package = (
        all(part.isidentifier() for part in text.split(".")) and (path / "__init__.py").is_file()
    )
    if path.is_dir() and not package:  # a package given by its name is a module
        raise UsageError(_folder_given(path, text))
    if suffix == ".json":
        return "json"
    if suffix in (".mlir", ".stablehlo"):
        return "mlir"
    if suffix != ".py" and path.is_file():
        head = _read(path, text).lstrip()[:1]
        return "json" if head in ("{", "[") else "mlir"
    return "target" if parse_target(text).attribute else "python"


def _python_functions(target: Target, text: str, functions: tuple[str, ...]) -> tuple[str, ...]:
    if target.is_file and not Path(target.module).is_file():
        raise no_such_file(target.module)
    names = functions or declared_functions(target)
    if not names:
        raise UsageError(
            f"{text} declares no functions in {DECLARATION}; name one with "
            f"{text}:FUNCTION or --function NAME"
        )
    return names


def open_source(text: str, functions: tuple[str, ...] = ()) -> Source:
    """Check one input and read what can be read without JAX."""
    kind = _kind_of(text)
    if kind == "record":
        index = read_index(Path(text))
        guard = index.guard
        guarded = RunGuard(index.process, index.processes, guard) if guard else None
        return RecordSource(text, Path(text), tuple(index.functions), index.complete,
                            index.cache_key_environment, guarded)  # fmt: skip
    if kind == "json":  # a report, or a recorded function's (a file of its recording)
        path = Path(text)
        if path.is_dir():
            return JsonSource(text, read_report(str(path / REPORT), inside=path.parent))
        return JsonSource(text, read_report(text))
    if kind == "mlir":
        return MlirSource(text, _read(Path(text), text))
    target = parse_target(text)
    if kind == "target":
        if target.is_file and not Path(target.module).is_file():
            raise no_such_file(target.module)
        return TargetSource(text, target)
    if kind == "python":
        return PythonSource(text, target, _python_functions(target, text, functions))
    assert_never(kind)


@dataclass(frozen=True)
class Pairing:
    """The pairs to compare, and (record folders) the functions recorded on one side only."""

    pairs: list[Pair]
    only_before: tuple[str, ...] = ()
    only_after: tuple[str, ...] = ()


def _label(entry: Entry, names: Counter[str]) -> str:
    """``step``, or its folder and input types, ``step.2 (f32[8], f32[8])``, when the run
    recorded it with several input signatures (``names``: its side's entries by name)."""
    if names[entry.name] > 1:
        return f"{entry.folder} {entry.input_types}"
    return entry.name


def pair_records(before: Source, after: Source) -> Pairing:
    """Two record folders: each function by its identity, its name and where it is
    defined (:func:`_match_functions`), never by its signature: a function whose input
    types, donation or static arguments changed is compared. Of a function's programs,
    those of one signature and static arguments pair first, then the rest in the order
    the runs lowered them; what is left on a side is listed. Linear in the entries."""
    if not isinstance(before, RecordSource) or not isinstance(after, RecordSource):
        folder, other = (before, after) if isinstance(before, RecordSource) else (after, before)
        raise UsageError(
            f"{folder.text} is a record folder and {other.text} is not: compare two record "
            f"folders, or one recorded function's folder (e.g. {folder.text}/"
            f"{folder.functions[0] if folder.functions else 'NAME'}) with {other.text}"
        )
    names_before = Counter(e.name for e in before.entries)
    names_after = Counter(e.name for e in after.entries)
    mine, theirs = _by_definition(before.entries), _by_definition(after.entries)
    pairs: list[Pair] = []
    paired: set[int] = set()
    for was, now in _match_functions(list(mine), list(theirs)):
        for old, new in _match_programs(mine[was], theirs[now]):
            paired.update((id(old), id(new)))
            pairs.append(Pair(_label(old, names_before), old.folder, new.folder))
    return Pairing(
        pairs,
        tuple(_label(e, names_before) for e in before.entries if id(e) not in paired),
        tuple(_label(e, names_after) for e in after.entries if id(e) not in paired),
    )


Definition = tuple[str, str | None, int | None]
"""A recorded function's identity: its name, and the file and line that define it."""


def _by_definition(entries: tuple[Entry, ...]) -> dict[Definition, list[Entry]]:
    """A side's entries by the function that made them, in the order recorded."""
    found: dict[Definition, list[Entry]] = {}
    for entry in entries:
        _, file, line = source_parts(entry.source)
        found.setdefault((entry.name, file, line), []).append(entry)
    return found


def _match_functions(
    mine: list[Definition], theirs: list[Definition]
) -> list[tuple[Definition, Definition]]:
    """The functions of two sides that are one function: defined at the same file and
    line; else, of those left, the only one of its name in that file on each side (an
    edit moved its line); else the only one of its name on each side (another file)."""
    matched: list[tuple[Definition, Definition]] = []
    left = set(theirs)
    for definition in mine:
        if definition in left:
            left.remove(definition)
            matched.append((definition, definition))
    for key in (_in_file, _named):
        taken = {was for was, _ in matched}
        waiting = [d for d in mine if d not in taken]
        keys_mine = Counter(key(d) for d in waiting)
        keys_theirs = Counter(key(d) for d in left)
        by_key = {key(d): d for d in left if keys_theirs[key(d)] == 1}
        for definition in waiting:
            other = by_key.get(key(definition))
            if other is not None and keys_mine[key(definition)] == 1:
                left.remove(other)
                matched.append((definition, other))
    return matched


def _in_file(definition: Definition) -> tuple[str | int | None, ...]:
    return definition[:2]


def _named(definition: Definition) -> tuple[str | int | None, ...]:
    return definition[:1]


def _match_programs(mine: list[Entry], theirs: list[Entry]) -> list[tuple[Entry, Entry]]:
    """One function's programs on two sides: those of the same signature and static
    arguments, in order; then the rest, in order."""
    waiting: dict[tuple[str, str], deque[Entry]] = {}
    for entry in theirs:
        waiting.setdefault((entry.signature, entry.statics), deque()).append(entry)
    pairs: list[tuple[Entry, Entry]] = []
    left: list[Entry] = []
    for entry in mine:
        same = waiting.get((entry.signature, entry.statics))
        if same:
            pairs.append((entry, same.popleft()))
        else:
            left.append(entry)
    taken = {id(new) for _, new in pairs}
    pairs += zip(left, [e for e in theirs if id(e) not in taken], strict=False)
    return pairs


def pair_targets(before: Program, after: Program) -> list[Pair]:
    """Pair the targets: two single programs with each other; a single program with the
    function of its name (or the only one) in a ``.py`` file; two ``.py`` files by name."""
    old, new = before.functions, after.functions
    if not isinstance(before, PythonSource) and not isinstance(after, PythonSource):
        names = [n for n in (old[0], new[0]) if n]
        label = " → ".join(dict.fromkeys(names)) if names else "@main"
        return [Pair(label, old[0], new[0])]
    if not isinstance(before, PythonSource) or not isinstance(after, PythonSource):
        single, one, many = (
            (old[0], before, after)
            if not isinstance(before, PythonSource)
            else (new[0], after, before)
        )
        listed = ", ".join(str(n) for n in many.functions)
        if single is None and len(many.functions) == 1:
            return [Pair(str(many.functions[0]), old[0], new[0])]
        if single is None:
            raise UsageError(
                f"{one.text} holds one program but {many.text} declares "
                f"{len(many.functions)} functions ({listed}); pick one with --function NAME"
            )
        if single not in many.functions:
            raise UsageError(
                f"`{single}` ({one.text}) is not among the functions {many.text} declares "
                f"({listed}); pick one with --function NAME"
            )
        return [Pair(single, single, single)]
    only_before = [n for n in old if n not in new]
    only_after = [n for n in new if n not in old]
    if only_before or only_after:
        name, text = (only_before[0], before.text) if only_before else (only_after[0], after.text)
        raise UsageError(
            f"`{name}` is declared only in {text}: declare it on both sides, "
            "or compare one function with --function NAME"
        )
    return [Pair(str(n), n, n) for n in old]


def _needed_devices(resolved: Resolved) -> int:
    """Devices a target asks for (``devices``, or a concrete mesh's size); 0 for none."""
    if resolved.declared_at_import:
        resolved = resolved.imported(load_module(resolved.target))
    return resolved.devices_needed


@dataclass(frozen=True)
class Loaded:
    """Each pair's before and after report, and what only one side recorded."""

    reports: list[tuple[Pair, Report, Report]]
    only_before: tuple[str, ...] = ()
    only_after: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = ()
    """The record folders whose run did not end by itself with exit 0."""
    programs: tuple[ProgramComparison, ...] = ()
    """Two record folders: each pair's programs compared, in the order of ``reports``."""
    within: tuple[ProgramComparison, ...] = ()
    """Two record folders: lowerings of either run that made another program of the same
    function with the same inputs."""
    program_findings: tuple[Finding, ...] = ()
    """The comparison rules' findings on ``programs`` and ``within`` (JX403, JX404),
    judged under the policy the reports are."""
    memory_growth: float | None = None
    """``--compile``: compare the compiled cost, temporaries growing by more than this
    fraction failing (``budgets.memory_growth``); ``None``: not compared."""
    refused: str | None = None
    """The configuration the search found and did not use, in one line (``Config.refused``)."""
    time_growth: float | None = None
    """The same setting, for the measured step where both sides were measured (saved
    ``profile`` reports, or ``--profile``); ``None``: not compared."""
    guards: tuple[RunGuard | None, RunGuard | None] = (None, None)
    """Two record folders of guarded runs' processes: what each side's guard checked and
    found (``None``: that side was not guarded, or is no record folder)."""

    def targets(self) -> tuple[TargetDiff, ...]:
        """Each pair's diff, with its programs compared where both sides are recordings."""
        from jxinspect.compare.diff import diff_reports

        found = [
            diff_reports(old, new, pair.name, self.memory_growth, self.time_growth)
            for pair, old, new in self.reports
        ]
        if not self.programs:
            return tuple(found)
        return tuple(replace(t, program=c) for t, c in zip(found, self.programs, strict=True))


def load_sides(
    before_text: str,
    after_text: str,
    given: TargetOptions,
    functions: tuple[str, ...] = (),
    policy: Policy | None = None,
    compile: bool = False,
    memory: bool = False,
    profile: bool = False,
) -> Loaded:
    """Each pair's before and after report (both sides staged in this process), with the
    functions one record folder holds and the other does not. Every report is judged
    with ``policy`` (default: the rule settings of the project found from the working
    folder, as ``lint`` judges), saved ones again. With ``compile``, targets are compiled
    too and saved reports must hold compiled info: the diff compares the cost, under the
    policy's ``memory_growth`` (``memory``: and what is live at each side's peak). Where
    both sides hold a measured step (saved ``profile`` reports; ``profile``: targets
    compiled and measured, saved reports must hold one) it is compared under the same
    setting."""
    before, after = open_source(before_text, functions), open_source(after_text, functions)
    if functions and not any(isinstance(s, PythonSource) for s in (before, after)):
        raise UsageError(
            "--function picks functions from .py files or modules; "
            f"{before_text} and {after_text} already name theirs"
        )
    if isinstance(before, RecordSource) or isinstance(after, RecordSource):
        pairing = pair_records(before, after)
    else:
        pairing = Pairing(pair_targets(before, after))
    pairs = pairing.pairs
    from jxinspect.project.config import project_config

    config = project_config()  # read once: every side is resolved and judged under it
    rules = policy if policy is not None else config.policy
    staged = _resolved(before, after, pairs, given, config)
    compared, within = _programs(before, after, pairs)
    return Loaded(
        [
            (
                pair,
                _report(before, pair.before, staged, rules, compile, memory, profile),
                _report(after, pair.after, staged, rules, compile, memory, profile),
            )
            for pair in pairs
        ],
        pairing.only_before,
        pairing.only_after,
        tuple(s.text for s in (before, after) if isinstance(s, RecordSource) and not s.complete),
        compared,
        within,
        _judged_programs((*compared, *within), rules),
        memory_growth=rules.settings.memory_growth if compile else None,
        refused=config.refused,
        time_growth=rules.settings.memory_growth,
        guards=(_guard(before), _guard(after)),
    )


def _guard(source: Source) -> RunGuard | None:
    """What the guard checked in a record folder's run (``None``: not guarded, or no
    record folder)."""
    return source.guard if isinstance(source, RecordSource) else None


def _judged_programs(
    compared: tuple[ProgramComparison, ...], policy: Policy
) -> tuple[Finding, ...]:
    """The comparison rules' findings on the programs of two recordings, under ``policy``."""
    if not compared:
        return ()
    from jxinspect.record.judged import compared_findings

    return compared_findings(compared, policy)


def _resolved(
    before: Source, after: Source, pairs: list[Pair], given: TargetOptions, config: Config
) -> dict[str, Resolved]:
    """Each side to stage, resolved under ``config``, all with the most devices any needs."""
    staged = {
        text: resolve(text, given, config)
        for pair in pairs
        for source, function in ((before, pair.before), (after, pair.after))
        if isinstance(source, (PythonSource, TargetSource))
        for text in (source.target_text(function),)
    }
    if staged:
        devices = given.devices or max(_needed_devices(r) for r in staged.values())
        if devices > 1:
            given = replace(given, devices=devices)
            staged = {text: replace(r, given=given) for text, r in staged.items()}
    return staged


def _programs(
    before: Source, after: Source, pairs: list[Pair]
) -> tuple[tuple[ProgramComparison, ...], tuple[ProgramComparison, ...]]:
    """Two record folders: each pair's programs compared, and each run's own lowerings
    that made another program with the same inputs (none for other inputs)."""
    if not isinstance(before, RecordSource) or not isinstance(after, RecordSource):
        return (), ()
    from jxinspect.record import programs

    def side(source: RecordSource, function: str | None) -> programs.RecordedLowering:
        return programs.RecordedLowering(
            source.text, source.folder, source.entry(function), source.environment
        )

    compared = tuple(
        programs.compare_runs(side(before, pair.before), side(after, pair.after)) for pair in pairs
    )
    runs = {before.folder.resolve(): before, after.folder.resolve(): after}  # one run once
    within = tuple(
        found
        for source in runs.values()
        for found in programs.within_run(source.folder, source.text)
    )
    return compared, within


def _report(
    source: Source,
    function: str | None,
    staged: dict[str, Resolved],
    rules: Policy,
    compile: bool = False,
    memory: bool = False,
    profile: bool = False,
) -> Report:
    """``function``'s report from ``source``, judged with ``rules``: read back, or staged
    from its resolved target in ``staged`` (and compiled, with ``compile``, ``memory``:
    the peak too; a saved one must then hold compiled info; ``profile``: compiled and
    measured, a saved one must hold a measured step)."""
    from jxinspect.pipeline import inspect_mlir, inspect_target, judge

    match source:
        case JsonSource():
            report = _compiled(judge(source.report, rules), source.text, compile, NOT_COMPILED_JSON)
            return _measured(report, source.text, profile, NOT_MEASURED_JSON)
        case RecordSource():
            from jxinspect.record.judged import compiles_by_folder, judged_record

            entry, compiles = source.entry(function), compiles_by_folder(source.folder)
            report = judged_record(source.folder, entry, rules, compiles)
            report = _compiled(report, source.text, compile, NOT_COMPILED_RECORD)
            return _measured(report, source.text, profile, NOT_MEASURED_RECORD)
        case MlirSource():
            if compile or profile:
                raise UsageError(f"{source.text}: {NOT_COMPILED_MLIR}")
            return inspect_mlir(source.mlir_text, source.text, rules)
        case PythonSource() | TargetSource():
            text = source.target_text(function)
            if profile:
                from jxinspect.tracer.read.profile import Measure

                return inspect_target(staged[text], policy=rules, compile=True, memory=memory,
                                      measure=Measure())  # fmt: skip
            return inspect_target(staged[text], policy=rules, compile=compile, memory=memory)
        case _:
            assert_never(source)


NOT_COMPILED_JSON = (
    "holds no compiled info: save it with `jxinspect lower TARGET --compile --format json`"
)
NOT_COMPILED_RECORD = "holds no compiled info: record it with `jxinspect record --compile`"
NOT_COMPILED_MLIR = (
    "StableHLO text is not compiled by diff-debug --compile: give the .py file, the target "
    "or a report saved with `lower --compile --format json`"
)


NOT_MEASURED_JSON = "holds no measured step: save it with `jxinspect profile TARGET --format json`"
NOT_MEASURED_RECORD = "holds no measured step: record it with `jxinspect record --profile N`"


def _measured(report: Report, text: str, profile: bool, how: str) -> Report:
    """``report``; with ``profile``, refused (one line naming ``text``) where it holds no
    measured step."""
    if profile and report.profile is None:
        raise UsageError(f"{text}: {how}")
    return report


def _compiled(report: Report, text: str, compile: bool, how: str) -> Report:
    """``report``; with ``compile``, refused (one line naming ``text``) where it holds
    no compiled info."""
    if compile and report.compiled is None:
        raise UsageError(f"{text}: {how}")
    return report
