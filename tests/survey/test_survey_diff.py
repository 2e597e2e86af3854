"""``diff-debug`` of two surveys, and the "fixed in" advice the shipped surveys give the
findings of ``lower`` and ``explain``, through the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import JAX_RELEASE, REPO

from jxinspect.core import codec
from jxinspect.core.survey import Survey, rank
from jxinspect.core.vocabulary import release_key

SHIPPED = REPO / "src" / "jxinspect" / "surveys"
CORPUS = REPO / "src" / "jxinspect" / "survey" / "corpus" / "programs.py"


def _shipped() -> list[Survey]:
    surveys = [
        codec.decode(f.read_bytes(), Survey, source=f.name) for f in SHIPPED.glob("jax-*.json")
    ]
    return sorted(surveys, key=lambda s: release_key(s.jax_version))


def test_the_oldest_and_newest_surveys_differ_where_the_releases_do(run_cli: Any) -> None:
    oldest, newest = (
        SHIPPED / f"jax-{s.jax_version}.json" for s in _shipped()[:: len(_shipped()) - 1]
    )
    result = run_cli("diff-debug", oldest, newest, "--format", "json")
    assert result.returncode == 1, result.describe()
    diff = json.loads(result.stdout)
    changed = {(c["program"], c["level"]): c for c in diff["changes"]}
    # 0.4.35 names keyword arguments in signature order; later releases their own
    assert changed[("keywords", "main.args")]["kind"] == "improved"
    assert changed[("keywords", "main.args")]["before_counts"] == "wrong 2/3"
    # scan's body had no debug info; it has it now
    assert changed[("scan", "nested.scan")]["before"] == "missing"
    assert changed[("scan", "nested.scan")]["kind"] == "improved"
    # pmap's arguments kept the user's names, and now fall back to flat_args[i]
    assert changed[("pmap", "main.args")]["kind"] == "regressed"
    assert changed[("pmap", "main.args")]["after_counts"] == "fallback 2/2"
    assert diff["failed"] is True and diff["regressed"] >= 1
    text = run_cli("diff-debug", oldest, newest)
    assert "regressed (" in text.stdout and text.stdout.splitlines()[-1].startswith("FAILED: ")


def test_a_regression_fails_the_gate_unless_asked_not_to(run_cli: Any, tmp_path: Path) -> None:
    newest = codec.plain(_shipped()[-1])
    worse = json.loads(json.dumps(newest))
    scan = next(p for p in worse["programs"] if p["name"] == "scan")
    cell = next(c for c in scan["cells"] if c["level"] == "nested.scan")
    cell.update(verdict="missing", counts={"missing": 1})
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(newest))
    after.write_text(json.dumps(worse))
    result = run_cli("diff-debug", before, after, "--format", "json")
    assert result.returncode == 1, result.describe()
    changes = json.loads(result.stdout)["changes"]
    assert [(c["program"], c["level"], c["kind"], c["after"]) for c in changes] == [
        ("scan", "nested.scan", "regressed", "missing")
    ]
    assert run_cli("diff-debug", before, after, "--fail-on", "never").returncode == 0
    same = run_cli("diff-debug", before, before)
    assert (
        same.returncode == 0
        and same.stdout.splitlines()[-1] == "0 regressed, 0 improved, 0 changed"
    )
    markdown = run_cli("diff-debug", before, after, "--format", "markdown")
    assert "| regressed | scan | nested.scan | kept 1/1 | missing 1/1 |" in markdown.stdout


def test_a_survey_against_a_report_is_one_line(run_cli: Any, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    run_cli("lower", "sample_programs/mlp.py:predict", "--format", "json", "-o", report)
    survey = SHIPPED / f"jax-{_shipped()[0].jax_version}.json"
    result = run_cli("diff-debug", survey, report)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"error: {survey} is a survey and {report} is not: ")
    assert len(result.stderr.splitlines()) == 1


def test_a_missing_side_beside_a_survey_is_no_such_file(run_cli: Any, tmp_path: Path) -> None:
    survey = SHIPPED / f"jax-{_shipped()[-1].jax_version}.json"
    for sides in (("a.json", survey), (survey, "b.json")):
        result = run_cli("diff-debug", *sides, cwd=tmp_path)
        missing = next(side for side in sides if side != survey)
        assert result.returncode == 2 and result.stdout == "", result.describe()
        assert result.stderr == (
            f"error: no such file: {missing} (relative to the current folder); check the "
            "path, or give the file's full path\n"
        ), result.describe()


def _fixed_in(shape: str, fixed_when: str) -> str | None:
    """The first shipped release after this one from which every later shipped survey has
    every cell of ``shape`` at worst ``fixed_when``, where this release loses it."""
    ours = release_key(JAX_RELEASE)

    def fixed(survey: Survey) -> bool | None:
        cells = [c for p in survey.programs for c in p.cells if c.shape == shape]
        return all(rank(c.verdict) <= rank(fixed_when) for c in cells) if cells else None

    surveys = _shipped()
    older = [s for s in surveys if release_key(s.jax_version) <= ours]
    if older and fixed(older[-1]) is not False:
        return None
    first = None
    for survey in (s for s in surveys if release_key(s.jax_version) > ours):
        verdict = fixed(survey)
        if verdict is not None:
            first = (first or survey.jax_version) if verdict else None
    return first


def test_findings_name_the_release_that_fixes_them(lower_json: Any) -> None:
    for program, code, shape, fixed_when in (
        ("scan", "JX107", "nested:scan", "wrong"),
        ("keywords", "JX109", "keywords:args", "kept"),
        ("pmap", "JX101", "pmap:args", "kept"),
    ):
        _, report = lower_json(f"{CORPUS}:{program}")
        found = [f for f in report["findings"] if f["code"] == code]
        expected = _fixed_in(shape, fixed_when)
        for finding in found:
            assert finding["shape"] == shape
            assert finding["fixed_in"] == expected, (finding, expected)
            said = f"(fixed in JAX {expected}, this is {JAX_RELEASE})"
            assert finding["message"].endswith(said) == (expected is not None), finding


def test_explain_says_what_the_shipped_surveys_say(run_cli: Any) -> None:
    result = run_cli("explain", "JX107")
    assert result.returncode == 0, result.describe()
    releases = ", ".join(s.jax_version for s in _shipped())
    assert f"By the surveys shipped with jxinspect (JAX {releases}):" in result.stdout
    scan = next(line for line in result.stdout.splitlines() if "nested:scan:" in line)
    missing = [s.jax_version for s in _shipped()
               if any(c.shape == "nested:scan" and c.verdict == "missing"
                      for p in s.programs for c in p.cells)]  # fmt: skip
    assert scan.strip().startswith(f"nested:scan: lost in {', '.join(missing)};"), scan


def test_a_broken_survey_is_one_line(run_cli: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"schema": "jxinspect.survey/1", "jax_version": "0.4.35"}))
    good = SHIPPED / f"jax-{_shipped()[-1].jax_version}.json"
    result = run_cli("diff-debug", broken, good)
    assert result.returncode == 2 and result.stdout == "", result.describe()
    assert result.stderr == (
        f"error: {broken} is not a survey jxinspect can read (at $: object missing required "
        "field `jaxlib_version`); make it again with `jxinspect survey --format json -o FILE`\n"
    )


def test_a_program_one_release_cannot_stage_is_no_change(run_cli: Any) -> None:
    """custom_transpose is graded on 0.9.2 and not available on 0.10.2 (JAX removed
    ``jax.custom_transpose``): the diff lists it as only in the first survey, and none of
    its cells as changes."""
    older, newer = SHIPPED / "jax-0.9.2.json", SHIPPED / "jax-0.10.2.json"
    result = run_cli("diff-debug", older, newer, "--format", "json")
    diff = json.loads(result.stdout)
    assert "custom_transpose" in diff["only_before"] and diff["only_after"] == []
    assert not [c for c in diff["changes"] if c["program"] == "custom_transpose"]
    back = json.loads(run_cli("diff-debug", newer, older, "--format", "json").stdout)
    assert back["only_after"] == ["custom_transpose"]
