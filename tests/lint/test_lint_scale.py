"""``lint`` at scale, end to end: the incremental cache, ``--shard K/N`` and
``lint-merge``.

The project: four targets in three modules, one of which imports a helper module of the
project; one target leaves an argument unused (JX105, an error under the configuration),
so a run exits 1.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest
from helpers import error_line, lint_outcomes, run_cli

MODULES = {
    "helpers.py": "def scale(x):\n    return x * 2\n",
    "a.py": (
        "import helpers\n\n"
        "JXINSPECT = {'f': {'args': 'f32[4]'}, 'g': {'args': 'f32[4], f32[4]'}}\n\n\n"
        "def f(x):\n    return helpers.scale(x)\n\n\ndef g(x, unused):\n    return x + 1\n"
    ),
    "b.py": "JXINSPECT = {'h': {'args': 'f32[8]'}}\n\n\ndef h(x):\n    return x.sum()\n",
    "c.py": "JXINSPECT = {'k': {'args': 'f32[2,2]'}}\n\n\ndef k(x):\n    return x @ x\n",
}
TARGETS = ["a.py:f", "a.py:g", "b.py:h", "c.py:k"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in MODULES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text(
        "paths: [.]\nseverity: {JX105: error}\n", encoding="utf-8"
    )
    return tmp_path


def how(stderr: str) -> dict[str, str]:
    """``--verbose`` lines of this module's targets: target → cached / staged / failed."""
    return lint_outcomes(stderr, TARGETS)


def test_a_second_run_reuses_every_report_and_prints_the_same(project: Path) -> None:
    first = run_cli("lint", "-v", "--format", "json", cwd=project)
    assert first.returncode == 1, first.describe()
    assert how(first.stderr) == dict.fromkeys(TARGETS, "staged")
    second = run_cli("lint", "-v", "--format", "json", cwd=project)
    assert second.returncode == 1
    assert how(second.stderr) == dict.fromkeys(TARGETS, "cached")
    assert second.stdout == first.stdout  # byte-identical, cached or not
    cache = project / ".jxinspect_cache"
    assert (cache / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    third = run_cli("lint", "-v", "--no-cache", "--format", "json", cwd=project)
    assert how(third.stderr) == dict.fromkeys(TARGETS, "staged")
    assert third.stdout == first.stdout


def test_only_targets_whose_sources_changed_are_staged_again(project: Path) -> None:
    run_cli("lint", cwd=project)
    (project / "b.py").write_text(MODULES["b.py"].replace("x.sum()", "x.max()"), encoding="utf-8")
    edited = run_cli("lint", "-v", cwd=project)
    assert how(edited.stderr) == {"a.py:f": "cached", "a.py:g": "cached", "b.py:h": "staged",
                                  "c.py:k": "cached"}  # fmt: skip
    # a helper module of the project: every target of the module that imports it
    (project / "helpers.py").write_text("def scale(x):\n    return x * 3\n", encoding="utf-8")
    edited = run_cli("lint", "-v", cwd=project)
    assert how(edited.stderr) == {"a.py:f": "staged", "a.py:g": "staged", "b.py:h": "cached",
                                  "c.py:k": "cached"}  # fmt: skip
    # the configuration's options are part of the key too
    (project / "jxinspect.yaml").write_text(
        "paths: [.]\nseverity: {JX105: error}\ndefaults: {partitioner: gspmd}\n", encoding="utf-8"
    )
    assert set(how(run_cli("lint", "-v", cwd=project).stderr).values()) == {"staged"}


def test_editing_jxinspects_own_code_stages_everything_again(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The cache key covers the tool's own code: in an editable checkout, an edited rule
    re-lints (run from a copy of the package, first on the import path, that is edited)."""
    import shutil
    import sys

    import jxinspect

    site = tmp_path_factory.mktemp("site")
    shutil.copytree(Path(jxinspect.__file__).parent, site / "jxinspect",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    command = (sys.executable, "-m", "jxinspect")
    env = {"PYTHONPATH": str(site)}
    first = run_cli("lint", "-v", command=command, env=env, cwd=project)
    assert first.returncode == 1 and set(how(first.stderr).values()) == {"staged"}, first.describe()
    again = run_cli("lint", "-v", command=command, env=env, cwd=project)
    assert set(how(again.stderr).values()) == {"cached"}, again.describe()
    rule = site / "jxinspect" / "rules" / "jx105_pruned_argument.py"
    rule.write_text(rule.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited = run_cli("lint", "-v", command=command, env=env, cwd=project)
    assert set(how(edited.stderr).values()) == {"staged"}, edited.describe()
    assert edited.stdout == first.stdout


def test_a_corrupt_or_foreign_cache_entry_is_never_trusted(project: Path) -> None:
    """Each is staged again, with one line on stderr naming the entry and what is wrong
    with it (where in it, and what was expected); an entry of an older format is a miss."""
    secret = {"JXINSPECT_CACHE_SECRET": "the secret"}
    first = run_cli("lint", "--format", "json", cwd=project, env=secret)
    entries = sorted((project / ".jxinspect_cache").glob("*/*.jsonl"))
    assert len(entries) == len(TARGETS)
    entries[0].write_text("{not json", encoding="utf-8")
    header, report = map(json.loads, entries[1].read_text(encoding="utf-8").splitlines())
    header["key"] = "0" * 64  # an entry of another key
    entries[1].write_text(f"{json.dumps(header)}\n{json.dumps(report)}", encoding="utf-8")
    header, report = map(json.loads, entries[2].read_text(encoding="utf-8").splitlines())
    report["function"] += "_edited"  # a report edited after it was written
    entries[2].write_text(f"{json.dumps(header)}\n{json.dumps(report)}", encoding="utf-8")
    header, report = map(json.loads, entries[3].read_text(encoding="utf-8").splitlines())
    report["reached"] = 3  # not a report, though its MAC verifies (made with the secret)
    text = json.dumps(report)
    material = header["key"].encode() + b"\n" + text.encode()
    header["mac"] = hmac.new(b"the secret", material, hashlib.sha256).hexdigest()
    entries[3].write_text(f"{json.dumps(header)}\n{text}", encoding="utf-8")
    again = run_cli("lint", "-v", "--format", "json", cwd=project, env=secret)
    assert set(how(again.stderr).values()) == {"staged"}, again.describe()
    assert again.stdout == first.stdout
    names = [entry.relative_to(project).as_posix() for entry in entries]
    warnings = sorted(line for line in again.stderr.splitlines() if line.startswith("warning:"))
    assert warnings == sorted([
        f"warning: {names[0]}: JSON is malformed: object keys must be strings (byte 1); "
        "staged again",
        f"warning: {names[1]}: at $.key: expected the key it is stored under; staged again",
        f"warning: {names[2]}: written without this cache's secret, or edited; staged again",
        f"warning: {names[3]}: at $.reached: expected `str`, got `int`; staged again",
    ])  # fmt: skip
    header, report = map(json.loads, entries[0].read_text(encoding="utf-8").splitlines())
    header["format"] = 3  # written by an older jxinspect
    entries[0].write_text(f"{json.dumps(header)}\n{json.dumps(report)}", encoding="utf-8")
    older = run_cli("lint", "-v", "--format", "json", cwd=project, env=secret)
    assert sorted(how(older.stderr).values()) == ["cached", "cached", "cached", "staged"]
    assert "warning:" not in older.stderr and older.stdout == first.stdout


def test_shards_cover_every_target_once_and_merge_to_the_single_run(project: Path) -> None:
    whole = run_cli("lint", "--no-cache", "--format", "json", cwd=project)
    parts = []
    for k in (1, 2, 3):
        out = project / f"part{k}.json"
        part = run_cli("lint", "--shard", f"{k}/3", "--format", "json", "-o", out, cwd=project)
        assert part.returncode in (0, 1), part.describe()
        parts.append(out)
    held = [t["target"] for p in parts for t in json.loads(p.read_text())["targets"]]
    assert sorted(held) == TARGETS  # each target in exactly one part
    merged = run_cli("lint-merge", *parts, "--format", "json", cwd=project)
    assert merged.returncode == whole.returncode == 1, merged.describe()
    expected, got = json.loads(whole.stdout), json.loads(merged.stdout)
    assert got == expected
    text = run_cli("lint-merge", *parts, cwd=project)
    assert text.stdout.splitlines()[-1] == "4 targets; 1 new finding: 1 error"
    sarif = run_cli("lint-merge", *parts, "--format", "sarif", cwd=project)
    assert sarif.returncode == 1 and json.loads(sarif.stdout)["version"] == "2.1.0"


def test_lint_merge_names_a_missing_or_repeated_part(project: Path) -> None:
    for k in (1, 2):
        run_cli("lint", "--shard", f"{k}/2", "--format", "json", "-o", f"p{k}.json", cwd=project)
    missing = run_cli("lint-merge", "p1.json", cwd=project)
    assert missing.returncode == 2
    assert error_line(missing) == "error: part 2 of 2 is missing; give every part's JSON result"
    repeated = run_cli("lint-merge", "p1.json", "p1.json", cwd=project)
    assert error_line(repeated) == "error: p1.json and p1.json are both part 1/2"
    (project / "not.json").write_text("[]", encoding="utf-8")
    wrong = run_cli("lint-merge", "p1.json", "not.json", cwd=project)
    assert wrong.returncode == 2 and "not.json is not a jxinspect lint result" in error_line(wrong)
    part = json.loads((project / "p2.json").read_text(encoding="utf-8"))
    part["targets"][0]["line"] = "7"  # hand-edited
    (project / "edited.json").write_text(json.dumps(part), encoding="utf-8")
    edited = run_cli("lint-merge", "p1.json", "edited.json", cwd=project)
    assert edited.returncode == 2
    assert error_line(edited) == (
        "error: edited.json: at $.targets[0].line: expected `int | null`, got `str`; save each "
        "part with `jxinspect lint --shard K/N --format json -o FILE`"
    )


@pytest.mark.parametrize("bad", ["0/3", "4/3", "three", "1/0"])
def test_a_bad_shard_is_a_usage_error(project: Path, bad: str) -> None:
    result = run_cli("lint", "--shard", bad, cwd=project)
    assert result.returncode == 2
    assert error_line(result).startswith(f"error: --shard {bad!r}: expected K/N")


def test_github_annotations_group_repeats_of_one_rule_in_one_file(tmp_path: Path) -> None:
    """GitHub shows only a few annotations per step: six JX105 in one file are one."""
    names = [f"f{i}" for i in range(6)]
    declaration = ", ".join(f"'{n}': {{'args': 'f32[2], f32[2]'}}" for n in names)
    body = "".join(f"\n\ndef {n}(x, unused):\n    return x * {i}\n" for i, n in enumerate(names))
    (tmp_path / "many.py").write_text(f"JXINSPECT = {{{declaration}}}\n{body}", encoding="utf-8")
    (tmp_path / "one.py").write_text(
        "JXINSPECT = {'g': {'args': 'f32[2], f32[2]'}}\n\n\ndef g(x, unused):\n    return x\n",
        encoding="utf-8",
    )
    result = run_cli("lint", ".", "--format", "github", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.describe()
    assert lines[0].startswith("::notice file=many.py,line=4,title=JX105 (x6)::6 JX105 findings in "
                               "many.py, e.g. many.py:f0: argument unused")  # fmt: skip
    assert "also many.py:f1: unused, many.py:f2: unused, many.py:f3: unused and 2 more" in lines[0]
    assert lines[1].startswith("::notice file=one.py,line=4,title=JX105::one.py:g: argument")
    assert lines[2] == "7 targets; 7 new findings: 7 infos"
    every = run_cli("lint", ".", "--format", "json", cwd=tmp_path)
    assert sum(len(t["findings"]) for t in json.loads(every.stdout)["targets"]) == 7
