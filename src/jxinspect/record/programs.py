"""Two lowerings of one function compared by their programs' identities, and the first
real difference where they differ: an argument whose type or sharding differs, a static
value, or else the first operation that differs, with its source line on each side.

Used across the processes of one recording (``show FOLDER``: JX403), across two
recordings (``diff-debug runA runB``) and within one (JX404). A recording is read one
process folder at a time; the reports and module texts of two lowerings are read only
where their identities differ.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jxinspect.core import artifacts
from jxinspect.core.dtypes import short_name
from jxinspect.core.identity import Across, Difference, ProgramComparison, ProgramIdentity
from jxinspect.core.model import Finding
from jxinspect.core.processes import (
    FunctionAcross,
    ProcessesSummary,
    ProcessGroup,
    ProcessRun,
)
from jxinspect.core.recompiles import CompileOptionsSeen
from jxinspect.core.units import source_parts
from jxinspect.pipeline import judge_comparisons
from jxinspect.project.config import Policy
from jxinspect.record import identity
from jxinspect.record.folder import (
    COMPILES,
    PROGRAM,
    Entry,
    read_compiles,
    read_index,
    read_record,
)
from jxinspect.record.processes import process_folders


@dataclass(frozen=True)
class RecordedLowering:
    """One recorded lowering of a function, and which side it is."""

    label: str
    """``process 3``, or a record folder as given."""
    folder: Path
    """The record folder that holds it."""
    entry: Entry
    environment: dict[str, str] | None = None
    """Its run's cache-key environment (the index's ``cache_key_environment``)."""


def identity_of(entry: Entry) -> ProgramIdentity:
    return ProgramIdentity(entry.identity, entry.names_digest, entry.source_digest or None)


def compare(before: RecordedLowering, after: RecordedLowering, across: Across) -> ProgramComparison:
    """The two lowerings' identities and, where the programs differ, the first real
    difference; and the other parts of JAX's persistent-cache key that differ."""
    mine, theirs = identity_of(before.entry), identity_of(after.entry)
    found = None if mine.program == theirs.program else first_difference(before, after)
    _, file, line = source_parts(before.entry.source)
    keys = key_differences(*_key_parts(before, after))
    return ProgramComparison(
        before.entry.name, before.entry.source, across, before.label, after.label,
        mine, theirs, found, file, line, keys,
    )  # fmt: skip


def _key_parts(
    before: RecordedLowering, after: RecordedLowering
) -> tuple[dict[str, str] | None, dict[str, str] | None]:
    """Each side's cache-key parts besides the program: its run's environment and, where
    both recordings saw them, the compile options of its compile (named fields; their
    digest alone where nothing named differs: XLA flags set the debug options they hold)."""
    mine, theirs = before.environment, after.environment
    was, now = _options_of(before), _options_of(after)
    if mine is None or theirs is None or was is None or now is None:
        return mine, theirs
    mine, theirs = {**mine, **dict(was.fields)}, {**theirs, **dict(now.fields)}
    if was.digest != now.digest and mine == theirs:  # an XLA flag changes them too
        mine["compile options"] = f"{(was.digest or '?')[:12]} (a field not named here)"
        theirs["compile options"] = f"{(now.digest or '?')[:12]}"
    return mine, theirs


def _options_of(lowering: RecordedLowering) -> CompileOptionsSeen | None:
    """The compile options of the compile that made this lowering's program, as its run
    recorded them; ``None`` where it recorded none."""
    return _options_by_program(lowering.folder).get(lowering.entry.folder)


def _options_by_program(folder: Path) -> dict[str, CompileOptionsSeen]:
    """A record folder's compile options by the record of the program each compile made
    (its first compile's that has them), read once per version of its ``compiles.json``
    (every function of a recording compared reads the one table)."""
    try:
        stat = (folder / COMPILES).stat()
    except OSError:
        return {}
    return _options_as_of(folder, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _options_as_of(folder: Path, mtime_ns: int, size: int) -> dict[str, CompileOptionsSeen]:
    found: dict[str, CompileOptionsSeen] = {}
    for compile in read_compiles(folder)[0]:
        if compile.options is not None:
            found.setdefault(compile.folder, compile.options)
    return found


def key_differences(before: dict[str, str] | None, after: dict[str, str] | None) -> tuple[str, ...]:
    """Each part of the persistent-cache key (besides the program) that differs:
    ``XLA flags: --xla_a=1 added, --xla_b=2 gone``, ``jaxlib: 0.10.1 → 0.10.2``; none where
    either side was not read."""
    if before is None or after is None:
        return ()
    said = []
    for part in dict.fromkeys([*before, *after]):
        was, now = before.get(part, ""), after.get(part, "")
        if was == now:
            continue
        if part == "XLA flags":
            old, new = set(was.split()), set(now.split())
            changes = [f"{f} added" for f in sorted(new - old)]
            changes += [f"{f} gone" for f in sorted(old - new)]
            said.append(f"{part}: {', '.join(changes)}")
        else:
            said.append(f"{part}: {was or '(none)'} → {now or '(none)'}")
    return tuple(said)


def first_difference(before: RecordedLowering, after: RecordedLowering) -> Difference | None:
    """The first argument path whose type or sharding differs, else the first static
    value, else the first operation of the programs."""
    return (
        _input_difference(before, after)
        or _static_difference(before.entry.statics, after.entry.statics)
        or _operation_difference(before, after)
    )


def _inputs(lowering: RecordedLowering) -> dict[str, tuple[str, str | None]]:
    """Each argument's type and sharding, by path."""
    report = read_record(lowering.folder, lowering.entry)
    return {
        leaf.path: (
            f"{short_name(leaf.dtype)}[{','.join(str(d) for d in leaf.shape)}]",
            leaf.sharding.readable if leaf.sharding is not None else None,
        )
        for leaf in report.inputs
    }


def _input_difference(before: RecordedLowering, after: RecordedLowering) -> Difference | None:
    return input_difference(_inputs(before), _inputs(after))


def input_difference(
    mine: dict[str, tuple[str, str | None]], theirs: dict[str, tuple[str, str | None]]
) -> Difference | None:
    """The first argument path whose type, or else sharding, differs between two
    lowerings' arguments (path → type and sharding)."""
    for path in [*mine, *(p for p in theirs if p not in mine)]:
        was, now = mine.get(path), theirs.get(path)
        if was is None or now is None:
            return Difference("input", path, was and was[0], now and now[0])
        if was[0] != now[0]:
            return Difference("input", path, was[0], now[0])
        if was[1] != now[1]:
            return Difference("input", path, f"sharding {was[1]}", f"sharding {now[1]}")
    return None


_STATIC = re.compile(r", (?=[A-Za-z_][A-Za-z0-9_]*=)")
"""Between two static arguments of an entry's ``statics``, ``k=True, mode='fast'``."""


def _statics(text: str) -> dict[str, str]:
    pairs = (item.partition("=") for item in _STATIC.split(text) if item)
    return {name: value for name, _, value in pairs}


def _static_difference(before: str, after: str) -> Difference | None:
    return static_difference(_statics(before), _statics(after))


def static_difference(mine: dict[str, str], theirs: dict[str, str]) -> Difference | None:
    """The first static argument whose value differs (name → ``repr``)."""
    for name in [*mine, *(n for n in theirs if n not in mine)]:
        if mine.get(name) != theirs.get(name):
            return Difference("static", name, mine.get(name), theirs.get(name))
    return None


def _operations(lowering: RecordedLowering) -> list[identity.Operation] | None:
    """The operations of a lowering's ``program.mlir``, read by the one artifact reader (a
    regular UTF-8 file inside the record folder, at most :data:`PROGRAM_LIMIT`: anything
    else is one line, exit 2); ``None`` for a recording made before modules were kept."""
    path = lowering.folder / lowering.entry.folder / PROGRAM
    try:
        text = artifacts.read_text(
            path, limit=artifacts.PROGRAM_LIMIT, inside=lowering.folder, shown=str(path)
        )
    except FileNotFoundError:
        return None
    return identity.operations(text)


def _operation_difference(before: RecordedLowering, after: RecordedLowering) -> Difference | None:
    mine, theirs = _operations(before), _operations(after)
    if mine is None or theirs is None:
        return None
    return identity.operation_difference(mine, theirs)


def _key(entry: Entry) -> str:
    return entry.source or entry.name


Programs = frozenset[str]


@dataclass
class _Read:
    """What the process folders say, read one at a time."""

    runs: list[ProcessRun]
    groups: dict[str, dict[Programs, tuple[tuple[str, ...], list[int]]]]
    """Each function's processes by the programs they lowered (and those programs in the
    order the first of them lowered them): one entry for processes that agree."""
    names: dict[str, tuple[str, str | None]]
    """Each function's name and source."""


def _read_processes(root: Path) -> _Read:
    read = _Read([], {}, {})
    for number, folder in process_folders(root):
        index = read_index(folder)
        read.runs.append(
            ProcessRun(number, folder.name, len(index.functions), index.exit_code, index.guard)
        )
        mine: dict[str, list[str]] = {}
        for entry in index.functions:
            key = sys.intern(_key(entry))
            mine.setdefault(key, []).append(entry.identity)
            read.names.setdefault(key, (entry.name, entry.source))
        for key, found in mine.items():
            groups = read.groups.setdefault(key, {})
            groups.setdefault(frozenset(found), (tuple(found), []))[1].append(number)
    return read


Wanted = tuple[int, str, str]
"""A lowering to read back: its process, its function's key and its program."""


def _sides(groups: tuple[ProcessGroup, ...], key: str) -> tuple[Wanted, Wanted] | None:
    """Where the processes lowered different programs of function ``key``: the first
    process of the largest group against the first of the next, by the first program of
    each that the other lacks (where one lacks none, its first)."""
    if len(groups) < 2:
        return None
    mine, other = groups[0], groups[1]
    theirs, ours = set(other.programs), set(mine.programs)
    lacking = next((i for i in mine.programs if i not in theirs), mine.programs[0])
    extra = next((i for i in other.programs if i not in ours), other.programs[0])
    return (mine.processes[0], key, lacking), (other.processes[0], key, extra)


def _lowerings(root: Path, wanted: set[Wanted]) -> dict[Wanted, RecordedLowering]:
    """The lowerings ``wanted``, each process's index read once (a recording where every
    function differs reads each index twice, not once per function)."""
    by_process: dict[int, set[tuple[str, str]]] = {}
    for process, key, program in wanted:
        by_process.setdefault(process, set()).add((key, program))
    found: dict[Wanted, RecordedLowering] = {}
    for process, keys in sorted(by_process.items()):
        folder = root / f"process-{process}"
        index = read_index(folder)
        for entry in index.functions:
            side = (process, _key(entry), entry.identity)
            if (side[1], side[2]) in keys and side not in found:
                found[side] = RecordedLowering(
                    f"process {process}", folder, entry, index.cache_key_environment
                )
    return found


def processes_summary(root: Path, policy: Policy | None = None) -> ProcessesSummary:
    """``show FOLDER`` of a recording of several processes: its findings, the comparison
    rules' (JX403) judged under ``policy`` (default: the rules' own)."""
    read = _read_processes(root)
    everyone = [run.process for run in read.runs]
    shown: list[tuple[str, tuple[ProcessGroup, ...], tuple[int, ...]]] = []
    sides: dict[str, tuple[Wanted, Wanted]] = {}
    for key, found in read.groups.items():
        groups = tuple(sorted(
            (ProcessGroup(programs, tuple(processes)) for programs, processes in found.values()),
            key=lambda g: (-len(g.processes), g.processes[0]),
        ))  # fmt: skip
        lowered = {p for g in groups for p in g.processes}
        shown.append((key, groups, tuple(p for p in everyone if p not in lowered)))
        pair = _sides(groups, key)
        if pair is not None:
            sides[key] = pair
    lowerings = _lowerings(root, {side for pair in sides.values() for side in pair})
    functions = []
    for key, kept, missing in shown:
        name, source = read.names[key]
        pair = sides.get(key)
        comparison = compare(lowerings[pair[0]], lowerings[pair[1]], "processes") if pair else None
        functions.append(FunctionAcross(name, source, kept, missing, comparison))
    compared = [function.comparison for function in functions if function.comparison]
    findings = judge_comparisons(compared, policy)
    return ProcessesSummary(str(root), len(read.runs), tuple(read.runs), tuple(functions), findings)


def compare_runs(before: RecordedLowering, after: RecordedLowering) -> ProgramComparison:
    """One function recorded in two runs, compared (``diff-debug runA runB``)."""
    return compare(before, after, "runs")


def within_run(folder: Path, label: str) -> list[ProgramComparison]:
    """The lowerings of one run whose only reason to compile again was the program
    itself (the same function object, context, static values, argument types and
    shardings: ``compiles.json``'s ``constants``), each against the earlier program."""
    index = read_index(folder)
    by_folder = {entry.folder: entry for entry in index.functions}
    by_prefix: dict[int, dict[str, Entry]] = {}  # each digest length's first entries
    compiles, _ = read_compiles(folder)
    found = []
    for compiled in compiles:
        kinds = {reason.kind for reason in compiled.reasons}
        now = by_folder.get(compiled.folder)
        if kinds != {"constants"} or now is None:
            continue
        digest = (compiled.reasons[0].before or "").removeprefix("program ")
        if len(digest) not in by_prefix:
            firsts: dict[str, Entry] = {}
            for entry in index.functions:
                firsts.setdefault(entry.program[: len(digest)], entry)
            by_prefix[len(digest)] = firsts
        earlier = by_prefix[len(digest)].get(digest) if digest else None
        if earlier is not None and earlier is not now:
            before = RecordedLowering(f"{label}/{earlier.folder}", folder, earlier)
            found.append(
                compare(before, RecordedLowering(f"{label}/{now.folder}", folder, now), "run")
            )
    return found


def program_findings(
    compared: Iterable[ProgramComparison], policy: Policy | None = None
) -> tuple[Finding, ...]:
    """The comparison rules' findings on lowerings compared (of two runs, within one),
    judged under ``policy``."""
    return judge_comparisons(tuple(compared), policy)
