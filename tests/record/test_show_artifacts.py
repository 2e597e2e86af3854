"""A recording (and a saved report) is data: crafted copies of one real recording, read
by ``show``, ``diff-debug`` and ``lower --args-from-record`` through the installed
command. Nothing in them is imported or run, every file is read only where it is a
regular file inside the recording (bounded), every string is printed escaped, a
malformed number is one line (exit 2), and ``show --format json`` is valid against the
schema it names."""

from __future__ import annotations

import copy
import importlib.resources
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, error_line, index_of, run_cli

from jxinspect.core import codec
from jxinspect.core.model import Report
from jxinspect.core.recording import MAX_FUNCTIONS, Index

SCRIPT = """\
import jax, jax.numpy as jnp

@jax.jit
def step(params, x):
    return {"y": params["w"] * x}

step({"w": jnp.ones(3)}, jnp.ones(3))
"""

PAYLOAD = "\x1b]52;c;aGk=\x07\x1b[2J\u202e\x9b31m\n::error file=x.py::forged<script>"
"""An OSC 52 clipboard write, a screen clear, a bidi override, a C1 CSI, and a newline
that starts a forged GitHub annotation; then HTML."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real recording of ``s.py`` (``rec``), and the same function's compiled report
    (``compiled.json``)."""
    tmp = tmp_path_factory.mktemp("recorded")
    (tmp / "s.py").write_text(SCRIPT, encoding="utf-8")
    result = run_cli("record", "-o", "rec", "--", *WARM_PYTHON, "s.py", cwd=tmp)
    assert result.returncode == 0, result.describe()
    result = run_cli("lower", "s.py:step", "--args-from-record", "rec/step", "--compile", "-f",
                     "json", "-o", "compiled.json", cwd=tmp)  # fmt: skip
    assert result.returncode == 0, result.describe()
    return tmp


@pytest.fixture
def work(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the recording (``rec``) and of ``s.py`` to break."""
    shutil.copytree(recorded / "rec", tmp_path / "rec")
    shutil.copy(recorded / "s.py", tmp_path / "s.py")
    return tmp_path


def _write_index(folder: Path, data: dict[str, Any]) -> None:
    (folder / "index.json").write_text(json.dumps(data), encoding="utf-8")


def _other_program(folder: Path) -> None:
    """Make the recording's one program another program (its identity changed)."""
    data = index_of(folder)
    data["functions"][0]["identity"] = "f" * 64
    _write_index(folder, data)


# ---- 1. nothing in a recording is imported or run ----------------------------------------


def test_a_recorded_call_naming_code_is_refused_and_nothing_runs(work: Path) -> None:
    (work / "rec" / "step" / "helper.py").write_text(
        f"import pathlib\npathlib.Path({str(work / 'RAN')!r}).write_text('ran')\n"
        "def make():\n    import jax.numpy as jnp\n    return ({'w': jnp.ones(3)}, jnp.ones(3))\n",
        encoding="utf-8",
    )
    call = {"schema": "jxinspect.call/1", "options": {"args_from": "rec/step/helper.py:make"}}
    (work / "rec" / "step" / "call.json").write_text(json.dumps(call), encoding="utf-8")
    result = run_cli("lower", "s.py:step", "--args-from-record", "rec/step", cwd=work)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        "error: rec/step/call.json: `args_from` names code to import and call; a recording "
        "gives data only (shapes, dtypes, shardings, static values), and jxinspect record "
        "never writes it: record the run again, or give --args-from yourself"
    )
    assert not (work / "RAN").exists()


def test_the_data_of_a_recorded_call_replays(work: Path) -> None:
    result = run_cli("lower", "s.py:step", "--args-from-record", "rec/step", cwd=work)
    assert result.returncode == 0, result.describe()
    assert "params['w']" in result.stdout


# ---- 2. program.mlir: a regular UTF-8 file inside the recording, or one line ----------


def _break_program(program: Path, how: str, outside: Path) -> str:
    """Replace ``program`` by what ``how`` names; the words the error line says."""
    program.unlink()
    if how == "link out":
        outside.write_text("SECRET-LINE of a file outside\n", encoding="utf-8")
        program.symlink_to(outside)
        return "leads out of"
    if how == "fifo":
        os.mkfifo(program)
        return "is not a regular file (a FIFO)"
    if how == "device link":
        program.symlink_to("/dev/zero")
        return "leads out of"
    program.write_bytes(b"module @m {\n  \xff\xfe\n}\n")
    return "is not UTF-8 text"


HOW = ("link out", "fifo", "device link", "not utf-8")


@pytest.mark.parametrize("how", HOW)
def test_diff_debug_reads_program_mlir_only_as_a_file_of_the_recording(
    work: Path, how: str
) -> None:
    shutil.copytree(work / "rec", work / "after")
    _other_program(work / "after")
    said = _break_program(work / "after" / "step" / "program.mlir", how, work / "secret.txt")
    result = run_cli("diff-debug", "rec", "after", cwd=work, timeout=60)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert line.startswith("error: after/step/program.mlir ") and said in line, line
    assert "SECRET" not in result.stdout + result.stderr


def _processes(work: Path, names: tuple[str, ...] = ("step",)) -> Path:
    """A recording of two processes whose programs of each function differ."""
    root = work / "procs"
    for number in (0, 1):
        folder = root / f"process-{number}"
        shutil.copytree(work / "rec", folder)
        data = index_of(folder)
        entry = data["functions"][0]
        rows = []
        for i, name in enumerate(names):
            if name != entry["folder"]:
                shutil.copytree(folder / entry["folder"], folder / name)
            rows.append({**entry, "name": name, "folder": name, "source": f"{name} at s.py:{i}",
                         "identity": f"{number}{i:063d}"})  # fmt: skip
        _write_index(folder, {**data, "functions": rows, "process": number, "processes": 2})
    return root


@pytest.mark.parametrize("how", ("link out", "fifo"))
def test_show_of_processes_reads_program_mlir_only_as_a_file_of_the_recording(
    work: Path, how: str
) -> None:
    root = _processes(work)
    _break_program(root / "process-1" / "step" / "program.mlir", how, work / "secret.txt")
    result = run_cli("show", "procs", cwd=work, timeout=60)
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith("error: procs/process-1/step/program.mlir ")
    assert "SECRET" not in result.stdout + result.stderr


def test_a_recorded_function_given_alone_reads_its_report_only_from_the_recording(
    work: Path,
) -> None:
    report = work / "rec" / "step" / "report.json"
    report.rename(work / "elsewhere.json")
    report.symlink_to(work / "elsewhere.json")
    for args in (("show", "rec/step"), ("diff-debug", "rec/step", "rec/step")):
        result = run_cli(*args, cwd=work)
        assert result.returncode == 2, result.describe()
        assert error_line(result) == (
            "error: rec/step/report.json leads out of rec (a link); an artifact's files stay "
            "in its folder"
        )


def test_a_huge_sparse_report_is_refused_by_its_size(work: Path) -> None:
    with open(work / "rec" / "step" / "report.json", "r+b") as file:
        file.truncate(2 << 30)  # 2 GiB, sparse: nothing is written
    for shown in ("rec", "rec/step"):
        result = run_cli("show", shown, cwd=work, timeout=60)
        assert result.returncode == 2, result.describe()
        assert error_line(result) == (
            "error: rec/step/report.json is larger than 256 MiB, more than any real artifact holds"
        )
    with open(work / "saved.json", "wb") as file:
        file.truncate(2 << 30)
    for args in (("show", "saved.json"), ("diff-debug", "saved.json", "saved.json")):
        result = run_cli(*args, cwd=work, timeout=60)
        assert result.returncode == 2, result.describe()
        assert error_line(result) == (
            "error: saved.json is larger than 256 MiB, more than any real artifact holds"
        )


# ---- 3. every string from an artifact is escaped for where it is printed --------------


def _hostile(data: Any, kind: type) -> Any:
    """``data`` with PAYLOAD added to each of its strings the type still reads."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, str) and key != "schema":
                paths.append((*path, key))
            elif isinstance(value, (dict, list)):
                walk(value, (*path, key))

    walk(data, ())
    for path in paths:
        trial = copy.deepcopy(data)
        node = trial
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] += PAYLOAD
        try:
            codec.decode(json.dumps(trial), kind, source="trial")
        except codec.DecodeError:
            continue
        data = trial
    return data


def _hostile_recording(work: Path) -> str:
    """Every string of the index and the report that they still read carries PAYLOAD,
    the folder names too; a second program of the function, lowered twice. Its folder."""
    folder = work / "rec"
    data = index_of(folder)
    first = data["functions"][0]
    failure = {"function": "f" + PAYLOAD, "error": "e" + PAYLOAD, "count": 1}
    data = {**data, "stopped_after": "step" + PAYLOAD, "failed": 1, "failures": [failure]}
    second = {**first, "folder": "second" + PAYLOAD, "lowerings": 2}
    data["functions"].append(second)
    data = _hostile(data, Index)
    report = folder / first["folder"] / "report.json"
    report.write_text(json.dumps(_hostile(json.loads(report.read_text()), Report)), "utf-8")
    for entry in data["functions"]:
        if entry["folder"] != first["folder"]:
            shutil.copytree(folder / first["folder"], folder / entry["folder"])
    _write_index(folder, data)
    return str(data["functions"][0]["folder"])


def _acts(text: str, format: str) -> list[str]:
    """The lines of ``text`` where PAYLOAD would act: a control character that reached
    the terminal, a forged workflow command, a tag that reached the HTML."""
    found = [
        line for line in text.split("\n") if re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", line)
    ]
    found += [line for line in text.split("\n") if line.lstrip().startswith("::error")]
    if format == "html":
        found += [line for line in text.split("\n") if "forged<script>" in line]
    return found


def test_every_string_of_a_recording_is_printed_escaped(work: Path) -> None:
    function = _hostile_recording(work)
    shutil.copytree(work / "rec", work / "plain")  # the other side of a diff: paired by name
    runs = [("show", "rec", f) for f in ("text", "json", "html")]
    runs += [("show", f"rec/{function}", f) for f in ("text", "json", "html")]
    runs += [("diff-debug", side, other, f) for side, other in (("rec", "plain"),)
             for f in ("text", "json", "markdown")]  # fmt: skip
    for *args, format in runs:
        result = run_cli(*args, "--format", format, cwd=work)
        assert result.returncode in (0, 1), result.describe()
        assert "forged" in result.stdout, result.describe()  # the strings are shown
        assert not _acts(result.stdout + result.stderr, format), (args, format)


def test_every_string_of_a_recording_of_processes_is_printed_escaped(work: Path) -> None:
    root = _processes(work, ("step", "other" + PAYLOAD))
    for number in (0, 1):
        data = _hostile(index_of(root / f"process-{number}"), Index)
        for entry, name in zip(data["functions"], ("step", "other" + PAYLOAD)):
            entry["folder"] = name  # their folders as they are
        _write_index(root / f"process-{number}", data)
    for format in ("text", "json", "html"):
        result = run_cli("show", "procs", "--format", format, cwd=work)
        assert result.returncode == 0, result.describe()
        assert "forged" in result.stdout and "JX403" in result.stdout, result.describe()
        assert not _acts(result.stdout + result.stderr, format), format


# ---- 4. bounds: an index no real run writes; linear in the functions ------------------


def test_an_index_of_more_functions_than_any_run_records_is_one_line(work: Path) -> None:
    data = index_of(work / "rec")
    row = {k: data["functions"][0][k] for k in ("name", "folder", "source", "signature",
                                               "stage", "lowerings")}  # fmt: skip
    head = json.dumps({k: v for k, v in data.items() if k != "functions"})[:-1]
    text = head + ', "functions": [' + ",".join([json.dumps(row)] * (MAX_FUNCTIONS + 1)) + "]}"
    (work / "rec" / "index.json").write_text(text, encoding="utf-8")
    result = run_cli("show", "rec", cwd=work, timeout=60)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: rec/index.json lists {MAX_FUNCTIONS + 1:,} functions, more than the "
        f"{MAX_FUNCTIONS:,} a recording may hold; record fewer (`jxinspect record "
        "--max-functions N`, --only NAME)"
    )


def test_processes_that_differ_everywhere_read_each_index_twice(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each function's two lowerings are found in one more read of each process's index,
    not one read per function (4,000 functions took 175 s)."""
    from jxinspect.record import programs

    root = _processes(work, tuple(f"f{i}" for i in range(40)))
    reads: list[Path] = []
    read_index = programs.read_index

    def counted(folder: Path) -> Index:
        reads.append(folder)
        return read_index(folder)

    monkeypatch.setattr(programs, "read_index", counted)
    summary = programs.processes_summary(root)
    assert len(summary.findings) == 40 and all(f.code == "JX403" for f in summary.findings)
    assert len(reads) == 4, reads


# ---- 5. a number out of range is malformed input, not a crash -------------------------


def test_a_report_with_a_number_out_of_range_is_one_line(recorded: Path, tmp_path: Path) -> None:
    text = (recorded / "compiled.json").read_text(encoding="utf-8")
    text, count = re.subn(r'"bytes_accessed": [0-9.e+]+', '"bytes_accessed": 1e400', text)
    assert count == 1, "the compiled report names its bytes accessed"
    (tmp_path / "r.json").write_text(text, encoding="utf-8")
    result = run_cli("show", "r.json", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith("error: r.json is not a jxinspect report (at $.")
    assert "bytes_accessed: number out of range" in error_line(result)


# ---- 6. show --format json is valid against the schema it names -----------------------


def _shipped(name: str) -> dict[str, Any]:
    found = importlib.resources.files("jxinspect").joinpath(f"schemas/{name}.schema.json")
    schema: dict[str, Any] = json.loads(found.read_text(encoding="utf-8"))
    return schema


def test_show_json_is_valid_against_the_schema_it_names(work: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    _processes(work, ("step", "other"))
    for shown, name in (("rec", "record-summary"), ("procs", "processes")):
        result = run_cli("show", shown, "--format", "json", cwd=work)
        assert result.returncode == 0, result.describe()
        data = json.loads(result.stdout)
        schema = _shipped(name)
        assert data["schema"] == schema["$id"]
        jsonschema.validate(data, schema)
