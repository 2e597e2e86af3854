"""``jxinspect survey --history``: the shipped surveys side by side, one matrix per level
(program × release), through the command; every cell read back against the shipped
survey files themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from helpers import REPO

from jxinspect.core import codec
from jxinspect.core.survey import MARKS, Mark, Survey
from jxinspect.core.vocabulary import release_key

SHIPPED = REPO / "src" / "jxinspect" / "surveys"
SCHEMA = REPO / "src" / "jxinspect" / "schemas" / "survey-history.schema.json"


def _shipped() -> list[Survey]:
    surveys = [
        codec.decode(f.read_bytes(), Survey, source=f.name) for f in SHIPPED.glob("jax-*.json")
    ]
    return sorted(surveys, key=lambda s: release_key(s.jax_version))


def _expected(survey: Survey, name: str, level: str) -> str:
    """The mark the shipped file gives a program's level, read from the file's JSON."""
    program = next((p for p in codec.plain(survey)["programs"] if p["name"] == name), None)
    if program is None:
        return "absent"
    if program["unavailable"] is not None:
        return "unavailable"
    if program["error"] is not None:
        return "failed"
    cell = next((c for c in program["cells"] if c["level"] == level), None)
    if cell is not None:
        return str(cell["verdict"])
    return "own" if program["jax_own"].get(level.removeprefix("nested.")) else "none"


def test_the_history_json_is_every_shipped_survey_side_by_side(run_cli: Any) -> None:
    from jsonschema import Draft202012Validator

    result = run_cli("survey", "--history", "--format", "json")
    assert result.returncode == 0, result.describe()
    data = json.loads(result.stdout)
    schema = json.loads(SCHEMA.read_text())
    assert not list(Draft202012Validator(schema).iter_errors(data))
    assert set(schema["$defs"]["HistoryCell"]["properties"]["mark"]["enum"]) == set(MARKS)
    assert set(MARKS) == set(get_args(Mark))
    surveys = _shipped()
    assert data["releases"] == [s.jax_version for s in surveys]  # oldest first, all 13
    assert data["releases"][0] == "0.4.35" and len(data["releases"]) >= 13
    by_level = {entry["level"]: entry for entry in data["levels"]}
    assert list(by_level)[:4] == ["jaxpr.args", "jaxpr.results", "main.args", "main.results"]
    assert "compiled.args" not in by_level  # no shipped survey compiled
    for level, entry in by_level.items():
        for row in entry["programs"]:
            marks = [cell["mark"] for cell in row["cells"]]
            assert marks == [_expected(s, row["program"], level) for s in surveys], (level, row)
            # the runs cover the releases in order, one mark each
            covered = []
            for run in row["runs"]:
                first = data["releases"].index(run["first"])
                last = data["releases"].index(run["last"])
                covered += [run["mark"]] * (last - first + 1)
            assert covered == marks
    # the pictures the README tells: scan's body gained debug info in 0.5.3; pmap's
    # arguments lost the user's names in 0.7.2
    scan = next(r for r in by_level["nested.scan"]["programs"] if r["program"] == "scan")
    assert [(r["mark"], r["first"]) for r in scan["runs"]][:2] == [
        ("missing", "0.4.35"),
        ("kept", "0.5.3"),
    ]
    pmap = next(r for r in by_level["main.args"]["programs"] if r["program"] == "pmap")
    assert pmap["runs"][0] == {"mark": "kept", "first": "0.4.35", "last": "0.7.1"}
    # jax.custom_transpose: graded up to 0.9.2, not available from 0.10.0 on (JAX removed it)
    transpose = next(
        r for r in by_level["main.args"]["programs"] if r["program"] == "custom_transpose"
    )
    assert transpose["runs"][-1] == {
        "mark": "unavailable", "first": "0.10.0", "last": data["releases"][-1]
    }  # fmt: skip
    assert {r["mark"] for r in transpose["runs"][:-1]} == {"kept"}
    # a nested level has only the programs that have it in some release
    assert {r["program"] for r in by_level["nested.while"]["programs"]} == {"while_loop"}


def test_the_history_text_draws_a_matrix_per_level(run_cli: Any) -> None:
    result = run_cli("survey", "--history", "--program", "scan", "--program", "pmap")
    assert result.returncode == 0, result.describe()
    lines = result.stdout.splitlines()
    releases = [s.jax_version for s in _shipped()]
    assert lines[0].startswith(f"JAX {releases[0]} to {releases[-1]}: {len(releases)} surveys")
    assert "  partial: a nested jaxpr with debug info that lacks some or all of its names" in lines
    titles = [i for i, line in enumerate(lines) if " (counts " in line]
    levels = [lines[i].split(" (counts ")[0] for i in titles]
    assert levels[:4] == ["jaxpr.args", "jaxpr.results", "main.args", "main.results"]
    assert "nested.scan" in levels and "nested.while" not in levels  # only these programs
    for level, i in zip(levels, titles):
        assert lines[i + 1].split() == ["program", *releases], lines[i + 1]
        end = next(k for k in range(i + 2, len(lines)) if not lines[k].startswith(("scan", "pmap")))
        names = [line.split()[0] for line in lines[i + 2 : end]]
        expected = ["scan", "pmap"]
        assert names == expected if not level.startswith("nested.") else set(names) <= set(expected)
        assert lines[end] in ("moved:", "the same in every release"), lines[end]
    scan = lines[titles[levels.index("nested.scan")] + 2].split()
    assert scan[:4] == ["scan", "missing", "missing", "kept"]
    assert "  pmap: kept 0.4.35–0.7.1 → missing 0.7.2 → fallback 0.8.3–" + releases[-1] in lines


def test_history_refuses_staging_flags_and_unknown_programs(run_cli: Any) -> None:
    for flags in (("--compile",), ("--partitioner", "gspmd")):
        result = run_cli("survey", "--history", *flags)
        assert result.returncode == 2 and result.stdout == "", result.describe()
        assert result.stderr.startswith(f"error: {flags[0]} stages the corpus, and --history")
    bad = run_cli("survey", "--history", "--program", "scann")
    assert bad.returncode == 2 and "no program 'scann' in the shipped surveys" in bad.stderr


def test_the_history_page_is_one_heat_map_per_level(run_cli: Any, tmp_path: Path) -> None:
    page = tmp_path / "history.html"
    result = run_cli("survey", "--history", "--format", "html", "-o", page)
    assert result.returncode == 0 and result.stdout == "", result.describe()
    html = page.read_text()
    data = json.loads(run_cli("survey", "--history", "--format", "json").stdout)
    assert html.count('<section class="level"') == len(data["levels"])
    cells = sum(len(r["cells"]) for entry in data["levels"] for r in entry["programs"])
    assert html.count(' data-mark="') == cells


def test_the_docs_show_what_the_history_draws(run_cli: Any) -> None:
    page = (REPO / "docs" / "jax-developers.md").read_text(encoding="utf-8")
    shown = page.split("```\nnested.jit (counts jaxprs)\n", 1)[1].split("```", 1)[0]
    result = run_cli("survey", "--history", "--program", "grad", "--program", "vmap",
                     "--program", "pmap")  # fmt: skip
    assert result.returncode == 0, result.describe()
    drawn = result.stdout.split("\nnested.jit (counts jaxprs)\n", 1)[1].split("\n\n", 1)[0]
    assert shown == drawn + "\n"


def test_each_shipped_survey_reads_back_and_is_written_byte_for_byte() -> None:
    """The codec reads a shipped survey into the types and writes the very same bytes;
    what it reads back from those bytes equals what it read."""
    files = sorted(SHIPPED.glob("jax-*.json"))
    assert len(files) >= 13, files
    for file in files:
        survey = codec.decode(file.read_bytes(), Survey, source=file.name)
        written = codec.dumps(survey)
        assert written.encode() == file.read_bytes(), file.name
        assert codec.decode(written, Survey, source=file.name) == survey, file.name


def test_a_survey_of_another_schema_is_one_decode_error() -> None:
    newest = codec.plain(_shipped()[-1])
    with pytest.raises(codec.DecodeError) as caught:
        codec.convert({**newest, "schema": "jxinspect.survey/2"}, Survey, source="s.json")
    assert str(caught.value) == "s.json: at $.schema: invalid enum value 'jxinspect.survey/2'"
    cell = newest["programs"][0]["cells"][0]
    cell["counts"] = {"kept": "2"}
    with pytest.raises(codec.DecodeError) as caught:
        codec.convert(newest, Survey, source="s.json")
    assert str(caught.value) == (
        "s.json: at $.programs[0].cells[0].counts[...]: expected `int`, got `str`"
    )
