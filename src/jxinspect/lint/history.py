"""The history database of ``lint --history FILE``, read by ``jxinspect trend FILE``:
SQLite (the standard library's ``sqlite3``), one row per target per run.

Layout: the table ``history`` holds a column per plain field of
:class:`~jxinspect.core.history.HistoryRow` and ``id``, the order rows were appended in;
``collectives`` a row per :class:`~jxinspect.core.history.CollectiveBytes` of a history
row (``row``, its ``id``). The columns are derived from those types.

A history is data from elsewhere: its schema (``sqlite_master``, every table, index,
view and trigger) must be exactly the one :func:`_create` makes, or the file is refused,
naming what it holds that a history does not (a trigger would run on every append); a
file that is not SQLite, or a path that is not a regular file (a device, a FIFO: never
opened), is refused too. SQLite's typing is loose: each value read is checked against its
column's type, and one that is not (text in an integer column) is one error line naming
the row and column. The database runs with ``trusted_schema`` off; ``trend`` opens it
read-only and streams its rows.

Writers: a run appends its rows in one ``BEGIN IMMEDIATE`` transaction (the first also
makes the tables; the schema is checked inside it), waiting up to
:data:`BUSY_TIMEOUT_S` while another writer (a CI shard, a concurrent job) holds the
file: no row is lost, none is half-written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import sqlite3
import stat
import subprocess
import typing
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jxinspect.core import artifacts
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.history import CollectiveBytes, HistoryRow, history_row
from jxinspect.lint.workers.protocol import Outcome

BUSY_TIMEOUT_S = 120.0
"""How long a writer waits for another to finish before it gives up."""
ROWS, COLLECTIVES = "history", "collectives"
_SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL"}
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))  # fmt: skip

Column = tuple[str, str, bool]
"""A column's name, SQL type and whether it is ``NOT NULL``."""


def _columns(kind: type) -> tuple[Column, ...]:
    """A column per field of ``kind`` that holds a string or a number."""
    hints = typing.get_type_hints(kind)
    found = []
    for f in dataclasses.fields(kind):
        hint = hints[f.name]
        parts = typing.get_args(hint) or (hint,)
        plain = [part for part in parts if part is not type(None)]
        if len(plain) == 1 and plain[0] in _SQL_TYPES:
            found.append((f.name, _SQL_TYPES[plain[0]], type(None) not in parts))
    return tuple(found)


ROW_COLUMNS = _columns(HistoryRow)
COLLECTIVE_COLUMNS = _columns(CollectiveBytes)
Layout = dict[str, tuple[Column, ...]]
"""Each table's columns, in order (as a database holds them)."""
LAYOUT: Layout = {
    ROWS: (("id", "INTEGER", False), *ROW_COLUMNS),
    COLLECTIVES: (("row", "INTEGER", True), *COLLECTIVE_COLUMNS),
}
"""Each table's columns, in order."""
ADDED: dict[str, tuple[str, ...]] = {ROWS: ("peak",)}
"""The columns a history an older jxinspect wrote lacks, by table (each the last of its
table): read as ``NULL``, added by the next run that appends (``ALTER TABLE``, which
leaves the schema exactly what :func:`_create` makes now)."""


def _names(columns: tuple[Column, ...], table: str = "") -> str:
    prefix = f'"{table}".' if table else ""
    return ", ".join(f'{prefix}"{name}"' for name, _, _ in columns)


def _create(db: sqlite3.Connection, layout: Layout = LAYOUT) -> None:
    for table, columns in layout.items():
        defined = [f'"{n}" {t}{" NOT NULL" if required else ""}' for n, t, required in columns]
        if table == ROWS:
            defined[0] += " PRIMARY KEY"
        db.execute(f'CREATE TABLE "{table}" ({", ".join(defined)})')
    db.execute(f'CREATE INDEX "{COLLECTIVES}_row" ON "{COLLECTIVES}" ("row")')


_SCHEMA = 'SELECT "type", "name", "tbl_name", "sql" FROM main.sqlite_master'
"""Everything a database holds: each table, index, view and trigger, with its SQL."""
SchemaEntry = tuple[Any, ...]
"""A row of :data:`_SCHEMA`: type, name, table, SQL."""


def _older_layout() -> Layout:
    """The layout of a history written before the :data:`ADDED` columns."""
    return {
        table: tuple(c for c in columns if c[0] not in ADDED.get(table, ()))
        for table, columns in LAYOUT.items()
    }


@functools.cache
def _schema(older: bool = False) -> frozenset[SchemaEntry]:
    """The schema of a history: what :func:`_create` makes in a new database (``older``:
    what it made before the :data:`ADDED` columns)."""
    db = sqlite3.connect(":memory:")
    try:
        _create(db, _older_layout() if older else LAYOUT)
        return frozenset(db.execute(_SCHEMA))
    finally:
        db.close()


def _layout(db: sqlite3.Connection, path: Path, write: bool = False) -> Layout | None:
    """The columns the database holds, ``None`` where it is empty; one an older
    jxinspect wrote gains the :data:`ADDED` columns where ``write`` (else it is read as
    it is); a schema that is not exactly a history's (another table, a view, a trigger,
    an index, a column) is refused, naming the first such entry."""
    held = frozenset(db.execute(_SCHEMA))
    if not held:
        return None
    ours = _schema()
    if held == ours:
        return LAYOUT
    if held == _schema(older=True):
        if not write:
            return _older_layout()
        for table, added in ADDED.items():
            for name, kind, _ in (c for c in LAYOUT[table] if c[0] in added):
                db.execute(f'ALTER TABLE main."{table}" ADD COLUMN "{name}" {kind}')
        return LAYOUT
    names = {(kind, name) for kind, name, _, _ in ours}
    extra = sorted((str(k), str(n)) for k, n, _, _ in held - ours)
    missing = sorted((str(k), str(n)) for k, n, _, _ in ours - held)
    if extra:
        kind, name = extra[0]
        article = "an" if kind == "index" else "a"
        said = (
            f"its {kind} {name} is not a history's"
            if (kind, name) in names
            else f"it holds {article} {kind} {name}"
        )
    else:
        said = "it has no {} {}".format(*missing[0])
    raise UsageError(
        f"{path} is a SQLite database with other contents than a jxinspect history ({said}); "
        "give a new path or a file lint --history wrote"
    )


def _check_path(path: Path) -> None:
    """Refuse a path that is there and not a regular file, without opening it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        raise UsageError(f"cannot read the history database {path}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise UsageError(
            f"{path} is {kind}, not a regular file; give a history database file "
            "(SQLite; a new path makes one)"
        )


HISTORY_LIMIT = 1 << 30
"""The most a history read for ``trend`` may hold (a row per target per run: years of
runs of a large project are a few hundred MiB)."""


def _read_only(path: Path) -> sqlite3.Connection:
    """The history at ``path``, read whole into memory first and handed to SQLite from
    there, so what SQLite reads is the file that was checked (SQLite given a name, even
    ``/proc/self/fd/N``, opens the name again): a regular file, never waited on as a FIFO,
    checked as opened, bounded (:func:`~jxinspect.core.artifacts.open_regular`), read
    under SQLite's own shared lock (:func:`_shared`), so a run writing it at the time is
    waited for, as SQLite would. Python 3.10, which cannot hand SQLite bytes, opens it by
    name, checked just before."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    if not hasattr(db, "deserialize"):  # pragma: no cover - Python 3.10
        db.close()
        where = f"{path.resolve().as_uri()}?mode=ro"
        return sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=True)
    try:
        with artifacts.open_regular(path) as file, _shared(file.fileno()):
            data = artifacts.read_open(file, limit=HISTORY_LIMIT, shown=str(path))
    except FileNotFoundError:
        db.close()
        raise no_such_file(path) from None
    except BaseException:
        db.close()
        raise
    if data:  # an empty file is an empty database (deserialize refuses no bytes)
        db.deserialize(data)
    return db


_PENDING_BYTE = 0x40000000
_SHARED_FIRST, _SHARED_SIZE = _PENDING_BYTE + 2, 510
"""Where SQLite's POSIX locks lie in a database file (its ``os_unix.c``, the file
format's locking protocol): a reader holds a read lock on the shared range, a writer
needs a write lock on it to change the file."""


@contextlib.contextmanager
def _shared(handle: int) -> Iterator[None]:
    """Hold SQLite's shared lock on the open database ``handle``, taken as SQLite takes
    it (the pending byte first, so a writer waiting for its turn goes first)."""
    import fcntl

    fcntl.lockf(handle, fcntl.LOCK_SH, 1, _PENDING_BYTE)
    try:
        fcntl.lockf(handle, fcntl.LOCK_SH, _SHARED_SIZE, _SHARED_FIRST)
    finally:
        fcntl.lockf(handle, fcntl.LOCK_UN, 1, _PENDING_BYTE)
    try:
        yield
    finally:
        fcntl.lockf(handle, fcntl.LOCK_UN, _SHARED_SIZE, _SHARED_FIRST)


@contextlib.contextmanager
def _database(path: Path, *, write: bool) -> Iterator[tuple[sqlite3.Connection, Layout | None]]:
    """The database at ``path`` (made if ``write``) and the columns it holds (``None``:
    it is empty, read-only), in one transaction whose first step checks it is a history;
    a file that is not one is one error line naming it. Read-only where ``write`` is not
    asked."""
    _check_path(path)
    try:
        if write:
            db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        else:
            db = _read_only(path)
    except sqlite3.Error as err:
        raise UsageError(f"cannot open the history database {path}: {err}") from None
    try:
        db.execute("PRAGMA trusted_schema = OFF")  # no function of the schema runs
        if not write:
            db.execute("PRAGMA query_only = ON")
        db.execute("BEGIN IMMEDIATE" if write else "BEGIN")  # checked and used as one
        layout = _layout(db, path, write)
        if layout is None and write:
            _create(db)
            layout = LAYOUT
        yield db, layout
        if write:
            db.execute("COMMIT")
    except sqlite3.DatabaseError as err:
        if "not a database" in str(err) or "malformed" in str(err):
            raise UsageError(
                f"{path} is not a SQLite database; give a new path or a file lint --history wrote"
            ) from None
        raise UsageError(f"cannot use the history database {path}: {err}") from None
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.close()


def check_history(path: Path) -> Path:
    """``path``, checked before a run stages anything: a history database (or an empty
    file), or a new path in a folder that is there."""
    _check_path(path)
    if path.exists():
        with _database(path, write=False):
            pass
    elif not path.parent.is_dir():
        raise UsageError(
            f"cannot make the history database {path}: there is no folder {path.parent}"
        )
    return path


def _insert(table: str) -> str:
    """An insert into our table of the file itself (``main``): with the schema checked
    to be ours, no trigger or view can stand in its way."""
    columns = LAYOUT[table][1:] if table == ROWS else LAYOUT[table]
    return (
        f'INSERT INTO main."{table}" ({_names(columns)}) VALUES ({", ".join("?" * len(columns))})'
    )


def append(path: Path, rows: list[HistoryRow]) -> None:
    """Append ``rows`` in one transaction (making the database where there is none)."""
    with _database(path, write=True) as (db, _):
        for row in rows:
            cursor = db.execute(_insert(ROWS), [getattr(row, n) for n, _, _ in ROW_COLUMNS])
            for c in row.collectives:
                db.execute(_insert(COLLECTIVES), (cursor.lastrowid, *dataclasses.astuple(c)))


_WORDS = {"TEXT": "text", "INTEGER": "an integer", "REAL": "a number"}
_TYPES = {"TEXT": ("text",), "INTEGER": ("integer",), "REAL": ("real", "integer")}
"""What SQLite's ``typeof`` may say of a value in a column of each type."""


def _mistyped(column: Column) -> str:
    """SQL that holds where a value is not of its column's type (an infinite number
    too: no measure is)."""
    name, kind, required = column
    allowed = _TYPES[kind] + (() if required else ("null",))
    test = f"""typeof("{name}") NOT IN ({", ".join(f"'{t}'" for t in allowed)})"""
    return f'{test} OR abs("{name}") = 9e999' if kind == "REAL" else test


def _check_values(db: sqlite3.Connection, path: Path, layout: Layout) -> None:
    """Refuse a database holding a value that is not of its column's type (SQLite's
    typing is loose: text in an integer column), checked by SQLite itself in one pass
    over each table, in one error line naming the first such row and column."""
    for table, columns in layout.items():
        test = " OR ".join(f"({_mistyped(column)})" for column in columns)
        query = f'SELECT rowid, {_names(columns)} FROM main."{table}" WHERE {test} LIMIT 1'
        for rowid, *values in db.execute(query):
            for column, found in zip(columns, values):
                _check_value(path, table, rowid, column, found)


def _check_value(path: Path, table: str, row: object, column: Column, found: object) -> None:
    """Refuse ``found``, read from ``column``, if it is not of the column's type."""
    name, kind, required = column
    if found is None and not required:
        return
    fits = {"TEXT": (str,), "INTEGER": (int,), "REAL": (int, float)}[kind]
    if isinstance(found, fits) and not (isinstance(found, float) and math.isinf(found)):
        return
    held = {type(None): "nothing", str: "text", int: "an integer", bytes: "a blob"}.get(
        type(found), f"the number {found}"
    )
    raise UsageError(
        f"{path}: table {table}, row {row}: column {name} holds {held} where "
        f"{_WORDS[kind]} belongs; give a file lint --history wrote"
    )


def _selected(columns: tuple[Column, ...], held: tuple[Column, ...], table: str) -> str:
    """``columns`` of ``table`` as a SELECT lists them, ``NULL`` for one not ``held``."""
    return ", ".join(
        f'{table}."{name}"' if (name, kind, required) in held else "NULL"
        for name, kind, required in columns
    )


_COUNT = len(ROW_COLUMNS)


def read_rows(path: Path, target: str | None = None) -> Iterator[HistoryRow]:
    """The rows of the database (of ``target`` only, if given), in the order they were
    appended, read one at a time once every value is checked (none in a new database)."""
    where = ' WHERE h."target" = ?' if target is not None else ""
    with _database(path, write=False) as (db, layout):
        if layout is None:
            return
        _check_values(db, path, layout)
        rows = _selected(LAYOUT[ROWS], layout[ROWS], "h")
        query = (
            f"SELECT {rows}, {_names(LAYOUT[COLLECTIVES], 'c')} "
            f'FROM main."{ROWS}" AS h LEFT JOIN main."{COLLECTIVES}" AS c ON c."row" = h."id"'
            f'{where} ORDER BY h."id", c."kind", c."axes"'
        )
        key: object = None
        values: tuple[Any, ...] = ()
        held: list[CollectiveBytes] = []
        for found in db.execute(query, () if target is None else (target,)):
            if found[0] != key:
                if values:
                    yield _row(values, held)
                key, values, held = found[0], found[1 : _COUNT + 1], []
            if found[_COUNT + 1] is not None:  # the row has a collective
                held.append(CollectiveBytes(*found[_COUNT + 2 :]))
        if values:
            yield _row(values, held)


def _row(values: tuple[Any, ...], held: list[CollectiveBytes]) -> HistoryRow:
    """A row from its columns' values (the fields before ``collectives``, in order)."""
    return HistoryRow(*values, tuple(held))  # type: ignore[call-arg]  # checked below


assert [f.name for f in dataclasses.fields(HistoryRow)] == [
    *(name for name, _, _ in ROW_COLUMNS),
    "collectives",
], "a history row's fields are its columns, then its collectives"


def targets(path: Path, limit: int) -> list[str]:
    """The database's first ``limit`` targets, in order (for an error message)."""
    query = f'SELECT DISTINCT "target" FROM main."{ROWS}" ORDER BY "target" LIMIT ?'
    with _database(path, write=False) as (db, layout):
        if layout is None:
            return []
        return [str(name) for (name,) in db.execute(query, (limit,))]


def commit_of(root: Path) -> str | None:
    """``git rev-parse HEAD`` in ``root``; ``None`` where it is no git repository (or
    git is not installed, or there is no commit yet)."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and found else None


def record_run(path: Path, root: Path, outcomes: Mapping[str, Outcome]) -> None:
    """Append a row for each target of the run that reported (by name), all with the
    run's time and commit."""
    time = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = commit_of(root)
    rows = [
        history_row(outcome.report, target=name, time=time, commit=commit)
        for name, outcome in sorted(outcomes.items())
        if outcome.report is not None
    ]
    append(path, rows)
