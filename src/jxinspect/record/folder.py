"""Record folders: what ``jxinspect record`` writes and ``show``, ``diff-debug`` and
``lint --records`` read. No JAX here.

A record folder holds ``index.json`` (``jxinspect.record/1``: the command, how the run
ended, and one entry per recorded function) and, per entry, a folder with the
function's ``report.json`` (an ordinary ``jxinspect.report/1`` report). Each distinct
program is one entry: the function, its input signature, its static arguments and the
lowered module itself (other closures, names or output types are other programs); the
same program lowered again is counted in its entry. Every file is written to a
temporary file and renamed, by the codec from the types of :mod:`jxinspect.core.recording`
and :mod:`jxinspect.core.recompiles`, and read back typed: a file jxinspect did not write
(hand-edited, truncated, another version's) is one line naming the file, the JSON path and
what was expected.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from jxinspect.core import artifacts, codec
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.files import write_atomically
from jxinspect.core.model import SCHEMA as REPORT_SCHEMA
from jxinspect.core.model import Report
from jxinspect.core.recompiles import SCHEMA as COMPILES_SCHEMA
from jxinspect.core.recompiles import Compile, Compiles
from jxinspect.core.recording import CALL_SCHEMA, MAX_FUNCTIONS, SCHEMA, Index, RecordedCall
from jxinspect.core.recording import Entry as Entry  # read from here by lint.run
from jxinspect.core.units import source_parts

if TYPE_CHECKING:  # the option table is read only to replay a call (``read_call``)
    from jxinspect.project.options import TargetOptions

T = TypeVar("T")

INDEX = "index.json"
PROFILE_TRACE = "profile-trace"
"""``record --profile N``: the run's profiler trace, in XProf's layout
(``profile-trace/plugins/profile/RUN/HOST.xplane.pb``)."""
REPORT = "report.json"
CALL = "call.json"
PROGRAM = "program.mlir"
"""A record's lowered module with its locations: its identity, and where it differs."""
ENTRY = "entry.json"
"""A record's own index entry, from which the index is completed when a run died before
it was written there."""
OWNER = ".owner"
RECORD_FILES = (REPORT, CALL, PROGRAM, ENTRY)
"""What a record's folder holds: all that replacing a recording removes of it (a folder
holding anything else is left as it is)."""
ENV_FOLDER = "JXINSPECT_RECORD_DIR"
ENV_SETTINGS = "JXINSPECT_RECORD_SETTINGS"
KINDS_HELP = "give a .py file, module:function, a .json report, a .mlir file or a record folder"


@dataclass(frozen=True)
class RecordSettings:
    """What to record, from ``jxinspect record``'s flags."""

    only: tuple[str, ...] = ()
    stop_after: str | None = None
    max_functions: int | None = None
    compile: bool = False
    guard: float | None = None
    """``--guard``: the seconds each process of a run of several waits for the others at
    a compile, each program checked the same on all before it runs (``None``: no guard)."""
    profile: int | None = None
    """``--profile N``: the run's own first N calls of each recorded function (after the
    one that follows its compile) measured under JAX's profiler (compiled, as with
    ``compile``); ``None``: none measured."""


def write_index(folder: Path, index: Index) -> None:
    """Write ``index.json``: after every new record, so one function a line (one
    indented document of hundreds of entries, written as often, was most of what
    recording a test suite cost)."""
    write_atomically(folder / INDEX, codec.by_line(index, "functions"), durable=False)


OTHER_PROCESS = ".process-{pid}.json"
"""What a process that did not own the folder lowered, for the owner's index."""


@dataclass(frozen=True)
class OtherProcess:
    """What a process that did not own the folder lowered."""

    pid: int
    lowerings: int


def write_other_process(folder: Path, pid: int, lowerings: int) -> None:
    write_json(folder / OTHER_PROCESS.format(pid=pid), OtherProcess(pid, lowerings))


def other_process_files(folder: Path) -> list[Path]:
    """The other processes' files in ``folder``, each a regular file: one that is not
    (a FIFO, a folder, a link) is one :class:`UsageError`, before anything is removed."""
    found = sorted(folder.glob(OTHER_PROCESS.format(pid="*")))
    for path in found:
        _check_written(folder, path)
    return found


def collect_other_processes(folder: Path, index: Index) -> None:
    """Count in ``index`` what the run's other processes lowered, and remove their files
    (those that read as one; anything else there is left as it is)."""
    for path in sorted(folder.glob(OTHER_PROCESS.format(pid="*"))):
        if not artifacts.is_regular_file(path):
            continue
        try:
            limit = artifacts.SMALL_LIMIT
            lowerings = codec.read_file(path, OtherProcess, inside=folder, limit=limit).lowerings
        except (OSError, UsageError, ValueError):  # a DecodeError is a ValueError
            continue
        path.unlink(missing_ok=True)
        index.other_processes += 1
        index.other_lowerings += lowerings


def recover_entries(folder: Path, index: Index, since: int) -> int:
    """Add to ``index`` the records of ``folder`` that it does not list (the run died
    before it wrote them there), from each record's ``entry.json``; how many.

    Only records this run wrote: a real folder whose ``entry.json`` and ``report.json``
    are regular files changed at or after ``since``, the run's start as the file system's
    clock says it (:func:`status_changed` of the index the run began with). A file's
    status-change time is set by the kernel when the file is made or renamed into place,
    and no copy, archive or ``touch`` can set it: a folder left from an earlier run, or
    copied or unpacked into the recording, is never taken for one of this run's."""
    listed = {e.folder for e in index.functions}
    found: list[tuple[int, Entry]] = []
    for path in folder.iterdir():
        if path.name in listed or not artifacts.plain_name(path.name):
            continue
        if not artifacts.is_real_folder(path) or not all(
            status_changed(path / name) >= since for name in (ENTRY, REPORT)
        ):
            continue
        try:
            entry = codec.read_file(path / ENTRY, Entry, inside=path)
        except (OSError, UsageError, ValueError):  # a DecodeError is a ValueError
            continue
        if entry.folder == path.name:
            found.append((status_changed(path / ENTRY), entry))
    index.functions.extend(entry for _, entry in sorted(found, key=lambda item: item[0]))
    return len(found)


def status_changed(path: Path) -> int:
    """When the regular file ``path`` (not a link) was made or last renamed, in the
    file system's clock (ns); ``-1`` where it is not a regular file."""
    try:
        found = os.lstat(path)
    except OSError:
        return -1
    return found.st_ctime_ns if stat.S_ISREG(found.st_mode) else -1


def _check_written(folder: Path, path: Path) -> None:
    """``path``, a file the recorder writes in ``folder``, is a regular file (or absent);
    anything else is one :class:`UsageError`: jxinspect did not write it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise UsageError(
            f"{path} is {artifacts.kind_of(mode)}, not a file jxinspect wrote in the "
            f"recording {folder}; remove it, or give another folder"
        )


def write_json(path: Path, data: Any) -> None:
    """A record's file, replaced in one step (not forced to disk: a recording outlives
    the run that wrote it, not the machine)."""
    write_atomically(path, codec.dumps(data, indent=1), durable=False)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def free_folder_name(name: str, taken: set[str]) -> str:
    """A folder name for ``name``: safe characters only, and not yet ``taken``
    (``step``, ``step.2``, ...)."""
    base = _UNSAFE.sub("_", name).strip("._")[:80] or "function"
    if base in (INDEX, REPORT) or base.startswith("."):
        base = f"function_{base}"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}.{n}"
    return candidate


def target_name(entry: Entry) -> str:
    """``train.py:step``: the function's file (relative to the working folder when under
    it) and name, as a target is written."""
    where = source_parts(entry.source)[1]
    if not where:
        return entry.name
    try:
        where = os.path.relpath(where)
    except ValueError:  # another drive
        pass
    if where.startswith(".."):
        where = os.path.basename(where)
    return f"{where}:{entry.name}"


def claim(folder: Path, pid: int) -> bool:
    """Make ``pid`` the one process that writes ``folder``; ``False`` if another has
    (or ``.owner`` is anything but a small file that names one)."""
    path = folder / OWNER
    try:
        handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            found = artifacts.read_text(path, limit=artifacts.SMALL_LIMIT, inside=folder)
        except (OSError, UsageError):
            return False
        return found.strip() == str(pid)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(str(pid))
    return True


def remove_owner(folder: Path) -> None:
    """Remove the owner mark of ``folder`` where it is a file (what :func:`claim` wrote)."""
    path = folder / OWNER
    if artifacts.is_regular_file(path):
        path.unlink(missing_ok=True)


def check_bookkeeping(folder: Path) -> list[Path]:
    """The files the recorder wrote beside the records of ``folder`` (the owner mark,
    the compiles, the other processes' counts), for replacing the recording; one that
    is not a regular file is one :class:`UsageError`, before anything is removed."""
    found = [folder / OWNER, folder / COMPILES]
    for path in found:
        _check_written(folder, path)
    return [*found, *other_process_files(folder)]


_TRACE_FILES = (".xplane.pb", ".trace.json.gz")


def remove_profile_trace(folder: Path) -> None:
    """Remove ``folder``'s :data:`PROFILE_TRACE` where it holds only what the profiler
    writes there (``plugins/profile/RUN/HOST.xplane.pb`` and ``HOST.trace.json.gz``, real
    folders and regular files); anything else leaves it as it is."""
    root = folder / PROFILE_TRACE
    if not artifacts.is_real_folder(root):
        return
    expected = (root, root / "plugins", root / "plugins" / "profile")
    try:
        for base, folders, files in os.walk(root):
            here = Path(base)
            depth = len(here.relative_to(root).parts)
            if not artifacts.is_real_folder(here) or (depth < 3 and here not in expected):
                return
            if files and (depth != 3 or not all(
                name.endswith(_TRACE_FILES) and artifacts.is_regular_file(here / name)
                for name in files
            )):  # fmt: skip
                return
            if depth == 3 and folders:
                return
    except (OSError, ValueError):
        return
    shutil.rmtree(root, ignore_errors=True)


def is_record_folder(path: Path) -> bool:
    return path.is_dir() and (path / INDEX).is_file()


def is_record(path: Path) -> bool:
    """One recorded function's folder."""
    return path.is_dir() and (path / REPORT).is_file() and is_record_folder(path.parent)


def read_index(folder: Path) -> Index:
    """The index of a record folder; a one-line error when it is not one, or when an
    entry's folder is not a plain name in it (``../x``, an absolute path, ``.``, a
    hidden name): every reader follows ``entry.folder``, so none leaves the recording."""
    text = str(folder)
    if not is_record_folder(folder):
        raise UsageError(
            f"{text} is not a record folder (no {INDEX}); make one with "
            f"`jxinspect record -o {text} -- python your_script.py`"
        )
    index = _read_index(folder, f"{text}/{INDEX}")
    for number, entry in enumerate(index.functions):
        if not artifacts.plain_name(entry.folder):
            raise UsageError(
                f"{text}/{INDEX}: functions[{number}].folder {entry.folder[:80]!r} is not "
                f"the name of a folder in the recording; {_AGAIN}"
            )
    return index


def call_data(options: dict[str, Any] | None, why: str | None) -> RecordedCall:
    """A record's ``call.json``: the call as a declaration's options, or why it has none."""
    return RecordedCall(options, why)


def replay_problem(folder: Path, entry: Entry) -> str | None:
    """Why an entry's call cannot be replayed (``None``: it can)."""
    where = folder / entry.folder / CALL
    try:
        call = _read_file(where, str(where), RecordedCall, CALL_SCHEMA, folder)
    except UsageError:
        return f"no readable {CALL}"
    if call.options is None:
        return call.why or f"no call in {CALL}"
    return None


def read_call(text: str) -> TargetOptions:
    """The options of a recorded call (``lower --args-from-record FOLDER/NAME``): its data
    only; an option that names code to import and call (``args_from``) is refused."""
    from jxinspect.project.options import DATA_KEYS, OPTION_NAMES, options_from_mapping

    folder = Path(text)
    if not is_record(folder):
        raise UsageError(
            f"--args-from-record {text}: not a recorded function's folder; give "
            "FOLDER/NAME as `jxinspect show FOLDER` lists them"
        )
    where = f"{text}/{CALL}"
    call = _read_file(folder / CALL, where, RecordedCall, CALL_SCHEMA, folder.parent)
    if call.options is None:
        why = call.why or "the run did not say why"
        raise UsageError(
            f"--args-from-record {text}: the recorded call cannot be replayed ({why}); "
            "give the inputs with --args or --args-from"
        )
    code = {name for name in OPTION_NAMES if name not in DATA_KEYS}
    named = [k for k in map(str, call.options) if k.replace("-", "_") in code]
    if named:  # refused, not left out: the replay would stage other inputs than the run's
        raise UsageError(
            f"{where}: `{named[0]}` names code to import and call; a recording gives data "
            "only (shapes, dtypes, shardings, static values), and jxinspect record never "
            f"writes it: record the run again, or give --{named[0].replace('_', '-')} yourself"
        )
    return options_from_mapping(call.options, where, DATA_KEYS)


def _read_file(
    path: Path, where: str, kind: type[T], schema: str, inside: Path | None = None,
    what: str | None = None, fix: str | None = None,
) -> T:  # fmt: skip
    """A file of a record folder (``inside`` it), or one the user named, read as a
    ``kind`` whose ``"schema"`` is ``schema``; one line naming the file (``where``, as the
    user named it), the JSON path and ``what`` it must be (default: ``a SCHEMA file``)
    and how to ``fix`` it, when it is not one (hand-edited, truncated, another
    version's); a missing file is :func:`no_such_file`."""
    try:
        return codec.read_file(path, kind, shown=where, inside=inside)
    except FileNotFoundError:
        raise no_such_file(where) from None
    except codec.DecodeError as err:
        raise _refused(err, schema, what or f"a {schema} file", fix or _AGAIN) from None


def _read_index(folder: Path, where: str) -> Index:
    """``index.json``, refused in one line where it lists more than
    :data:`~jxinspect.core.recording.MAX_FUNCTIONS` functions (counted before any is
    built)."""
    try:
        data = artifacts.read_bytes(folder / INDEX, limit=artifacts.JSON_LIMIT, inside=folder,
                                    shown=where)  # fmt: skip
    except FileNotFoundError:
        raise no_such_file(where) from None
    try:
        listed = codec.count_items(data, "functions", source=where)
    except codec.DecodeError:
        listed = 0  # the typed decoding says what is wrong, in its own words
    if listed > MAX_FUNCTIONS:
        raise UsageError(
            f"{where} lists {listed:,} functions, more than the {MAX_FUNCTIONS:,} a recording "
            "may hold; record fewer (`jxinspect record --max-functions N`, --only NAME)"
        )
    try:
        return codec.decode_file(data, Index, source=where)
    except codec.DecodeError as err:
        raise _refused(err, SCHEMA, f"a {SCHEMA} file", _AGAIN) from None


def _refused(err: codec.DecodeError, schema: str, what: str, fix: str) -> UsageError:
    """A JSON file that is not ``what`` it must be (its ``"schema"``: ``schema``), in
    one line with how to ``fix`` it."""
    where, problem = err.source, err.problem
    if err.malformed:
        return UsageError(f"{where} is not JSON ({problem.removeprefix(_MALFORMED)})")
    if problem == codec.TOO_DEEP:
        return UsageError(f"{where} is nested too deeply to be {what}")
    if err.found != schema:
        found = err.found
        said = f"its schema is {found!r:.80}" if found else f'it has no "schema": "{schema}"'
        return UsageError(f"{where} is not {what} ({said}); {fix}")
    return UsageError(f"{where} is not {what} ({problem}); {fix}")


_MALFORMED = "JSON is malformed: "
"""How msgspec starts the problem of a text that is not JSON."""

_AGAIN = "record the run again (`jxinspect record -o FOLDER -- COMMAND`)"
"""What to do about a record folder's file that jxinspect cannot read."""


def read_record(folder: Path, entry: Entry) -> Report:
    """The report of one entry of a record folder."""
    return read_report(str(folder / entry.folder / REPORT), inside=folder)


def read_report(text: str, inside: Path | None = None) -> Report:
    """A saved ``jxinspect.report/1`` report (a file of the record folder ``inside``, or
    one the user named); a one-line error when it is not one."""
    fix = "save one with `jxinspect lower TARGET --format json -o FILE`"
    return _read_file(Path(text), text, Report, REPORT_SCHEMA, inside, "a jxinspect report", fix)


COMPILES = "compiles.json"
"""Every compile of the user's functions in the run, with its reasons and seconds."""


def write_compiles(folder: Path, compiles: list[Compile], dropped: int) -> None:
    """Write ``compiles.json`` (schema ``jxinspect.compiles/1``), one compile a line."""
    written = codec.by_line(Compiles(dropped, tuple(compiles)), "compiles")
    write_atomically(folder / COMPILES, written, durable=False)


def read_compiles(folder: Path) -> tuple[list[Compile], int]:
    """The compiles a record folder lists, and how many more it only counted; none for
    a recording made before compiles were recorded."""
    path = folder / COMPILES
    if not path.is_file():
        return [], 0
    read = _read_file(path, f"{folder}/{COMPILES}", Compiles, COMPILES_SCHEMA, folder)
    return list(read.compiles), read.dropped
