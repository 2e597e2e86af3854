"""Record folders: what ``jxinspect record`` writes and ``show``, ``diff-debug`` and
``lint --records`` read. No JAX here.

A record folder holds ``index.json`` (``jxinspect.record/1``: the command, how the run
ended, and one entry per recorded function) and, per entry, a folder with the
function's ``report.json`` (an ordinary ``jxinspect.report/1`` report). Each distinct
program is one entry: the function, its input signature, its static arguments and the
lowered module itself (other closures, names or output types are other programs); the
same program lowered again is counted in its entry. Every file is written to a
temporary file and renamed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from jxinspect.core import codec
from jxinspect.core.dtypes import short_name
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.files import write_atomically
from jxinspect.core.model import SCHEMA as REPORT_SCHEMA
from jxinspect.core.model import Report
from jxinspect.core.recompiles import SCHEMA as COMPILES_SCHEMA
from jxinspect.core.recompiles import Compile
from jxinspect.core.units import source_parts
from jxinspect.project.options import TargetOptions, options_from_mapping

SCHEMA = "jxinspect.record/1"
INDEX = "index.json"
REPORT = "report.json"
CALL = "call.json"
PROGRAM = "program.mlir"
"""A record's lowered module with its locations: its identity, and where it differs."""
ENTRY = "entry.json"
"""A record's own index entry, from which the index is completed when a run died before
it was written there."""
CALL_SCHEMA = "jxinspect.call/1"
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

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RecordSettings:
        data = json.loads(text)
        return cls(
            only=tuple(data.get("only", ())),
            stop_after=data.get("stop_after"),
            max_functions=data.get("max_functions"),
            compile=bool(data.get("compile", False)),
            config=data.get("config"),
        )


_DTYPE = re.compile(r"\b([a-z]+[0-9]*)\[")
"""A dtype's name before an array's shape, ``float32[``."""
_SHAPED_ARRAY = re.compile(r"ShapedArray\(([^()]*?)(?:, weak_type=True)?\)")
"""How JAX 0.4 writes an abstract value, ``ShapedArray(float32[2])``."""


@dataclass
class Entry:
    """One recorded function with one input signature."""

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
    findings: int = 0
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
    """SHA-256 of the function's source text (``""``: unknown)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # its fields are plain values

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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        return cls(
            name=str(data["name"]),
            folder=str(data["folder"]),
            source=data.get("source"),
            signature=str(data["signature"]),
            stage=str(data["stage"]),
            lowerings=int(data["lowerings"]),
            findings=int(data.get("findings", 0)),
            statics=str(data.get("statics", "")),
            program=str(data.get("program", "")),
            identity=str(data.get("identity", "")),
            names_digest=str(data.get("names_digest", "")),
            source_digest=str(data.get("source_digest", "")),
        )


@dataclass
class Failure:
    """Lowerings the recorder could not record (the run went on without their reports):
    the function, the first line of the error, and how many times it happened."""

    function: str | None
    error: str
    count: int = 1


MAX_FAILURES = 50
"""Distinct failures an index lists (``Index.failed`` counts them all)."""


@dataclass
class Index:
    """A record folder's ``index.json``."""

    command: list[str]
    functions: list[Entry] = field(default_factory=list)
    internal: int = 0
    """Computations of JAX's own (eager operations, ``jnp`` functions), not recorded."""
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
    exit_code: int | None = None
    """How the run ended: its exit code, ``-N`` for signal N; ``None`` while it runs."""
    jax_version: str | None = None
    process: int | None = None
    """This process's index in a run of several JAX processes (``None``: one process)."""
    processes: int | None = None
    """How many JAX processes the run had (``None``: one)."""

    @property
    def complete(self) -> bool:
        """The run ended by itself with exit 0, or stopped where ``--stop-after`` asked."""
        return self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}  # shallow: written often
        data["functions"] = [e.to_dict() for e in self.functions]
        data["failures"] = [asdict(f) for f in self.failures]
        return {"schema": SCHEMA, "complete": self.complete, **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Index:
        return cls(
            command=[str(c) for c in data["command"]],
            functions=[Entry.from_dict(e) for e in data["functions"]],
            internal=int(data.get("internal", 0)),
            not_selected=int(data.get("not_selected", 0)),
            over_limit=int(data.get("over_limit", 0)),
            other_processes=int(data.get("other_processes", 0)),
            other_lowerings=int(data.get("other_lowerings", 0)),
            failed=int(data.get("failed", 0)),
            failures=[
                Failure(f.get("function"), str(f["error"]), int(f.get("count", 1)))
                for f in data.get("failures", ())
            ],
            stopped_after=data.get("stopped_after"),
            exit_code=data.get("exit_code"),
            jax_version=data.get("jax_version"),
            process=data.get("process"),
            processes=data.get("processes"),
        )

    def write(self, folder: Path) -> None:
        """Write ``index.json``: after every new record, so one function per line, each
        encoded by JSON's C encoder (one indented document of hundreds of entries,
        written as often, was most of what recording a test suite cost)."""
        data = self.to_dict()
        functions = data.pop("functions")
        lines = ",\n  ".join(json.dumps(entry) for entry in functions)
        head = json.dumps(data)[:-1]
        text = head + (f', "functions": [\n  {lines}\n]}}\n' if lines else ', "functions": []}\n')
        write_atomically(folder / INDEX, text, durable=False)

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


OTHER_PROCESS = ".process-{pid}.json"
"""What a process that did not own the folder lowered, for the owner's index."""


def write_other_process(folder: Path, pid: int, lowerings: int) -> None:
    write_json(folder / OTHER_PROCESS.format(pid=pid), {"pid": pid, "lowerings": lowerings})


def collect_other_processes(folder: Path, index: Index) -> None:
    """Count in ``index`` what the run's other processes lowered, and remove their files."""
    for path in sorted(folder.glob(OTHER_PROCESS.format(pid="*"))):
        try:
            lowerings = int(json.loads(path.read_text(encoding="utf-8"))["lowerings"])
        except (OSError, ValueError, KeyError, TypeError):
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
            entry = Entry.from_dict(json.loads((path / ENTRY).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if entry.folder == path.name:
            found.append((path.stat().st_mtime_ns, entry))
    index.functions.extend(entry for _, entry in sorted(found, key=lambda item: item[0]))
    return len(found)


def write_json(path: Path, data: Any) -> None:
    """A record's file, replaced in one step (not forced to disk: a recording outlives
    the run that wrote it, not the machine)."""
    write_atomically(path, json.dumps(data, indent=1, sort_keys=False) + "\n", durable=False)


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
    data = _read_json(folder / INDEX, f"{text}/{INDEX}")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UsageError(f"{text}/{INDEX} is not a {SCHEMA} index")
    try:
        return Index.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        what = f"missing {err}" if isinstance(err, KeyError) else str(err)
        raise UsageError(f"{text}/{INDEX} is not a valid {SCHEMA} index: {what}") from None


def call_data(options: dict[str, Any] | None, why: str | None) -> dict[str, Any]:
    """A record's ``call.json``: the call as a declaration's options, or why it has none."""
    return {"schema": CALL_SCHEMA, "options": options, "why": why}


def replay_problem(folder: Path, entry: Entry) -> str | None:
    """Why an entry's call cannot be replayed (``None``: it can)."""
    try:
        data = json.loads((folder / entry.folder / CALL).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return f"no readable {CALL}"
    if not isinstance(data, dict) or data.get("options") is None:
        why = data.get("why") if isinstance(data, dict) else None
        return str(why or f"no call in {CALL}")
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
    data = _read_json(folder / CALL, where)
    if not isinstance(data, dict) or data.get("schema") != CALL_SCHEMA:
        raise UsageError(f"{where} is not a {CALL_SCHEMA} file")
    options = data.get("options")
    if options is None:
        why = data.get("why") or "the run did not say why"
        raise UsageError(
            f"--args-from-record {text}: the recorded call cannot be replayed ({why}); "
            "give the inputs with --args or --args-from"
        )
    return options_from_mapping(options, where)


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
    lines = ",\n  ".join(codec.line(c.to_dict()) for c in compiles)
    head = f'{{"schema": "{COMPILES_SCHEMA}", "dropped": {dropped}, "compiles": ['
    text = head + (f"\n  {lines}\n]}}\n" if lines else "]}\n")
    write_atomically(folder / COMPILES, text, durable=False)


def read_compiles(folder: Path) -> tuple[list[Compile], int]:
    """The compiles a record folder lists, and how many more it only counted; none for
    a recording made before compiles were recorded."""
    path = folder / COMPILES
    if not path.is_file():
        return [], 0
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Compile.from_dict(c) for c in data["compiles"]], int(data.get("dropped", 0))
    except (ValueError, KeyError, TypeError) as err:
        raise UsageError(f"{path}: not a {COMPILES_SCHEMA} file ({err}); record the run "
                         "again") from None  # fmt: skip
