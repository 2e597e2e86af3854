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

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from jxinspect.core import codec
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.files import write_atomically
from jxinspect.core.model import SCHEMA as REPORT_SCHEMA
from jxinspect.core.model import Report
from jxinspect.core.recompiles import SCHEMA as COMPILES_SCHEMA
from jxinspect.core.recompiles import Compile, Compiles
from jxinspect.core.recording import CALL_SCHEMA, SCHEMA, Call, Index
from jxinspect.core.recording import Entry as Entry  # read from here by lint.run
from jxinspect.core.units import source_parts
from jxinspect.project.options import TargetOptions, options_from_mapping

T = TypeVar("T")

INDEX = "index.json"
REPORT = "report.json"
CALL = "call.json"
PROGRAM = "program.mlir"
"""A record's lowered module with its locations: its identity, and where it differs."""
ENTRY = "entry.json"
"""A record's own index entry, from which the index is completed when a run died before
it was written there."""
OWNER = ".owner"
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
    config: str | None = None
    """The project configuration whose rule settings judge each report (``None``: the
    rules' defaults), found from the working folder by ``jxinspect record``."""


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


def collect_other_processes(folder: Path, index: Index) -> None:
    """Count in ``index`` what the run's other processes lowered, and remove their files."""
    for path in sorted(folder.glob(OTHER_PROCESS.format(pid="*"))):
        try:
            lowerings = codec.decode(path.read_bytes(), OtherProcess, source=path.name).lowerings
        except (OSError, ValueError):  # a DecodeError is a ValueError
            continue
        finally:
            path.unlink(missing_ok=True)
        index.other_processes += 1
        index.other_lowerings += lowerings


def recover_entries(folder: Path, index: Index) -> int:
    """Add to ``index`` the records of ``folder`` that it does not list (the run died
    before it wrote them there), from each record's ``entry.json``; how many."""
    listed = {e.folder for e in index.functions}
    found: list[tuple[int, Entry]] = []
    for path in folder.iterdir():
        if path.name in listed or not (path / ENTRY).is_file() or not (path / REPORT).is_file():
            continue
        try:
            entry = codec.decode((path / ENTRY).read_bytes(), Entry, source=ENTRY)
        except (OSError, ValueError):  # a DecodeError is a ValueError
            continue
        if entry.folder == path.name:
            found.append((path.stat().st_mtime_ns, entry))
    index.functions.extend(entry for _, entry in sorted(found, key=lambda item: item[0]))
    return len(found)


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
    """Make ``pid`` the one process that writes ``folder``; ``False`` if another has."""
    path = folder / OWNER
    try:
        handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            return path.read_text(encoding="utf-8").strip() == str(pid)
        except OSError:
            return False
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(str(pid))
    return True


def is_record_folder(path: Path) -> bool:
    return path.is_dir() and (path / INDEX).is_file()


def is_record(path: Path) -> bool:
    """One recorded function's folder."""
    return path.is_dir() and (path / REPORT).is_file() and is_record_folder(path.parent)


def read_index(folder: Path) -> Index:
    """The index of a record folder; a one-line error when it is not one."""
    text = str(folder)
    if not is_record_folder(folder):
        raise UsageError(
            f"{text} is not a record folder (no {INDEX}); make one with "
            f"`jxinspect record -o {text} -- python your_script.py`"
        )
    return _read_file(folder / INDEX, f"{text}/{INDEX}", Index, SCHEMA)


def call_data(options: dict[str, Any] | None, why: str | None) -> Call:
    """A record's ``call.json``: the call as a declaration's options, or why it has none."""
    return Call(options, why)


def replay_problem(folder: Path, entry: Entry) -> str | None:
    """Why an entry's call cannot be replayed (``None``: it can)."""
    where = folder / entry.folder / CALL
    try:
        call = _read_file(where, str(where), Call, CALL_SCHEMA)
    except UsageError:
        return f"no readable {CALL}"
    if call.options is None:
        return call.why or f"no call in {CALL}"
    return None


def read_call(text: str) -> TargetOptions:
    """The options of a recorded call (``lower --args-from-record FOLDER/NAME``)."""
    folder = Path(text)
    if not is_record(folder):
        raise UsageError(
            f"--args-from-record {text}: not a recorded function's folder; give "
            "FOLDER/NAME as `jxinspect show FOLDER` lists them"
        )
    where = f"{text}/{CALL}"
    call = _read_file(folder / CALL, where, Call, CALL_SCHEMA)
    if call.options is None:
        why = call.why or "the run did not say why"
        raise UsageError(
            f"--args-from-record {text}: the recorded call cannot be replayed ({why}); "
            "give the inputs with --args or --args-from"
        )
    return options_from_mapping(call.options, where)


def _read_file(path: Path, where: str, kind: type[T], schema: str) -> T:
    """A file of a record folder read as a ``kind``; one line naming the file, the JSON
    path and what was expected when it is not one (hand-edited, truncated, another
    version's)."""
    data = _read_json(path, where, f"a {schema} file")
    found = data.get("schema") if isinstance(data, dict) else None
    if found != schema:
        said = f"its schema is {found!r}" if found else f'it has no "schema": "{schema}"'
        raise UsageError(f"{where} is not a {schema} file ({said}); {_AGAIN}")
    try:
        return codec.convert(data, kind, source=where)
    except RecursionError:
        raise UsageError(f"{where} is nested too deeply to be a {schema} file") from None
    except codec.DecodeError as err:
        raise UsageError(f"{where} is not a {schema} file ({err.problem}); {_AGAIN}") from None


_AGAIN = "record the run again (`jxinspect record -o FOLDER -- COMMAND`)"
"""What to do about a record folder's file that jxinspect cannot read."""


def read_record(folder: Path, entry: Entry) -> Report:
    """The report of one entry of a record folder."""
    return read_report(str(folder / entry.folder / REPORT))


def _read_json(path: Path, text: str, what: str = "read") -> Any:
    if not path.is_file():
        raise no_such_file(text)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{text} is not a text file; {KINDS_HELP}") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{text} is not JSON (line {err.lineno}: {err.msg})") from None
    except ValueError:  # an integer of more than 4,300 digits
        raise UsageError(f"{text} holds a number too long to be {what}") from None
    except RecursionError:
        raise UsageError(f"{text} is nested too deeply to be {what}") from None
    except OSError as err:
        raise UsageError(f"cannot read {text}: {err.strerror}") from None


def read_report(text: str) -> Report:
    """A saved ``jxinspect.report/1`` report; a one-line error when it is not one."""
    data = _read_json(Path(text), text, "a jxinspect report")
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != REPORT_SCHEMA:
        found = f"its schema is {schema!r}" if schema else f'it has no "schema": "{REPORT_SCHEMA}"'
        raise UsageError(
            f"{text} is not a jxinspect report ({found}); save one with "
            "`jxinspect lower TARGET --format json -o FILE`"
        )
    try:
        return codec.convert(data, Report, source=text)
    except RecursionError:
        raise UsageError(f"{text} is nested too deeply to be a {REPORT_SCHEMA} report") from None
    except codec.DecodeError as err:
        raise UsageError(f"{text} is not a valid {REPORT_SCHEMA} report: {err.problem}") from None


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
    read = _read_file(path, f"{folder}/{COMPILES}", Compiles, COMPILES_SCHEMA)
    return list(read.compiles), read.dropped
