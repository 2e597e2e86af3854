"""The history database of ``lint --history FILE``, read by ``jxinspect trend FILE``:
SQLite (the standard library's ``sqlite3``), one row per target per run.

Layout: the table ``history`` holds a column per plain field of
:class:`~jxinspect.core.history.HistoryRow` and ``id``, the order rows were appended in;
``collectives`` a row per :class:`~jxinspect.core.history.CollectiveBytes` of a history
row (``row``, its ``id``). The columns are derived from those types; a file with other
tables or columns is refused, naming it, and so is a file that is not SQLite, or a path
that is not a regular file (a device, a FIFO: never opened).

Writers: a run appends its rows in one ``BEGIN IMMEDIATE`` transaction (the first also
makes the tables), waiting up to :data:`BUSY_TIMEOUT_S` while another writer (a CI shard,
a concurrent job) holds the file: no row is lost, none is half-written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import stat
import subprocess
import typing
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path

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
LAYOUT: dict[str, tuple[Column, ...]] = {
    ROWS: (("id", "INTEGER", False), *ROW_COLUMNS),
    COLLECTIVES: (("row", "INTEGER", True), *COLLECTIVE_COLUMNS),
}
"""Each table's columns, in order."""


def _names(columns: tuple[Column, ...]) -> str:
    return ", ".join(f'"{name}"' for name, _, _ in columns)


def _create(db: sqlite3.Connection) -> None:
    for table, columns in LAYOUT.items():
        defined = [f'"{n}" {t}{" NOT NULL" if required else ""}' for n, t, required in columns]
        if table == ROWS:
            defined[0] += " PRIMARY KEY"
        db.execute(f'CREATE TABLE "{table}" ({", ".join(defined)})')
    db.execute(f'CREATE INDEX "{COLLECTIVES}_row" ON "{COLLECTIVES}" ("row")')


def _layout(db: sqlite3.Connection) -> dict[str, tuple[Column, ...]]:
    tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {
        table: tuple(
            (name, kind.upper(), bool(required))
            for _, name, kind, required, _, _ in db.execute(f'PRAGMA table_info("{table}")')
        )
        for table in tables
    }


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


@contextlib.contextmanager
def _database(path: Path, *, write: bool) -> Iterator[sqlite3.Connection]:
    """The database at ``path`` (made if ``write``), checked to be a history; a file that
    is not one is one error line naming it."""
    _check_path(path)
    if not write and not path.exists():
        raise no_such_file(path)
    where = str(path) if write else f"{path.resolve().as_uri()}?mode=ro"
    try:
        db = sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=not write)
    except sqlite3.Error as err:
        raise UsageError(f"cannot open the history database {path}: {err}") from None
    try:
        if write:
            db.execute("BEGIN IMMEDIATE")
        layout = _layout(db)
        if layout and layout != LAYOUT:
            raise UsageError(
                f"{path} is a SQLite database with other tables than a jxinspect history; "
                "give a new path or a file lint --history wrote"
            )
        if not layout and write:
            _create(db)
        yield db
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
    columns = LAYOUT[table][1:] if table == ROWS else LAYOUT[table]
    return f'INSERT INTO "{table}" ({_names(columns)}) VALUES ({", ".join("?" * len(columns))})'


def append(path: Path, rows: list[HistoryRow]) -> None:
    """Append ``rows`` in one transaction (making the database where there is none)."""
    with _database(path, write=True) as db:
        for row in rows:
            cursor = db.execute(_insert(ROWS), [getattr(row, n) for n, _, _ in ROW_COLUMNS])
            for c in row.collectives:
                db.execute(_insert(COLLECTIVES), (cursor.lastrowid, *dataclasses.astuple(c)))


def read(path: Path) -> list[HistoryRow]:
    """Every row of the database, in the order they were appended (none in a new one)."""
    names = [name for name, _, _ in ROW_COLUMNS]
    with _database(path, write=False) as db:
        if not _layout(db):
            return []
        held: dict[int, list[CollectiveBytes]] = {}
        for row, *values in db.execute(
            f'SELECT {_names(LAYOUT[COLLECTIVES])} FROM "{COLLECTIVES}" '
            'ORDER BY "row", "kind", "axes"'
        ):
            held.setdefault(row, []).append(CollectiveBytes(*values))
        return [
            HistoryRow(**dict(zip(names, values)), collectives=tuple(held.get(key, ())))
            for key, *values in db.execute(
                f'SELECT {_names(LAYOUT[ROWS])} FROM "{ROWS}" ORDER BY "id"'
            )
        ]


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
