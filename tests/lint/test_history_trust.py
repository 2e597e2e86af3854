"""A history database is data from elsewhere, through the installed command: a file whose
schema holds anything ``lint --history`` does not make (a trigger, a view, another index)
is refused before anything runs or is written; a value of the wrong type, an infinite
number, is one error line naming its row and column; every string ``trend`` prints from
it is escaped; a history too long to show whole is one line, and ``trend`` text reads
the rows one at a time."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import CliResult, error_line
from test_lint_history import make_repo

from jxinspect.core.history import CollectiveBytes, HistoryRow
from jxinspect.lint.history import append

Run = Callable[..., CliResult]

WHEN = "2026-12-03T08:00:00Z"


def history_row(target: str = "m.py:f", temporaries: int = 64, **given: str) -> HistoryRow:
    fields = {"time": WHEN, "commit": "c1", "jax_version": "0.10.2", **given}
    collective = CollectiveBytes(given.get("kind", "all-reduce"), "data", 64, 64)
    return HistoryRow(target, fields["time"], fields["commit"], fields["jax_version"], "cpu", 8,
                      512, 64, temporaries, 0, None, None, collectives=(collective,))  # fmt: skip


def a_history(folder: Path) -> Path:
    database = folder / "h.db"
    append(database, [history_row()])
    append(database, [history_row(temporaries=128)])
    return database


FOREIGN = {
    "a trigger tamper": "CREATE TRIGGER tamper AFTER INSERT ON history "
    "BEGIN UPDATE history SET target = 'TAMPERED'; END",
    "a trigger grow": "CREATE TRIGGER grow AFTER INSERT ON collectives BEGIN "
    "INSERT INTO collectives SELECT row, kind, axes, bytes, bytes_per_step FROM collectives; END",
    "a view everything": "CREATE VIEW everything AS SELECT * FROM history",
    "an index by_target": "CREATE INDEX by_target ON history (target)",
    "a table notes": "CREATE TABLE notes (text TEXT)",
}


@pytest.mark.parametrize("held", FOREIGN)
@pytest.mark.parametrize("command", ["lint", "trend"])
def test_a_history_holding_anything_else_is_refused_before_it_runs(
    tmp_path: Path, run_cli: Run, held: str, command: str
) -> None:
    repo = make_repo(tmp_path)
    database = a_history(repo)
    with sqlite3.connect(database) as db:
        db.execute(FOREIGN[held])
    kept = database.read_bytes()
    args = ("lint", "--history", "h.db") if command == "lint" else ("trend", "h.db")
    result = run_cli(*args, cwd=repo)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: h.db is a SQLite database with other contents than a jxinspect history (it "
        f"holds {held}); give a new path or a file lint --history wrote"
    )
    assert database.read_bytes() == kept and result.stdout == ""
    assert not (repo / ".jxinspect_cache").exists()  # nothing was staged


def test_a_table_laid_out_otherwise_is_named(tmp_path: Path, run_cli: Run) -> None:
    database = a_history(tmp_path)
    with sqlite3.connect(database) as db:
        db.execute("DROP INDEX collectives_row")
    result = run_cli("trend", "h.db", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert "(it has no index collectives_row)" in error_line(result)


MALFORMED = {
    "UPDATE history SET devices = 'eight' WHERE id = 2":
        "table history, row 2: column devices holds text where an integer belongs",
    "UPDATE history SET bytes_accessed = 9e999 WHERE id = 1":
        "table history, row 1: column bytes_accessed holds the number inf where a number belongs",
    "UPDATE history SET target = x'00ff' WHERE id = 1":
        "table history, row 1: column target holds a blob where text belongs",
    "UPDATE collectives SET bytes = 'many' WHERE rowid = 2":
        "table collectives, row 2: column bytes holds text where an integer belongs",
    "UPDATE collectives SET bytes_per_step = 1.5 WHERE rowid = 1":
        "table collectives, row 1: column bytes_per_step holds the number 1.5 where an integer "
        "belongs",
}  # fmt: skip


@pytest.mark.parametrize("change", MALFORMED)
@pytest.mark.parametrize("format", ["text", "json", "html"])
def test_a_value_of_the_wrong_type_is_one_line(
    tmp_path: Path, run_cli: Run, change: str, format: str
) -> None:
    database = a_history(tmp_path)
    with sqlite3.connect(database) as db:
        db.execute(change)
    result = run_cli("trend", "h.db", "--format", format, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: h.db: {MALFORMED[change]}; give a file lint --history wrote"
    )
    assert result.stdout == ""


HOSTILE = "m.py:f\x1b[2J\u202e\nfake: 0 rows"


def test_every_string_trend_prints_from_a_history_is_escaped(tmp_path: Path, run_cli: Run) -> None:
    database = tmp_path / "h.db"
    said = {"time": "t\x1b[31m", "commit": "c\x07\r", "jax_version": "0.10\u2028", "kind": "a\nb"}
    append(database, [history_row(HOSTILE, **said)])
    append(database, [history_row(HOSTILE, temporaries=128, **said)])
    text = run_cli("trend", "h.db", cwd=tmp_path)
    assert text.returncode == 0, text.describe()
    for raw in ("\x1b", "\x07", "\r", "\u202e", "\u2028"):
        assert raw not in text.stdout, text.describe()
    lines = text.stdout.splitlines()
    assert lines[1] == "m.py:f\\x1b[2J\\u202e\\nfake: 0 rows: 2 rows, 1 change", text.describe()
    assert lines[3].split()[:3] == ["t\\x1b[31m", "c\\x07\\r", "0.10\\u2028"], text.describe()
    assert len(lines) == 4, text.describe()
    unknown = run_cli("trend", "h.db", "m.py:g", cwd=tmp_path)
    assert unknown.returncode == 2, unknown.describe()
    assert error_line(unknown).endswith("; it holds m.py:f\\x1b[2J\\u202e\\nfake: 0 rows")


LIMIT = 100_000


def test_a_history_too_long_to_show_whole_is_one_line_and_text_reads_it(
    tmp_path: Path, run_cli: Run
) -> None:
    from jxinspect.cli.trend import TREND_LIMIT
    from jxinspect.lint.history import ROWS, _insert

    assert TREND_LIMIT == LIMIT
    database = tmp_path / "h.db"
    append(database, [])
    with sqlite3.connect(database) as db:
        db.executemany(_insert(ROWS), [("m.py:f", WHEN, None, "0.10.2", "cpu", 8, 512, 64, 64,
                                        0, None, None, None)] * LIMIT)  # fmt: skip
    every = run_cli("trend", "h.db", "--format", "json", cwd=tmp_path)
    assert every.returncode == 2, every.describe()
    assert error_line(every) == (
        "error: h.db holds more than trend shows at once (more than 100,000 targets, rows and "
        "changes; --format json and html give every row); name a TARGET, or read the file "
        "with any SQLite client"
    )
    assert every.stdout == ""
    changes = run_cli("trend", "h.db", cwd=tmp_path)
    assert changes.returncode == 0, changes.describe()
    assert changes.stdout == (
        "h.db: 1 target, 100000 rows, 0 changes\nm.py:f: 100000 rows, no change\n"
    )


def test_a_history_written_before_the_peak_was_kept_reads_and_gains_it(
    tmp_path: Path, run_cli: Run
) -> None:
    """A history without the ``peak`` column (as lint wrote it before it kept one): its
    rows read with no peak, ``trend`` reads it, and the next append adds the column, the
    schema then exactly a new history's."""
    from jxinspect.lint.history import ADDED, ROWS, _schema, read_rows

    database = tmp_path / "h.db"
    append(database, [history_row()])
    with sqlite3.connect(database) as db:  # as the older layout made it
        db.execute(f'ALTER TABLE "{ROWS}" DROP COLUMN "peak"')
    assert ADDED[ROWS] == ("peak",)
    held = 'SELECT "type", "name", "tbl_name", "sql" FROM sqlite_master'
    with sqlite3.connect(database) as db:
        assert frozenset(db.execute(held)) == _schema(older=True)
    [row] = list(read_rows(database))
    assert row.peak is None and row.temporaries == 64
    assert run_cli("trend", "h.db", cwd=tmp_path).returncode == 0
    append(database, [replace(history_row(temporaries=128), peak=4096)])
    with sqlite3.connect(database) as db:
        schema = frozenset(
            db.execute('SELECT "type", "name", "tbl_name", "sql" FROM sqlite_master')
        )
    assert schema == _schema()
    assert [(r.temporaries, r.peak) for r in read_rows(database)] == [(64, None), (128, 4096)]


def test_a_history_swapped_with_a_fifo_while_it_is_read_is_never_waited_on(
    tmp_path: Path,
) -> None:
    """The file is opened first and handed to SQLite by its descriptor: a FIFO swapped in
    between the check and the open is refused (one line), never waited on."""
    import os
    import threading

    from jxinspect.core.errors import UsageError
    from jxinspect.lint.history import read_rows

    database = a_history(tmp_path)
    kept, spare = tmp_path / "kept.db", tmp_path / "spare"
    os.link(database, kept)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            spare.unlink(missing_ok=True)
            os.mkfifo(spare)
            os.replace(spare, database)
            os.link(kept, spare)
            os.replace(spare, database)

    outcomes: list[str] = []

    def read() -> None:
        for _ in range(300):
            try:
                outcomes.append(str(len(list(read_rows(database)))))
            except UsageError as err:
                assert "FIFO" in str(err), err
                outcomes.append("refused")

    swapper = threading.Thread(target=swap, daemon=True)
    reader = threading.Thread(target=read, daemon=True)
    swapper.start()
    reader.start()
    reader.join(120)  # a read that waits on the FIFO never ends
    stop.set()
    swapper.join(10)
    assert not reader.is_alive(), f"a read waited on a FIFO after {len(outcomes)} reads"
    assert len(outcomes) == 300 and set(outcomes) <= {"2", "refused"}, set(outcomes)
