"""Golden files: the text and JSON report of every sample entry, normalized.

Regenerate them after an intended change of output (then review ``git diff tests/golden``):

    JXINSPECT_UPDATE_GOLDEN=1 python -m pytest tests/e2e/test_golden.py

The files are layered by JAX release series (``helpers.golden_file``): the oldest series'
folder, ``tests/golden/jax-0.4/``, holds every file, and each newer one (``jax-0.10``) only
the files in which its output differs from the series before it; a release that differs
from its series (``jax-0.10.1``) has a folder of its own, read first. Regenerate series
by series, oldest first: an update writes a file where the series differs from what it
inherits and removes its copy where it does not. The series are those of CI's legs
(``.ci/releases``); under another series these tests skip.

``<module>.<function>.txt`` holds ``jxinspect lower
sample_programs/<module>.py:<function>`` (plain text, as piped) and ``.json`` the same with
``--format json``. Normalized: the repository's path is ``<repo>``, site-packages folders
are ``<site-packages>``, line numbers after ``at file.py:`` are ``<line>``, and the JAX
version is ``<jax>`` (see ``helpers.normalize_*``). The runs are shared with
``test_e2e_lower.py`` through the session cache in ``conftest.py``.

``views/<module>.<function>.<view>.txt`` holds the annotated jaxpr, module
(StableHLO) and sharding pictures of the entries in :data:`VIEW_ENTRIES` (one or two per
sample file), from one ``--show jaxpr --show mlir --show sharding`` run each (shared with
``test_views.py``); every ``file.py:N`` in them is ``file.py:<line>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import (
    GOLDEN,
    GOLDEN_ROOT,
    GOLDEN_SERIES,
    REPO,
    UPDATE_GOLDEN,
    VIEW_ENTRIES,
    VIEWS,
    ci_releases,
    compare_golden,
    dump_json,
    inherited_golden,
    normalize_json,
    normalize_string,
    normalize_text,
    normalize_view,
    sample_entries,
    sample_target,
    view_run,
)

UPDATE = UPDATE_GOLDEN
ENTRIES = sample_entries()
REGENERATE = "JXINSPECT_UPDATE_GOLDEN=1 python -m pytest tests/e2e/test_golden.py"


def _compare(path: Path, actual: str) -> None:
    compare_golden(path, actual, REGENERATE)


@pytest.mark.parametrize("entry", ENTRIES)
def test_golden_text(entry: str, lower_text: Any) -> None:
    result = lower_text(sample_target(entry))
    _compare(GOLDEN / f"{entry}.txt", normalize_text(result.stdout))


@pytest.mark.parametrize("entry", ENTRIES)
def test_golden_json(entry: str, lower_json: Any) -> None:
    _, report = lower_json(sample_target(entry))
    _compare(GOLDEN / f"{entry}.json", dump_json(normalize_json(report)))


LINT_GOLDEN = ("lint.sample_repo.txt", "lint.sample_repo.github.txt")
"""``jxinspect lint`` in a copy of ``sample_repo/`` (text and GitHub annotations): the
lint-only rules (JX201; JX203 where the release leaks pmap's axis name) and the summary."""


@pytest.mark.parametrize("name", LINT_GOLDEN)
def test_golden_lint(name: str, tmp_path: Path) -> None:
    import shutil

    from helpers import run_cli

    ignore = shutil.ignore_patterns("__pycache__", "*.json")
    repo = Path(shutil.copytree(REPO / "sample_repo", tmp_path / "repo", ignore=ignore))
    flags = ("--format", "github") if "github" in name else ()
    result = run_cli("lint", "--no-cache", *flags, cwd=repo)
    assert result.returncode == 1, result.describe()
    _compare(GOLDEN / name, normalize_text(result.stdout))


def test_no_stale_golden_files() -> None:
    """Every golden file belongs to a declared sample entry (update mode removes the rest)."""
    wanted = {f"{entry}.{kind}" for entry in ENTRIES for kind in ("txt", "json")}
    wanted |= set(LINT_GOLDEN)
    stale = sorted(p for p in GOLDEN.glob("*") if p.is_file() and p.name not in wanted)
    if UPDATE:
        for path in stale:
            path.unlink()
        return
    assert not stale, f"golden files for no sample entry: {[p.name for p in stale]}"


def test_each_golden_file_says_what_its_series_changed() -> None:
    """A series' folder holds only the files in which it differs from the series before it,
    and a release's only those in which it differs from its series: no copy repeats what
    it would read anyway, and every folder is a series or a release CI tests."""
    folders = {f"jax-{name}" for name in (*GOLDEN_SERIES, *ci_releases())}
    assert sorted(p.name for p in GOLDEN_ROOT.iterdir() if p.name not in folders) == []
    repeated = []
    for folder in sorted(GOLDEN_ROOT.iterdir()):
        version = folder.name[4:]
        series = ".".join(version.split(".")[:2])
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder)
            below = inherited_golden(series, relative)
            own = GOLDEN_ROOT / f"jax-{series}" / relative
            if version != series and own.is_file():  # a release's file: its series' reads
                below = own
            if below is not None and below.read_bytes() == path.read_bytes():
                repeated.append(str(path.relative_to(GOLDEN_ROOT)))
    assert repeated == [], f"golden files that repeat what they would read: {repeated}"


def test_normalization() -> None:
    """What the golden files hide, and what they keep."""
    site = "/home/u/proj/.venv/lib/python3.12/site-packages"
    text = (
        f"function:     f at {REPO}/sample_programs/mlp.py:13\n"
        "jax:          0.10.2\n"
        f"logaddexp at {site}/jax/_src/lax/other.py:261\n"
        f"{REPO}/.venv/lib/python3.11/site-packages/jax/_src/numpy/linalg.py\n"
        "  0  x  f32[8,128]  at shape 8:16\n"
    )
    assert normalize_text(text) == (
        "function:     f at <repo>/sample_programs/mlp.py:<line>\n"
        "jax:          <jax>\n"
        "logaddexp at <site-packages>/jax/_src/lax/other.py:<line>\n"
        "<site-packages>/jax/_src/numpy/linalg.py\n"
        "  0  x  f32[8,128]  at shape 8:16\n"
    )
    report = {"jax_version": "0.10.2", "line": 13, "file": f"{REPO}/sample_programs/mlp.py",
              "nested": [{"func_src_info": f"norm at {site}/jax/linalg.py:1152"}]}  # fmt: skip
    assert normalize_json(report) == {
        "jax_version": "<jax>", "line": 13, "file": "<repo>/sample_programs/mlp.py",
        "nested": [{"func_src_info": "norm at <site-packages>/jax/linalg.py:<line>"}],
    }  # fmt: skip
    assert normalize_string("dimension 7 does not divide") == "dimension 7 does not divide"


# ---- the views: --show jaxpr, mlir, sharding ---------------------------------------------------

VIEW_GOLDEN = GOLDEN / "views"


@pytest.mark.parametrize("entry", sorted(VIEW_ENTRIES))
def test_golden_views(entry: str, lower_text: Any) -> None:
    for view, text in view_run(lower_text, entry).items():
        _compare(VIEW_GOLDEN / f"{entry}.{view}.txt", normalize_view(text))


def test_view_entries_are_sample_entries() -> None:
    assert set(VIEW_ENTRIES) <= set(ENTRIES), sorted(set(VIEW_ENTRIES) - set(ENTRIES))


def test_no_stale_view_golden_files() -> None:
    wanted = {f"{entry}.{view}.txt" for entry in VIEW_ENTRIES for view in VIEWS}
    stale = sorted(p for p in VIEW_GOLDEN.glob("*") if p.name not in wanted)
    if UPDATE:
        for path in stale:
            path.unlink()
        return
    assert not stale, f"view golden files for no entry in VIEW_ENTRIES: {[p.name for p in stale]}"


def test_view_normalization() -> None:
    text = f"    a = sin b  # sample_programs/nested.py:58\n# body at {REPO}/x/nested.py:54 ·\n"
    assert normalize_view(text) == (
        "    a = sin b  # sample_programs/nested.py:<line>\n# body at <repo>/x/nested.py:<line> ·\n"
    )
    printed = "d:f32[8,256]{model,data} = f[axes=frozenset({'model', 'data'})] <f at 0x7f3a>"
    assert normalize_view(printed) == (
        "d:f32[8,256]{data,model} = f[axes=frozenset({'data', 'model'})] <f at 0x<address>>"
    )
