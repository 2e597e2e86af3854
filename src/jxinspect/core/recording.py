"""What a recorded run holds, as plain data: the record folder's index (schema
``jxinspect.record/1``, ``index.json``), each recorded function's entry, the lowerings it
could not record, a record's call (``call.json``), and the recording as ``jxinspect show``
draws it. Written and read by :mod:`jxinspect.core.codec` from these types alone; the
folder's files and their layout are :mod:`jxinspect.record.folder`'s. A field made with
``init=False`` is derived and written for readers of the JSON.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from jxinspect.core.dtypes import short_name
from jxinspect.core.model import Input, Report, gated
from jxinspect.core.profile import Profile
from jxinspect.core.recompiles import Compile, FunctionCompiles
from jxinspect.core.units import type_text
from jxinspect.core.vocabulary import Severity, Status

SCHEMA: Literal["jxinspect.record/1"] = "jxinspect.record/1"
CALL_SCHEMA: Literal["jxinspect.call/1"] = "jxinspect.call/1"
SHOWN_SCHEMA: Literal["jxinspect.record-summary/1"] = "jxinspect.record-summary/1"
"""``show FOLDER --format json``: the index and what ``show`` adds to it."""

_DTYPE = re.compile(r"\b([a-z]+[0-9]*)\[")
"""A dtype's name before an array's shape, ``float32[``."""
_SHAPED_ARRAY = re.compile(r"ShapedArray\(([^()]*?)(?:, weak_type=True)?\)")
"""How JAX 0.4 writes an abstract value, ``ShapedArray(float32[2])``."""


@dataclass
class Entry:
    """One recorded function with one input signature (``entry.json``, and a row of
    the index)."""

    name: str
    folder: str
    """Its folder in the record folder (the name, made unique and safe)."""
    source: str | None
    """``step at train.py:12``, as JAX names the function."""
    signature: str
    """Input types, donation and the input shardings JAX lowered with, in full."""
    stage: str
    lowerings: int
    """How many times the run lowered this same program (1: never traced again)."""
    statics: str = ""
    """The static arguments of the call, ``k=True, mode='fast'`` (``""``: none)."""
    program: str = ""
    """A digest of the lowered module: which lowerings were this same program."""
    identity: str = ""
    """The program's identity (:class:`~jxinspect.core.identity.ProgramIdentity`): SHA-256
    of the module without locations, metadata and names (``""``: recorded before it was)."""
    names_digest: str = ""
    """SHA-256 of the names the program carries, kept apart from its identity."""
    source_digest: str = ""
    """SHA-256 of the source text the program was traced from, the function's and every
    helper's and method's it called (``""``: unknown)."""

    @property
    def input_types(self) -> str:
        """The signature in one short line: input types as a jaxpr writes them and the
        static arguments, ``(f32[32@model], f32[4,16]; k=2)``: what tells two recordings
        of one function apart in a list."""
        types, _, _ = self.signature.partition(" donated=")
        types = _DTYPE.sub(lambda m: short_name(m.group(1)) + "[", _SHAPED_ARRAY.sub(r"\1", types))
        if not self.statics:
            return types
        return f"{types[:-1]}; {self.statics})" if types.endswith(")") else types


@dataclass
class Failure:
    """Lowerings the recorder could not record (the run went on without their reports):
    the function, the first line of the error, and how many times it happened."""

    function: str | None
    error: str
    count: int = 1


@dataclass
class GuardSummary:
    """What the guard (``jxinspect record --guard``) checked in one process of a run of
    several: each program across processes against the other processes' before it ran."""

    wait_s: float
    """How long it waited, at most, for the other processes at a compile."""
    checked: int = 0
    """Programs across processes found the same on every process."""
    stopped: str | None = None
    """Why it stopped the run before a program ran (the processes would have compiled
    different programs, or one never lowered it); ``None``: it stopped nothing."""


@dataclass(frozen=True)
class RunGuard:
    """What the guard checked in a recorded run of several processes, as one process's
    folder says it (a side of ``diff-debug`` of two process folders)."""

    process: int | None
    """The process whose folder it is (``None``: the folder does not say)."""
    processes: int | None
    """How many JAX processes the run had (``None``: the folder does not say)."""
    guard: GuardSummary
    """What its guard checked and found."""


MAX_FUNCTIONS = 100_000
"""The most functions an index may list: more than any real run records (each is a folder
of its own); a reader refuses more in one line rather than read them all."""

MAX_FAILURES = 50
"""Distinct failures an index lists (``Index.failed`` counts them all)."""

MAX_INTERNAL_LINES = 50
"""Distinct lines :attr:`Index.internal_lines` lists (``Index.internal`` counts them all)."""


@dataclass
class Index:
    """A record folder's ``index.json``: the command, how the run ended, and one entry
    per recorded function."""

    schema: Literal["jxinspect.record/1"] = field(init=False, default_factory=lambda: SCHEMA)
    complete: bool = field(init=False, default=False)
    """The run ended by itself with exit 0, or stopped where ``--stop-after`` asked
    (derived from :attr:`exit_code`)."""
    command: list[str] = field(default_factory=list)
    """The recorded command, as given after ``--``."""
    functions: list[Entry] = field(default_factory=list)
    """Every recorded function, in the order the run first lowered each."""
    internal: int = 0
    """Computations of JAX's own (eager operations, ``jnp`` functions), not recorded."""
    internal_s: float = 0.0
    """Seconds JAX spent tracing, lowering and compiling its own computations (its
    duration events, as for the user's compiles)."""
    internal_lines: dict[str, int] = field(default_factory=dict)
    """The user's lines whose calls made JAX lower its own computations, and how many
    each (at most :data:`MAX_INTERNAL_LINES` lines)."""
    run_s: float | None = None
    """Seconds the recorded command ran, as ``jxinspect record`` measured it (``None``:
    not measured)."""
    not_selected: int = 0
    """Lowerings of functions left out by ``--only``."""
    over_limit: int = 0
    """Lowerings of new functions after ``--max-functions`` was reached."""
    other_processes: int = 0
    """Other processes of the run that lowered functions of the user's (only the first
    process that does is recorded: pytest-xdist workers, a multiprocessing pool)."""
    other_lowerings: int = 0
    """How many lowerings those processes made."""
    failed: int = 0
    """Lowerings that could not be recorded (their report is missing)."""
    failures: list[Failure] = field(default_factory=list)
    """Why: the first :data:`MAX_FAILURES` distinct (function, error) pairs."""
    stopped_after: str | None = None
    """The function ``--stop-after`` named, once it was recorded."""
    exit_code: int | None = None
    """How the run ended: its exit code, ``-N`` for signal N; ``None`` while it runs."""
    jax_version: str | None = None
    """The JAX release the run imported."""
    cache_key_environment: dict[str, str] | None = None
    """The parts of JAX's persistent-cache key besides the program, as the run's JAX
    would hash them (``jaxlib``, ``backend``, ``XLA flags``); ``None``: not read (no
    function of the user's lowered, or a recording made before they were read)."""
    process: int | None = None
    """This process's index in a run of several JAX processes (``None``: one process)."""
    processes: int | None = None
    """How many JAX processes the run had (``None``: one)."""
    guard: GuardSummary | None = None
    """What the guard checked in this process (``None``: the run was not guarded)."""

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "exit_code":  # the one fact complete is derived from
            super().__setattr__("complete", value == 0)

    def __post_init__(self) -> None:
        self.exit_code = self.exit_code

    def count_internal(self, line: str | None) -> None:
        """Count a computation of JAX's own, and the user's line that made it."""
        self.internal += 1
        if line is not None and (
            line in self.internal_lines or len(self.internal_lines) < MAX_INTERNAL_LINES
        ):
            self.internal_lines[line] = self.internal_lines.get(line, 0) + 1

    def count_failure(self, function: str | None, error: str) -> None:
        """Count a lowering that could not be recorded."""
        self.failed += 1
        line = (error.strip().splitlines() or [""])[0][:300]
        for failure in self.failures:
            if (failure.function, failure.error) == (function, line):
                failure.count += 1
                return
        if len(self.failures) < MAX_FAILURES:
            self.failures.append(Failure(function, line))


@dataclass(frozen=True)
class RecordedCall:
    """A record's ``call.json``: the call as a declaration's options, or why it has none."""

    schema: Literal["jxinspect.call/1"] = field(init=False, default_factory=lambda: CALL_SCHEMA)
    options: dict[str, Any] | None = None
    """The options ``lower --args-from-record`` replays it with (``args``, statics...)."""
    why: str | None = None
    """Why the call cannot be replayed (``None`` where it can)."""


@dataclass(frozen=True)
class Tally:
    """What ``show FOLDER`` says of one recorded report, counted as it is read (a
    recording of thousands of functions is shown without holding their reports)."""

    inputs: dict[Status, int]
    """How many inputs have each status, in the order the report first has each."""
    outputs: dict[Status, int]
    codes: dict[str, int]
    """How many findings of each code."""
    gated: tuple[Severity, ...]
    """The severities ``--fail-on`` judges."""
    inputs_by_path: tuple[tuple[str, str], ...] = ()
    """``(("batch['x']", "f32[8,128] P('data', None)"), ...)``: each input's path, type
    and layout, kept only for a function recorded as several programs (``()`` for the
    rest): what tells its programs apart (:func:`differences`)."""
    measured: Profile | None = None
    """``record --profile N``: its calls measured, by line and collective (the timeline
    and the per-instruction table left in its report)."""

    @staticmethod
    def of(report: Report, keep_inputs: bool = False) -> Tally:
        profile = report.profile
        return Tally(
            dict(Counter(leaf.status for leaf in report.inputs)),
            dict(Counter(leaf.status for leaf in report.outputs)),
            dict(Counter(finding.code for finding in report.findings)),
            tuple(dict.fromkeys(gated(report.findings))),
            tuple((leaf.path, _layout(leaf)) for leaf in report.inputs) if keep_inputs else (),
            replace(profile, timeline=(), by_instruction=()) if profile is not None else None,
        )


def _layout(leaf: Input) -> str:
    layout = type_text(leaf.shape, leaf.dtype)
    return f"{layout} {leaf.sharding.readable}" if leaf.sharding is not None else layout


def programs_by_name(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Each function's recorded programs (its entries, in the index's order), by name."""
    found: dict[str, list[Entry]] = {}
    for entry in entries:
        found.setdefault(entry.name, []).append(entry)
    return found


def several_programs(entries: Iterable[Entry]) -> set[str]:
    """The names of the functions recorded as more than one program."""
    return {name for name, own in programs_by_name(entries).items() if len(own) > 1}


MOST_SHOWN = 2
"""How many differing inputs :func:`differences` names before it counts the rest."""


def differences(recorded: Sequence[tuple[Entry, Tally]]) -> dict[str, str]:
    """By folder, for each function recorded as several programs: what its program
    holds where the function's programs differ, ``batch['x'] f32[8,128]; k=2`` (the
    inputs whose type or layout differs, by path, then the static arguments where they
    differ), or ``same inputs`` where none does (then a closed-over value or the
    function object made it another program: the recompiles say which)."""
    tallies = {entry.folder: tally for entry, tally in recorded}
    found: dict[str, str] = {}
    for entries in programs_by_name(entry for entry, _ in recorded).values():
        if len(entries) < 2:
            continue
        group = [(entry, tallies[entry.folder]) for entry in entries]
        inputs = [dict(tally.inputs_by_path) for _, tally in group]
        paths = list(dict.fromkeys(path for own in inputs for path in own))
        varying = [p for p in paths if len({own.get(p) for own in inputs}) > 1]
        statics_vary = len({entry.statics for entry, _ in group}) > 1
        for (entry, _), own in zip(group, inputs):
            parts = [f"{path} {own.get(path, 'absent')}" for path in varying[:MOST_SHOWN]]
            more = len(varying) - MOST_SHOWN
            said = ", ".join(parts) + (f" and {more} more inputs" if more > 0 else "")
            if statics_vary:
                said = f"{said}; {entry.statics or 'no statics'}" if said else entry.statics
            found[entry.folder] = said or "same inputs"
    return found


Recorded = tuple[Entry, Tally, "str | None"]
"""An entry, its report counted, and why its call cannot be replayed (``None``: it can)."""


@dataclass(frozen=True)
class Recording:
    """A record folder as ``jxinspect show FOLDER`` draws it."""

    folder: str
    """The folder as given."""
    index: Index
    reports: tuple[Recorded, ...]
    """Every recorded function, in the index's order."""
    compiles: tuple[Compile, ...] = ()
    """Every compile of the user's functions, with its reasons (``compiles.json``)."""
    compiles_dropped: int = 0


@dataclass
class ShownEntry(Entry):
    """A recorded function as ``show --format json`` lists it: its index entry, whether
    its call replays, and its leaves and findings counted."""

    findings: int = 0
    """How many findings its report has, judged when read (a recording keeps none)."""
    replay: bool = True
    """``lower --args-from-record`` can replay its call."""
    replay_problem: str | None = None
    """Why it cannot (``None``: it can)."""
    inputs: dict[Status, int] = field(default_factory=dict)
    """How many inputs have each status."""
    outputs: dict[Status, int] = field(default_factory=dict)
    finding_codes: list[str] = field(default_factory=list)
    """The codes of its findings, sorted, each once."""
    differs: str | None = None
    """Where the function was recorded as several programs: what this one holds where
    they differ (:func:`differences`); ``None`` for a function of one program."""
    profile: Profile | None = None
    """``record --profile N``: its calls measured (:attr:`Tally.measured`); ``None``: not
    measured."""


@dataclass
class ShownRecording(Index):
    """A record folder as ``show --format json`` writes it: the index, each function as a
    :class:`ShownEntry`, and what the run did not record and compiled again."""

    schema: Literal["jxinspect.record-summary/1"] = field(  # type: ignore[assignment]
        init=False, default_factory=lambda: SHOWN_SCHEMA
    )
    functions: list[ShownEntry] = field(default_factory=list)  # type: ignore[assignment]
    folder: str = ""
    """The folder as given."""
    notes: list[str] = field(default_factory=list)
    """What the run lowered and did not record, and retracing worth a look, in words."""
    recompiles: list[FunctionCompiles] = field(default_factory=list)
    """Each function that compiled, with its compiles and their reasons grouped."""
    compiles_dropped: int = 0
    """Compiles counted and not listed."""
