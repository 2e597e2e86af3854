"""Hostile and malformed input files, through the installed command.

Every file under ``tests/faults/`` is one fault: a YAML alias bomb, a self-referencing
alias, configurations nested a thousand levels deep, module-level ``JXINSPECT``
declarations whose static folding would build values of 2**60 items, Python sources in
latin-1, with a byte-order mark or not decodable at all, and baselines and reports of the
wrong shape. Inputs too large for the corpus are written to ``tmp_path``.

Each must end in its documented exit code with one ``error:`` line naming the file (and
the line, where there is one), or, for ``lint``, as one target's failure while the other
targets are still judged; never an internal error, never memory exhausted. The runs that
could exhaust memory if a bound regressed get an address-space limit, so a regression
fails the test instead of the machine.
"""

from __future__ import annotations

import json
import shutil
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, CliResult, error_line, jxinspect_command, run_cli

from jxinspect.project.declarations import static_declaration

FAULTS = REPO / "tests" / "faults"
GOOD = 'JXINSPECT = {"g": {"args": "f32[3]"}}\n\n\ndef g(x):\n    return x\n'
MEMORY_LIMIT = 4 << 30
"""Bytes of address space a run that could blow up may use (JAX needs well under it)."""


def project(
    folder: Path, *faults: str, good: bool = True, renamed: dict[str, str] | None = None
) -> Path:
    """``folder`` holding the named corpus files (``renamed``: corpus file → its name
    there) and, with ``good``, a module whose target stages cleanly."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in faults:
        shutil.copyfile(FAULTS / name, folder / name)
    for name, new in (renamed or {}).items():
        shutil.copyfile(FAULTS / name, folder / new)
    if good:
        (folder / "good.py").write_text(GOOD, encoding="utf-8")
    return folder


def run_bounded(*args: str, cwd: Path) -> CliResult:
    """``run_cli`` under an address-space limit (``ulimit -v``, through the shell, so no
    Python runs between fork and exec), for inputs built to exhaust memory."""
    command = jxinspect_command()
    if sys.platform.startswith("linux") and shutil.which("sh"):
        limit = f'ulimit -v {MEMORY_LIMIT >> 10} && exec "$@"'
        command = ("sh", "-c", limit, "sh", *command)
    return run_cli(*args, cwd=cwd, command=command)


# ---- configuration: YAML aliases and nesting, TOML nesting, bytes -------------------------


@pytest.mark.parametrize(
    ("fault", "config", "expected"),
    [
        ("yaml_alias_bomb.yaml", "jxinspect.yaml", "jxinspect.yaml:7: this value's aliases "
         "expand to more than 100,000 values; write the values out or use fewer aliases"),
        ("yaml_self_alias.yaml", "jxinspect.yaml", "jxinspect.yaml:2: the alias *x refers to "
         "the collection &x that contains it; a configuration cannot contain itself (write "
         "the values out)"),
        ("yaml_deep_nesting.yaml", "jxinspect.yaml", "jxinspect.yaml:2: nested more than 64 "
         "levels deep; a configuration needs a few"),
        ("yaml_not_utf8.yaml", "jxinspect.yaml", "jxinspect.yaml:2: not UTF-8 text (byte "
         "0xe9); save the configuration as UTF-8"),
        ("toml_deep_nesting.toml", "pyproject.toml", "pyproject.toml: nested more than 64 "
         "levels deep; a configuration needs a few"),
    ],
)  # fmt: skip
def test_a_hostile_configuration_is_refused_before_it_is_expanded(
    tmp_path: Path, fault: str, config: str, expected: str
) -> None:
    folder = project(tmp_path, renamed={fault: config})
    result = run_bounded("lint", cwd=folder)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == f"error: {expected}", result.describe()


def test_aliases_and_merge_keys_within_bounds_read_as_safe_load_reads_them(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    other = "def h(x):\n    return x + 1\n\n\ndef k(x):\n    return x - 1\n"
    (folder / "other.py").write_text(other, encoding="utf-8")
    (folder / "jxinspect.yaml").write_text(
        "targets:\n"
        '  - &first {target: good.py:g, args: &spec "f32[3]"}\n'
        "  - {<<: *first, target: other.py:h}\n"
        "  - {target: other.py:k, args: *spec, ignore: [JX105]}\n",
        encoding="utf-8",
    )
    result = run_cli("lint", "--format", "json", cwd=folder)
    assert result.returncode == 0, result.describe()
    targets = {t["target"]: t for t in json.loads(result.stdout)["targets"]}
    assert set(targets) == {"good.py:g", "other.py:h", "other.py:k"}
    assert all(t["error"] is None for t in targets.values()), result.describe()


# ---- static folding of JXINSPECT ---------------------------------------------------------

FOLD_FAULTS = sorted(p.name for p in FAULTS.glob("fold_*.py"))


def test_declarations_that_fold_to_huge_values_are_unknown_and_lint_goes_on(
    tmp_path: Path,
) -> None:
    """Each module would fold to a value of 2**60 items (or 2**40 digits, or 6,000
    levels: written here, too long for the corpus): the value is unknown, the
    declaration still names ``f``, and staging ``f`` imports the module, which stops
    itself. The other target is still judged."""
    assert len(FOLD_FAULTS) >= 7
    folder = project(tmp_path, *FOLD_FAULTS)
    deep = (FAULTS / "fold_string_doubling.py").read_text(encoding="utf-8")
    deep = deep.replace('A = "x"\n', "A = 0\n").replace("A = A + A\n", "A = [A]\n" * 100)
    (folder / "fold_deep_nesting.py").write_text(deep, encoding="utf-8")  # 6,000 levels
    result = run_bounded("lint", ".", cwd=folder)
    assert result.returncode == 3, result.describe()
    failed = sorted((*FOLD_FAULTS, "fold_deep_nesting.py"))
    assert result.stdout == (
        "".join(_fold_failure(folder / name) for name in failed)
        + f"good.py:g: ok\n\n{len(failed) + 1} targets ({len(failed)} failed); no new findings\n"
    ), result.describe()
    assert result.stderr == "", result.describe()


def _fold_failure(module: Path) -> str:
    """A fold fault's lines in lint's text: ``f`` (where it is defined) failed, for the
    import the corpus's module stops on its line 3."""
    lines = module.read_text(encoding="utf-8").splitlines()
    defined = lines.index("def f(x):") + 1
    assert lines[2].startswith("raise ImportError("), module
    return (
        f"{module.name}:f: failed\n  {module.name}:{defined}: importing {module.name} failed: "
        "ImportError: a fault of the corpus: folded from source only, never imported "
        f"(at {module.name}:3 in <module>)\n"
    )


def test_folding_follows_augmented_assignments_and_forgets_names_rebound_elsewhere(
    tmp_path: Path,
) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'A = "f32[3]"\n'
        'A += ", f32[4]"\n'
        'B = "f32[5]"\n'
        "try:\n"
        '    B = "f32[6]"\n'
        "except ImportError:\n"
        "    pass\n"
        'C = ["f32[7]"]\n'
        'C[0] = "f32[8]"\n'
        'JXINSPECT = {"a": {"args": A}, "b": {"args": B}, "c": {"args": C[0]}}\n',
        encoding="utf-8",
    )
    declaration = static_declaration(module)
    assert declaration is not None
    assert declaration.entries == {"a": {"args": "f32[3], f32[4]"}, "b": None, "c": None}
    doubled = static_declaration(FAULTS / "fold_augmented_doubling.py")
    assert doubled is not None and doubled.entries == {"f": None}


# ---- Python sources: coding lines, byte-order marks, undecodable bytes -------------------


@pytest.mark.parametrize("module", ["latin1_module.py", "bom_module.py"])
def test_a_module_python_decodes_is_read_as_python_reads_it(tmp_path: Path, module: str) -> None:
    folder = project(tmp_path, module, good=False)
    lowered = run_cli("lower", f"{module}:f", cwd=folder)
    assert lowered.returncode == 0, lowered.describe()
    lines = (folder / module).read_text(encoding=_python_encoding(module)).splitlines()
    defined = lines.index("def f(x):") + 1
    assert lowered.stdout.splitlines()[:2] == [
        f"target:       {module}:f",
        f"function:     f at {module}:{defined}",  # relative to the working folder
    ], lowered.describe()
    linted = run_cli("lint", ".", cwd=folder)
    assert linted.returncode == 0, linted.describe()
    assert linted.stdout == f"{module}:f: ok\n\n1 target; no new findings\n", linted.describe()


def _python_encoding(module: str) -> str:
    """The encoding Python reads a corpus module in (its coding line, or a BOM's UTF-8)."""
    with (FAULTS / module).open("rb") as file:
        return tokenize.detect_encoding(file.readline)[0]


def test_an_undecodable_module_fails_its_target_and_lint_judges_the_others(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path, "invalid_utf8_module.py")
    try:
        (folder / "invalid_utf8_module.py").read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        reason = err.reason
    why = (
        f"invalid_utf8_module.py:4: cannot decode byte 0xe9 as utf-8 ({reason}); save the "
        "file as utf-8 or declare its encoding on line 1 or 2 (e.g. `# -*- coding: latin-1 -*-`)"
    )
    linted = run_cli("lint", ".", cwd=folder)
    assert linted.returncode == 3, linted.describe()  # a target failed (README: exit 3)
    assert linted.stdout == (
        f"good.py:g: ok\ninvalid_utf8_module.py: failed\n  {why}\n\n"
        "2 targets (1 failed); no new findings\n"
    ), linted.describe()
    lowered = run_cli("lower", "invalid_utf8_module.py:f", cwd=folder)
    assert lowered.returncode == 3, lowered.describe()
    assert error_line(lowered) == f"error: {why}", lowered.describe()


# ---- baselines -------------------------------------------------------------------------


def _json_refuses(path: Path) -> bool:
    """Whether this Python's ``json`` gives up on the file's depth (3.10-3.12 raise
    ``RecursionError`` on 5,000 nested lists; 3.13 reads them)."""
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        return True
    return False


RERUN = "rerun the same `jxinspect lint` command with --write-baseline to replace it"
FUTURE = ('not a jxinspect baseline this version reads (its schema is "jxinspect.baseline/2", '
          'expected "jxinspect.baseline/1"); another version of jxinspect wrote it')  # fmt: skip


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("baseline_list.json", 'b.json: not a jxinspect baseline (the file holds a list, '
         'expected an object with "schema": "jxinspect.baseline/1"); ' + RERUN),
        ("baseline_count_string.json", "b.json: at $.findings[0].count: expected `int`, got "
         f"`str`; {RERUN}"),
        ("baseline_findings_number.json", "b.json: at $.findings: expected `array`, got "
         f"`int`; {RERUN}"),
        ("baseline_path_list.json", "b.json: at $.findings[0].path: expected `str | null`, got "
         f"`array`; {RERUN}"),
        ("baseline_entry_string.json", "b.json: at $.findings[0]: expected `object`, got "
         f"`str`; {RERUN}"),
        ("baseline_binary.json", "b.json:2: the baseline is not JSON text (byte 0x80 is not "
         f"UTF-8); {RERUN}"),
        ("baseline_deep_nesting.json",
         f"b.json: the baseline is nested too deeply to be one; {RERUN}"
         if _json_refuses(FAULTS / "baseline_deep_nesting.json")
         else 'b.json: not a jxinspect baseline (the file holds a list, expected an object '
         'with "schema": "jxinspect.baseline/1"); ' + RERUN),
        ("baseline_future_schema.json", 'b.json: not a jxinspect baseline this version reads '
         '(its schema is "jxinspect.baseline/2", expected "jxinspect.baseline/1"); another '
         f"version of jxinspect wrote it: use that one, or {RERUN}"),
    ],
)  # fmt: skip
def test_a_malformed_baseline_is_one_line_and_the_command_it_recommends_works(
    tmp_path: Path, fault: str, expected: str
) -> None:
    """The file, where in it (the JSON path, for what the codec reads) and what was
    expected, then the command that replaces it."""
    folder = project(tmp_path, renamed={fault: "b.json"})
    command = ("lint", "good.py", "--baseline", "b.json")
    refused = run_cli(*command, cwd=folder)
    assert refused.returncode == 2, refused.describe()
    assert error_line(refused) == f"error: {expected}", refused.describe()
    _rewrite_and_pass(command, "b.json", folder)


def _rewrite_and_pass(command: tuple[str, ...], baseline: str, folder: Path) -> None:
    """``command --write-baseline`` writes an empty baseline of ``good.py``, and
    ``command`` passes with it."""
    rewritten = run_cli(*command, "--write-baseline", cwd=folder)
    assert rewritten.returncode == 0, rewritten.describe()
    assert rewritten.stdout == CLEAN, rewritten.describe()
    assert rewritten.stderr == f"wrote 0 findings to the baseline {baseline}\n"
    written = json.loads((folder / baseline).read_text(encoding="utf-8"))
    assert written == {"schema": "jxinspect.baseline/1", "findings": [], "costs": []}
    again = run_cli(*command, cwd=folder)
    assert again.returncode == 0, again.describe()
    assert again.stdout == CLEAN, again.describe()


CLEAN = "good.py:g: ok\n\n1 target; no new findings\n"
"""``lint``'s text for ``good.py`` alone, without findings."""


def test_write_baseline_replaces_a_configured_baseline_it_cannot_read(tmp_path: Path) -> None:
    folder = project(tmp_path, renamed={"baseline_future_schema.json": "jxinspect-baseline.json"})
    refused = run_cli("lint", "good.py", cwd=folder)
    assert refused.returncode == 2, refused.describe()
    expected = f"error: jxinspect-baseline.json: {FUTURE}: use that one, or {RERUN}"
    assert error_line(refused) == expected, refused.describe()
    _rewrite_and_pass(("lint", "good.py"), "jxinspect-baseline.json", folder)


# ---- diff-debug inputs: reports and folders ----------------------------------------------


def test_a_report_too_deep_or_with_too_long_a_number_is_one_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema": "jxinspect.report/1", "notes": ' + "[" * 100_000 + "]" * 100_000
                    + "}", encoding="utf-8")  # fmt: skip
    result = run_cli("diff-debug", deep, deep, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == f"error: {deep} is nested too deeply to be a jxinspect report"
    huge = FAULTS / "report_huge_number.json"
    result = run_cli("diff-debug", huge, huge, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        f"error: {huge} is not a jxinspect report (at $.line: integer value out of range); "
        "save one with `jxinspect lower TARGET --format json -o FILE`"
    )


def test_a_folder_given_to_diff_debug_says_so_and_what_to_give(tmp_path: Path) -> None:
    folder = project(tmp_path / "models")
    result = run_cli("diff-debug", "models", "models/good.py", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == _a_folder("models", "models/good.py"), result.describe()
    here = run_cli("diff-debug", ".", "good.py", cwd=folder)
    assert here.returncode == 2, here.describe()
    assert error_line(here) == _a_folder(".", "good.py"), here.describe()
    suggested = run_cli(
        "diff-debug", "models/good.py", "models/good.py", "--format", "json", cwd=tmp_path
    )
    assert suggested.returncode == 0, suggested.describe()
    assert _unchanged(suggested, "models/good.py:g"), suggested.describe()
    linted = run_cli("lint", "models", cwd=tmp_path)
    assert linted.returncode == 0, linted.describe()
    assert linted.stdout == f"models/{CLEAN}", linted.describe()


def _a_folder(folder: str, example: str) -> str:
    """diff-debug's line for a folder given as a side."""
    return (
        f"error: {folder} is a folder; diff-debug compares two programs: give a .py file in it "
        f"(e.g. {example}), module:function, a .json report, a .mlir file or a record folder "
        f"(`jxinspect lint {folder}` checks every module in a folder)"
    )


def _unchanged(result: CliResult, target: str) -> bool:
    """Whether a ``diff-debug --format json`` run compared ``target`` with itself (on both
    sides) and found no change."""
    diff = json.loads(result.stdout)
    sides = [(t["name"], t["before"]["target"], t["after"]["target"]) for t in diff["targets"]]
    changes = [change for t in diff["targets"] for change in t["changes"]]
    name = target.rpartition(":")[2]
    return (sides, changes, diff["failed"]) == ([(name, target, target)], [], False)


def test_a_package_named_like_its_folder_is_still_a_module(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(GOOD, encoding="utf-8")
    result = run_cli("diff-debug", "pkg", "pkg", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.describe()
    assert _unchanged(result, "pkg:g"), result.describe()


# ---- counts that would size what a reader or a view allocates ------------------------------

SHARDED = REPO / "sample_programs" / "sharded.py"
HUGE_MESH = "data=1000000000,model=1000000000"
"""10**18 devices in 33 bytes of JSON (the limit is 2**32)."""


@pytest.fixture(scope="module")
def sharded_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``lower sample_programs/sharded.py:update`` as JSON: tiled leaves on data=4,model=2."""
    folder = tmp_path_factory.mktemp("sharded")
    result = run_cli("lower", f"{SHARDED}:update", "--format", "json", cwd=folder)
    assert result.returncode == 0, result.describe()
    report: dict[str, Any] = json.loads(result.stdout)
    assert any(leaf["sharding"]["kind"] == "tiled" for leaf in report["inputs"])
    return report


def _every_mesh(report: dict[str, Any], mesh: str) -> dict[str, Any]:
    report = json.loads(json.dumps(report).replace('"data=4,model=2"', json.dumps(mesh)))
    return report


def _first_tiled(report: dict[str, Any], **fields: Any) -> dict[str, Any]:
    report = json.loads(json.dumps(report))
    tiled = next(leaf for leaf in report["inputs"] if leaf["sharding"]["kind"] == "tiled")
    tiled["sharding"].update(fields)
    return report


@pytest.mark.parametrize(
    ("edit", "where"),
    [(lambda r: _every_mesh(r, HUGE_MESH), "at $.mesh: expected a mesh of 1 to 4,294,967,296 "
      f"devices with no empty axis, got '{HUGE_MESH}'"),
     (lambda r: {**_every_mesh(r, "data=4,model=2"), "mesh": "data=4,model=0"}, "at $.mesh"),
     (lambda r: {**r, "num_devices": 10**18}, "at $.num_devices: expected `int` <= 4294967296"),
     (lambda r: _first_tiled(r, replicas=10**14), ".sharding.replicas: expected `int` <= "),
     (lambda r: _first_tiled(r, tiles=[10**12, 10**12]), ".sharding.tiles[0]: expected `int` <= "),
     (lambda r: _first_tiled(r, spec=[["model:(0)0"]]), ".sharding.spec[0][0]: expected `str` "
      "matching regex"),
     (lambda r: _first_tiled(r, spec=[["model:(2)99999999999"]]), ".sharding.spec[0][0]")],
    ids=["mesh of 10**18", "empty axis", "num_devices", "replicas", "tiles", "sub-axis of 0",
         "sub-axis too long"],
)  # fmt: skip
@pytest.mark.parametrize(
    "view", [("--show", "sharding"), ("--format", "html"), ("--show", "sharding", "--color",
             "always")], ids=["text", "html", "colour"],
)  # fmt: skip
def test_a_saved_report_naming_more_devices_than_can_be_is_one_line_before_drawing(
    tmp_path: Path,
    sharded_report: dict[str, Any],
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    where: str,
    view: tuple[str, ...],
) -> None:
    (tmp_path / "r.json").write_text(json.dumps(edit(sharded_report)), encoding="utf-8")
    result = run_bounded("show", "r.json", *view, cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert line.startswith("error: r.json is not a jxinspect report (") and where in line, line


def test_a_mesh_of_billions_of_devices_within_the_limit_draws_in_bounded_memory(
    tmp_path: Path, sharded_report: dict[str, Any]
) -> None:
    """2**32 devices, 2**31 along one axis: pictures are drawn from blocks, numbered one
    device at a time, never a list of an axis (``itertools.product`` copied it: 16 GB)."""
    report = _every_mesh(sharded_report, "data=2147483648,model=2")
    (tmp_path / "r.json").write_text(json.dumps(report), encoding="utf-8")
    for view in (
        ("--show", "sharding"),
        ("--format", "html"),
        ("--show", "sharding", "--color", "always"),
    ):
        result = run_bounded("show", "r.json", *view, cwd=tmp_path)
        assert result.returncode == 0, result.describe()
        assert "4294967295" in result.stdout and "4,294,967,296" not in result.stderr, view


def _lint_parts(folder: Path) -> list[dict[str, Any]]:
    project(folder)
    parts = []
    for k in (1, 2):
        out = folder / f"p{k}.json"
        made = run_cli("lint", "good.py", "--shard", f"{k}/2", "--format", "json", "-o", out,
                       cwd=folder)  # fmt: skip
        assert made.returncode == 0, made.describe()
        parts.append(json.loads(out.read_text(encoding="utf-8")))
    return parts


def test_a_lint_part_claiming_a_trillion_parts_is_one_line(tmp_path: Path) -> None:
    """A 2.5 KB part with ``shard.count`` 10**12 grew to 3.9 GB listing the missing ones."""
    first, second = _lint_parts(tmp_path)
    for name, count in (("huge.json", 10**12), ("more.json", 12)):
        bomb = {**first, "shard": {**first["shard"], "count": count}}
        (tmp_path / name).write_text(json.dumps(bomb), encoding="utf-8")
        result = run_bounded("lint-merge", name, cwd=tmp_path)
        assert result.returncode == 2, result.describe()
        assert error_line(result) == (
            f"error: {name}: shard.count says the run has {count:,} parts but 1 were given "
            "(part 2, 3, 4, 5, 6, 7, 8, 9, … are missing); give every part's JSON result"
        )
    for index in (0, 3, 10**12):
        stray = {**second, "shard": {**second["shard"], "index": index}}
        (tmp_path / "stray.json").write_text(json.dumps(stray), encoding="utf-8")
        result = run_bounded("lint-merge", "p1.json", "stray.json", cwd=tmp_path)
        assert result.returncode == 2, result.describe()
        assert error_line(result) == (
            f"error: stray.json: shard.index is {index}, not a part of 1 to 2 (shard.count)"
        )
    (tmp_path / "three.json").write_text(json.dumps({**first, "shard": {**first["shard"],
                                         "count": 3}}), encoding="utf-8")  # fmt: skip
    few = run_cli("lint-merge", "three.json", cwd=tmp_path)  # a few missing: each named
    assert error_line(few) == "error: part 2, 3 of 3 is missing; give every part's JSON result"


def test_a_shard_count_past_the_limit_is_refused_before_planning(tmp_path: Path) -> None:
    project(tmp_path)
    result = run_bounded("lint", "--shard", "1/1000000000000", cwd=tmp_path)
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        "error: --shard '1/1000000000000': at most 65,536 parts (N); split in fewer"
    )
