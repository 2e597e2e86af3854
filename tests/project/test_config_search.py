"""Where ``lint`` finds its configuration, through the installed command: up to the
project's root only (a ``pyproject.toml`` or ``jxinspect.yaml``, a repository root, the
user's home), never from a folder another user could have written (a shared ``/tmp``,
whose ``jxinspect.yaml`` would name code that lint imports and runs); and the run says
which configuration it used."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import CliResult

Run = Callable[..., CliResult]

MODULE = 'def f(x):\n    return x * 2\n\n\nJXINSPECT = {"f": {"args": "f32[3]"}}\n'
PLANTED = "import pathlib\npathlib.Path(__file__).with_name('RAN').write_text('ran')\n" + MODULE
"""A module that leaves a file ``RAN`` beside it when it is imported."""


def plant(folder: Path) -> None:
    """A configuration whose target runs code when lint imports it."""
    (folder / "planted.py").write_text(PLANTED, encoding="utf-8")
    (folder / "jxinspect.yaml").write_text("targets:\n  - target: planted.py:f\n", "utf-8")


def a_project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "m.py").write_text(MODULE, encoding="utf-8")
    return folder


def assert_not_used(result: CliResult, planted: Path) -> None:
    """Lint ran the project's own targets (``m.py``), not the planted configuration."""
    assert result.returncode == 0, result.describe()
    assert not (planted / "RAN").exists(), result.describe()
    assert not (planted / ".jxinspect_cache").exists()
    assert "planted" not in result.stdout and "using configuration" not in result.stderr


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="no file owners here")
def test_a_configuration_in_a_folder_everyone_can_write_is_not_searched(
    tmp_path: Path, run_cli: Run
) -> None:
    shared = tmp_path / "shared"  # a multi-user /tmp, an unpacked archive's parent
    shared.mkdir()
    plant(shared)
    shared.chmod(0o1777)
    project = a_project(shared / "mine")
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, shared)


def test_a_pyproject_ends_the_search(tmp_path: Path, run_cli: Run) -> None:
    plant(tmp_path)
    project = a_project(tmp_path / "project")
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, tmp_path)


def test_the_search_never_goes_above_home(tmp_path: Path, run_cli: Run) -> None:
    plant(tmp_path)
    home = tmp_path / "home"
    project = a_project(home / "project")
    result = run_cli("lint", "m.py", cwd=project, env={"HOME": str(home)})
    assert_not_used(result, tmp_path)


def test_the_run_says_which_configuration_it_used(tmp_path: Path, run_cli: Run) -> None:
    root = a_project(tmp_path / "repo")
    (root / ".git").mkdir()
    (root / "jxinspect.yaml").write_text("targets:\n  - target: m.py:f\n", encoding="utf-8")
    below = root / "sub" / "deeper"
    below.mkdir(parents=True)
    text = run_cli("lint", cwd=below)
    assert text.returncode == 0, text.describe()
    assert text.stderr == "using configuration ../../jxinspect.yaml\n", text.describe()
    assert text.stdout.startswith("m.py:f: ok\n"), text.describe()
    data = run_cli("lint", "--format", "json", cwd=below)
    assert data.returncode == 0 and data.stderr == "", data.describe()
    assert json.loads(data.stdout)["config"] == "../../jxinspect.yaml"


def test_a_configuration_named_elsewhere_is_said_in_full(tmp_path: Path, run_cli: Run) -> None:
    other = a_project(tmp_path / "other")
    named = other / "jxinspect.yaml"
    named.write_text("targets:\n  - target: m.py:f\n", encoding="utf-8")
    here = a_project(tmp_path / "here")
    result = run_cli("lint", "--config", named, cwd=here)
    assert result.returncode == 0, result.describe()
    assert result.stderr == f"using configuration {named.resolve()}\n", result.describe()
