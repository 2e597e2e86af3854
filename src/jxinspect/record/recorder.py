"""The recording side of ``jxinspect record``: inside the user's own run, turn each of
their functions that JAX lowers into a report, written into the record folder as it
happens (the folder's layout is :mod:`jxinspect.record.folder`).

Started by the ``sitecustomize`` that ``jxinspect record`` puts first on the run's
``PYTHONPATH``; it waits for ``import jax``, then hooks JAX's lowering through the seam.
Nothing here runs per call of a staged function: only when JAX lowers (a cache miss).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jxinspect.core import codec
from jxinspect.core.errors import UsageError
from jxinspect.core.files import write_atomically
from jxinspect.core.model import Report
from jxinspect.core.recompiles import with_cache_held
from jxinspect.core.recording import Entry, Index, RecordedCall
from jxinspect.core.units import source_parts
from jxinspect.record import fingerprint, identity, processes, recompiles
from jxinspect.record import folder as records
from jxinspect.tracer import seam

if TYPE_CHECKING:  # each loaded only where the run asks for it
    from jxinspect.record.guard import Guard
    from jxinspect.record.profiling import RunProfiler

INDEX_EVERY_S = 5.0
"""How often, at most, the index is written while the run lowers (and at its end)."""


@dataclass
class Recorder:
    """What this process has recorded so far, mirrored in the folder's index."""

    folder: Path
    """The folder it records into: the recording's, or once claimed in a run of several
    JAX processes, this process's own sub-folder of it."""
    settings: records.RecordSettings
    index: Index
    owner: bool | None = None
    """This process owns the folder (the first of the run to stage a function of its own)."""
    by_key: dict[tuple[str, ...], Entry] = field(default_factory=dict)
    """Each recorded program's entry, by function, signature, statics and module digest."""
    elsewhere: int = 0
    """Lowerings of the user's functions this process lowered while another process of
    the run owns the folder (written at exit for the owner's index to count)."""
    index_written: float = -INDEX_EVERY_S
    """When the index was last written (``time.monotonic()``)."""
    compiles: recompiles.CompileLog = field(default_factory=recompiles.CompileLog)
    """Every compile of the user's functions, with its reasons and seconds."""
    guard: Guard | None = None
    """The guard of this process (``record --guard``)."""
    profiler: RunProfiler | None = None
    """``record --profile N``: the run's own calls measured."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Held while a lowering is recorded: threads that lower at once (JAX's own tests of
    concurrent jit do) each get a folder and an index entry of their own."""

    def on_lowering(self, lowering: seam.RunLowering) -> None:
        with self.lock:
            try:
                self._record(lowering)
            except Exception as err:
                self.on_failure(lowering.name, err)

    def on_failure(self, function: str | None, err: Exception) -> None:
        """A lowering that could not be recorded: counted, with its first error line,
        in the index; the user's run goes on as if nothing was recorded."""
        with self.lock:
            if not self.index.failures:
                print(f"jxinspect record: could not record `{function}`: {err!r} (every "
                      "such lowering is counted in the recording's index)",
                      file=sys.stderr)  # fmt: skip
            self.index.count_failure(function, f"{type(err).__name__}: {err}")
            self._write_index()

    def _record(self, lowering: seam.RunLowering) -> None:
        if lowering.internal:  # JAX's own: counted, with the user's line and its seconds
            self.index.count_internal(lowering.call_site)
            return self.compiles.add_internal()
        source = lowering.source
        name = source_parts(source)[0] or lowering.name
        if self.settings.only and name not in self.settings.only:
            self.index.not_selected += 1
            return
        if not self._own():
            self.elsewhere += 1
            return
        if self.index.cache_key_environment is None:  # read once the backend runs
            self.index.cache_key_environment = seam.cache_key_environment()
        statics = _statics(lowering.call)
        program = seam.program_digest(lowering.lowered) if lowering.lowered else ""
        key = (source or name, lowering.signature, statics, program)
        called = fingerprint.static_values(lowering.call)
        compiled = fingerprint.fingerprint(lowering, called, program)
        entry = self.by_key.get(key)
        if entry is not None:
            entry.lowerings += 1
            self.compiles.add(source or name, name, entry.folder, compiled, lowering.call_site)
            self._write_index()
            return
        if self.settings.max_functions is not None and (
            len(self.index.functions) >= self.settings.max_functions
        ):
            self.index.over_limit += 1
            self.compiles.add(source or name, name, "", compiled, lowering.call_site)
            self._write_index()
            return
        signature, stage = lowering.signature, lowering.stage
        entry = Entry(name=name, folder="", source=source, signature=signature, stage=stage,
                      lowerings=1, statics=statics, program=program)  # fmt: skip
        text = _identify(lowering, entry)
        compiled_program: list[tuple[str, str]] = []
        report = _report(lowering, entry, self.settings.compile,
                         compiled_program.append if self.profiler else None)  # fmt: skip
        entry.folder = self._new_folder(name)
        where = self.folder / entry.folder
        records.write_json(where / records.REPORT, report)
        if text is not None:
            write_atomically(where / records.PROGRAM, text, durable=False)
        records.write_json(where / records.CALL, _call(lowering))
        records.write_json(where / records.ENTRY, entry)
        if self.profiler is not None and compiled_program:
            self.profiler.watch(where / records.REPORT, report, *compiled_program[0])
        self.by_key[key] = entry
        self.index.functions.append(entry)
        self.compiles.add(source or name, name, entry.folder, compiled, lowering.call_site)
        if self.settings.stop_after is not None and name == self.settings.stop_after:
            self.index.stopped_after = name
            self._write_index(now=True)
            sys.stdout.flush()
            sys.stderr.flush()
            raise SystemExit(0)  # ends the run as an exit at that point would
        self._write_index()

    def _new_folder(self, name: str) -> str:
        """Create the folder of a new record, one no record has (also one left by
        anything else in the folder): ``mkdir`` claims it or fails."""
        taken = {e.folder for e in self.index.functions}
        while True:
            chosen = records.free_folder_name(name, taken)
            try:
                (self.folder / chosen).mkdir()
                return chosen
            except FileExistsError:
                taken.add(chosen)

    def _own(self) -> bool:
        """Claim the folder for this process, or learn that another process has it: one
        process writes a record folder (a run's helper processes are not recorded)."""
        if self.owner is None and not self._claim():
            print(f"jxinspect record: process {os.getpid()} staged functions too; only "
                  "the first process of the run that stages one is recorded",
                  file=sys.stderr)  # fmt: skip
        return bool(self.owner)

    def _claim(self) -> bool:
        """Claim this process's folder: the recording's, or in a run of several JAX
        processes its own sub-folder of it (:mod:`jxinspect.record.processes`)."""
        self.folder = processes.place(self.folder, self.index)
        owner = self.owner = records.claim(self.folder, os.getpid())
        if owner:
            processes.tell_launcher(self.folder)
        return owner

    def _write_index(self, now: bool = False) -> None:
        """Write the index ``now``, or where :data:`INDEX_EVERY_S` has passed since the
        last write (a suite lowers hundreds of programs a second; each record's own
        ``entry.json`` keeps it listed if the run dies in between)."""
        if not self.owner:
            return
        clock = time.monotonic()
        if now or clock - self.index_written >= INDEX_EVERY_S:
            self.index.internal_s = round(self.compiles.internal_s, 6)
            if self.guard is not None:
                self.index.guard = self.guard.summary()
            records.write_index(self.folder, self.index)
            identities = {entry.folder: entry.identity for entry in self.index.functions}
            compiles = with_cache_held(self.compiles.compiles, identities)
            records.write_compiles(self.folder, compiles, self.compiles.dropped)
            self.index_written = clock

    def at_exit(self) -> None:
        """Write what was counted but not recorded (JAX's own computations, functions
        left out), claiming the folder if no process of the run has."""
        with self.lock:
            if self.owner is None and (self.index.internal or self.index.not_selected):
                self._claim()
            if self.owner is False and self.elsewhere:
                records.write_other_process(self.folder, os.getpid(), self.elsewhere)
            self._write_index(now=True)


_STATIC_TEXT = 60
"""How much of a static argument's ``repr`` a label shows."""


def _statics(call: seam.JitCall | None) -> str:
    """``k=True, mode='fast'``: the static arguments of a ``jit`` call, each of which
    JAX's cache tells apart (``1``, ``True`` and ``1.0`` are three programs)."""
    if call is None:
        return ""
    return ", ".join(
        f"{k}={fingerprint.short_repr(v, _STATIC_TEXT)}" for k, v in seam.static_arguments(call)
    )


def _identify(lowering: seam.RunLowering, entry: Entry) -> str | None:
    """Give ``entry`` the program's identity and the digest of the source it was traced
    from; the module's text (``None`` where JAX made no module of it)."""
    _, file, line = source_parts(lowering.source)
    traced = seam.traced_code(lowering.jaxpr, (file, line)) if file and line else set()
    digest = identity.source_digest(lowering.source, traced)
    entry.source_digest = digest or ""
    if lowering.lowered is None:
        return None
    text = seam.program_text(lowering.lowered)
    found = identity.identity_of(text, digest)
    entry.identity, entry.names_digest = found.program, found.names
    return text


def _call(lowering: seam.RunLowering) -> RecordedCall:
    """The call to replay it with (``lower --args-from-record``): the user's own under a
    library's wrapper (replayed through it, as ``lower`` stages it), or why there is none."""
    from jxinspect.record import replay

    call = lowering.wrapper_call or lowering.call
    if call is None:
        why = "JAX lowered it outside a jit call (from .lower() or .trace(), or pmap)"
        return records.call_data(None, why)
    try:
        return records.call_data(replay.call_options(call), None)
    except replay.Unwritable as err:
        return records.call_data(None, str(err))
    except Exception as err:  # a value no writer foresaw: the report is kept all the same
        return records.call_data(None, f"the call could not be written: {err!r}")


def _report(
    lowering: seam.RunLowering,
    entry: Entry,
    compile: bool,
    compiled_program: Callable[[tuple[str, str]], object] | None = None,
) -> Report:
    """The recorded lowering's report, through the one pipeline, not judged: the
    recording keeps facts, and whatever reads it judges it under the policy it reads it
    with (:mod:`jxinspect.record.judged`). ``compiled_program``: told the compiled
    module's name and optimized HLO text."""
    from jxinspect.pipeline import report_of
    from jxinspect.tracer.mesh_facts import find_jax_mesh
    from jxinspect.tracer.read.report import Context
    from jxinspect.tracer.stage import recorded

    notes = ["recorded from a real run: names and shardings are those the run lowered"]
    if lowering.stage == "pmap" and not seam.pmap_global_shapes():
        notes.append(
            "this release's pmap lowers one replica's program: shapes are per device, and "
            "the layout over pmap's axis is not recorded"
        )
    _, file, line = source_parts(entry.source)
    staged = recorded(lowering)
    expected, static_args = staged.traced.paths or (None, [])  # the user's paths
    context = Context(
        target=records.target_name(entry),
        function=entry.source,
        expected_args=expected,
        static_args=tuple(static_args),
        file=file,
        line=line,
        notes=tuple(notes),
    )
    jax_mesh = find_jax_mesh(lowering.shardings)
    told = (lambda module, text: compiled_program((module, text))) if compiled_program else None
    return report_of(staged, context, jax_mesh, compile=compile, compiled_program=told)


def start() -> None:
    """Begin recording into the folder named by the environment (from ``sitecustomize``)."""
    folder = Path(os.environ[records.ENV_FOLDER])
    settings = codec.decode(
        os.environ.get(records.ENV_SETTINGS, "{}"),
        records.RecordSettings,
        source=records.ENV_SETTINGS,
    )
    recorder = Recorder(folder, settings, records.read_index(folder))
    if settings.profile is not None:
        from jxinspect.record.profiling import RunProfiler

        recorder.profiler = RunProfiler(settings.profile)

    def install() -> None:
        recorder.index.jax_version = seam.jax_version()
        try:
            seam.require_supported()
        except UsageError as err:  # the run goes on, unrecorded
            print(f"jxinspect record: not recording: {err}", file=sys.stderr)
            return
        seam.install_lowering_hook(recorder.on_lowering, recorder.on_failure)
        seam.install_duration_listener(recorder.compiles.on_duration)
        recorder.compiles.cache_settings = seam.cache_settings
        seam.install_cache_listener(recorder.compiles.on_cache_event)
        seam.install_compile_options_hook(
            recorder.compiles.compile_starts, recorder.compiles.compile_ended
        )
        if settings.guard is not None:
            from jxinspect.record.guard import install_guard

            recorder.guard = install_guard(settings.guard)

    seam.when_jax_imported(install)
    atexit.register(recorder.at_exit)
