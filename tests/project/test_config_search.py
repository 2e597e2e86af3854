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


def assert_not_used(result: CliResult, planted: Path, *, project: bool = False) -> None:
    """Lint ran the project's own targets (``m.py``), not the planted configuration
    (``project``: planted in the project itself, where lint keeps its cache)."""
    assert result.returncode == 0, result.describe()
    assert not (planted / "RAN").exists(), result.describe()
    assert project or not (planted / ".jxinspect_cache").exists()
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


# ---- another user's configuration (tests run as root: another owner is an os.chown) --------

OTHER = 54321
"""An uid and gid no one on the machine has."""
owners = pytest.mark.skipif(not hasattr(os, "getuid"), reason="no file owners here")


def refused_line(result: CliResult) -> str:
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("warning:")]
    return line


@owners
def test_a_configuration_in_a_group_writable_folder_above_is_named_and_not_used(
    tmp_path: Path, run_cli: Run
) -> None:
    """A root-owned 2775 folder above the project (a shared group's): its configuration
    names code another member could have written; lint says so in one line and runs the
    project's own targets."""
    shared = tmp_path / "shared"
    shared.mkdir()
    plant(shared)
    os.chown(shared, 0, OTHER)
    shared.chmod(0o2775)
    project = a_project(shared / "mine")
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, shared)
    assert refused_line(result) == (
        f"warning: ../jxinspect.yaml is not used: its folder {shared} can be written by the "
        f"group gid {OTHER}, so another user could have written the code it runs (chmod go-w "
        f"{shared}, or give --config)"
    ), result.describe()


@owners
@pytest.mark.parametrize("name", ["jxinspect.yaml", "pyproject.toml"])
@pytest.mark.parametrize("how", ["owner", "group", "everyone"])
def test_a_configuration_file_another_user_could_write_is_named_and_not_used(
    tmp_path: Path, run_cli: Run, name: str, how: str
) -> None:
    """The folders are this user's; the file itself is another user's, or writable by a
    group or by everyone: checked on the file that was opened."""
    project = a_project(tmp_path / "project")
    plant(project)
    config = project / "jxinspect.yaml"
    if name == "pyproject.toml":
        config = config.rename(project / name)
        config.write_text("[tool.jxinspect]\ntargets = [{target = 'planted.py:f'}]\n", "utf-8")
    if how == "owner":
        os.chown(config, OTHER, OTHER)
    else:
        os.chown(config, -1, OTHER)
        config.chmod(0o664 if how == "group" else 0o646)
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, project, project=True)
    why = {
        "owner": f"belongs to another user (uid {OTHER})",
        "group": f"can be written by the group gid {OTHER}",
        "everyone": "can be written by everyone",
    }[how]
    assert refused_line(result) == (
        f"warning: {name} is not used: it {why}, so another user could have written the code "
        f"it runs ({'chown' if how == 'owner' else 'chmod go-w'} {config}, or give --config)"
    ), result.describe()
    named = run_cli("lint", "--config", config, cwd=project)  # named: the user's choice
    assert (project / "RAN").exists(), named.describe()


@owners
def test_a_hard_link_to_another_users_configuration_is_theirs(tmp_path: Path, run_cli: Run) -> None:
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir()
    (elsewhere / "jxinspect.yaml").write_text("targets:\n  - target: planted.py:f\n", "utf-8")
    os.chown(elsewhere / "jxinspect.yaml", OTHER, OTHER)
    project = a_project(tmp_path / "project")
    (project / "planted.py").write_text(PLANTED, encoding="utf-8")
    os.link(elsewhere / "jxinspect.yaml", project / "jxinspect.yaml")
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, project, project=True)
    assert "belongs to another user" in refused_line(result)


@owners
def test_a_working_folder_of_another_user_is_not_searched(tmp_path: Path, run_cli: Run) -> None:
    project = a_project(tmp_path / "project")
    plant(project)
    os.chown(project, OTHER, OTHER)
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, project, project=True)
    assert f"its folder {project} belongs to another user" in refused_line(result)


@owners
def test_a_group_writable_folder_without_a_configuration_ends_the_search_quietly(
    tmp_path: Path, run_cli: Run
) -> None:
    plant(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, 0, OTHER)
    shared.chmod(0o2775)
    project = a_project(shared / "mine")
    result = run_cli("lint", "m.py", cwd=project)
    assert_not_used(result, tmp_path)
    assert "warning" not in result.stderr, result.describe()


@owners
@pytest.mark.parametrize("command", [("lower", "m.py:f", "--args", "f32[3]"),
                                     ("diff-debug", "m.py", "m.py")])  # fmt: skip
def test_lower_and_diff_debug_say_so_too(
    tmp_path: Path, run_cli: Run, command: tuple[str, ...]
) -> None:
    project = a_project(tmp_path / "project")
    (project / "jxinspect.yaml").write_text("ignore: [JX105]\n", encoding="utf-8")
    (project / "jxinspect.yaml").chmod(0o666)
    result = run_cli(*command, cwd=project)
    assert result.returncode == 0, result.describe()
    assert refused_line(result).startswith(
        "warning: jxinspect.yaml is not used: it can be written by everyone"
    ), result.describe()
