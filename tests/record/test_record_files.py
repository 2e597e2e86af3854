"""A record folder's files as the codec writes and reads them: one real recording, then
copies of it that jxinspect did not write (hand-edited, truncated, another version's),
each read by ``show`` (or ``lower --args-from-record``) into exactly one error line that
names the file, the JSON path and what was expected; an older index reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import error_line, record_grow, run_cli

from jxinspect.core import codec, schemas
from jxinspect.core.recompiles import Compiles
from jxinspect.core.recording import Index

AGAIN = "record the run again (`jxinspect record -o FOLDER -- COMMAND`)"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_grow(tmp_path_factory.mktemp("files"))


@pytest.fixture
def runs(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the recording to break."""
    return Path(shutil.copytree(recorded, tmp_path / "runs"))


def test_index_and_compiles_are_one_row_a_line_and_read_back(recorded: Path) -> None:
    """Both files are laid out by the one codec: the head on the first line, a row a
    line; each reads back into its type and is written again byte for byte."""
    for name, kind, rows in (("index.json", Index, "functions"),
                             ("compiles.json", Compiles, "compiles")):  # fmt: skip
        text = (recorded / name).read_text(encoding="utf-8")
        lines = text.splitlines()
        assert lines[0].endswith(f'"{rows}":[') and lines[-1] == "]}", text
        assert len(lines) == 2 + 2, text  # grow, then grow.2
        assert all(json.loads(row.rstrip(",")) for row in lines[1:-1])
        read = codec.decode(text, kind, source=name)
        assert codec.by_line(read, rows) == text
    index = codec.decode((recorded / "index.json").read_text(), Index, source="index.json")
    assert index.complete and [e.folder for e in index.functions] == ["grow", "grow.2"]


def test_index_and_compiles_are_valid_against_their_shipped_schemas(recorded: Path) -> None:
    from jsonschema import Draft202012Validator

    for name, schema in (("index.json", "record"), ("compiles.json", "compiles")):
        shipped = json.loads((schemas.folder() / f"{schema}.schema.json").read_text("utf-8"))
        data = json.loads((recorded / name).read_text(encoding="utf-8"))
        assert not [e.message for e in Draft202012Validator(shipped).iter_errors(data)], name
        data["surprise"] = 1  # the codec writes every field, and no other
        assert list(Draft202012Validator(shipped).iter_errors(data)), name


def _show_error(runs: Path) -> str:
    result = run_cli("show", runs, cwd=runs.parent)
    assert result.returncode == 2 and result.stdout == "", result.describe()
    return error_line(result)


def _edit(path: Path, change: dict[str, object], row: int | None = None) -> None:
    """Change keys of a file's object (or of one row of its list)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = "functions" if path.name == "index.json" else "compiles"
    (data if row is None else data[rows][row]).update(change)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_hand_edited_index_is_one_line_with_its_json_path(runs: Path) -> None:
    _edit(runs / "index.json", {"lowerings": "2"}, row=1)
    assert _show_error(runs) == (
        f"error: {runs}/index.json is not a jxinspect.record/1 file (at "
        f"$.functions[1].lowerings: expected `int`, got `str`); {AGAIN}"
    )


def test_an_index_missing_a_required_field_is_one_line(runs: Path) -> None:
    data = json.loads((runs / "index.json").read_text(encoding="utf-8"))
    del data["functions"][0]["signature"]
    (runs / "index.json").write_text(json.dumps(data), encoding="utf-8")
    assert _show_error(runs) == (
        f"error: {runs}/index.json is not a jxinspect.record/1 file (at $.functions[0]: "
        f"object missing required field `signature`); {AGAIN}"
    )


def test_a_truncated_index_is_one_line(runs: Path) -> None:
    (runs / "index.json").write_text('{"schema":"jxinspect.record/1","command":[', "utf-8")
    assert _show_error(runs) == (f"error: {runs}/index.json is not JSON (input data was truncated)")


def test_an_index_of_another_version_says_to_record_again(runs: Path) -> None:
    _edit(runs / "index.json", {"schema": "jxinspect.record/2"})
    assert _show_error(runs) == (
        f"error: {runs}/index.json is not a jxinspect.record/1 file (its schema is "
        f"'jxinspect.record/2'); {AGAIN}"
    )
    (runs / "index.json").write_text("[]", encoding="utf-8")
    assert _show_error(runs) == (
        f'error: {runs}/index.json is not a jxinspect.record/1 file (it has no "schema": '
        f'"jxinspect.record/1"); {AGAIN}'
    )


def test_an_older_index_reads(runs: Path) -> None:
    """An index as jxinspect wrote it before entries had statics and program digests,
    and before the run's completeness was written (indented, functions last); and with a
    count of findings, as it wrote one until a recording kept none (``show`` counts them
    as judged when read)."""
    data = json.loads((runs / "index.json").read_text(encoding="utf-8"))
    del data["complete"]
    for entry in data["functions"]:
        for key in ("statics", "program"):
            del entry[key]
        entry["findings"] = 7
    functions = data.pop("functions")
    older = json.dumps(data)[:-1] + ', "functions": [\n  '
    older += ",\n  ".join(json.dumps(e) for e in functions) + "\n]}\n"
    (runs / "index.json").write_text(older, encoding="utf-8")
    shown = run_cli("show", runs, "--format", "json", cwd=runs.parent)
    assert shown.returncode == 0, shown.describe()
    read = json.loads(shown.stdout)
    assert read["complete"] is True and [f["folder"] for f in read["functions"]] == [
        "grow", "grow.2"
    ]  # fmt: skip
    assert [(f["findings"], f["statics"], f["program"]) for f in read["functions"]] == [
        (0, "", ""), (0, "", "")
    ]  # fmt: skip


def test_a_hand_edited_compiles_file_is_one_line(runs: Path) -> None:
    data = json.loads((runs / "compiles.json").read_text(encoding="utf-8"))
    data["compiles"][1]["reasons"][0]["kind"] = "colour"
    (runs / "compiles.json").write_text(json.dumps(data), encoding="utf-8")
    assert _show_error(runs) == (
        f"error: {runs}/compiles.json is not a jxinspect.compiles/1 file (at "
        f"$.compiles[1].reasons[0].kind: invalid enum value 'colour'); {AGAIN}"
    )


def test_a_truncated_compiles_file_is_one_line(runs: Path) -> None:
    text = (runs / "compiles.json").read_text(encoding="utf-8")
    (runs / "compiles.json").write_text(text.splitlines()[0], encoding="utf-8")
    assert _show_error(runs) == (
        f"error: {runs}/compiles.json is not JSON (input data was truncated)"
    )


def test_a_recording_without_compiles_reads(runs: Path) -> None:
    """A recording made before compiles were recorded has no compiles.json."""
    (runs / "compiles.json").unlink()
    shown = run_cli("show", runs, "--format", "json", cwd=runs.parent)
    assert shown.returncode == 0, shown.describe()
    assert json.loads(shown.stdout)["recompiles"] == []


def test_a_hand_edited_call_is_one_line(runs: Path) -> None:
    _edit_call = json.loads((runs / "grow" / "call.json").read_text(encoding="utf-8"))
    _edit_call["options"] = ["f32[2]"]
    (runs / "grow" / "call.json").write_text(json.dumps(_edit_call), encoding="utf-8")
    result = run_cli("lower", "grow.py:grow", "--args-from-record", runs / "grow",
                     cwd=runs.parent)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: {runs}/grow/call.json is not a jxinspect.call/1 file (at $.options: "
        f"expected `object | null`, got `array`); {AGAIN}"
    )
    shown = json.loads(run_cli("show", runs, "--format", "json", cwd=runs.parent).stdout)
    assert [(f["replay"], f["replay_problem"]) for f in shown["functions"]] == [
        (False, "no readable call.json"), (True, None)
    ]  # fmt: skip
