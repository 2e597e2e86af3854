"""Every command's ``--help`` reads whole in an 80-column terminal: no option name, value
or description cut short, each option with help of its own; and each command offers
only what it can do (``show --show``), with ``--traceback`` wherever a run can fail."""

from __future__ import annotations

import re

import pytest
from helpers import error_line, run_cli

from jxinspect.cli.app import COMMANDS, make_app
from jxinspect.core.vocabulary import VIEWS

NARROW = {"COLUMNS": "80"}


def _help(*command: str) -> str:
    result = run_cli(*command, "--help", env=NARROW)
    assert result.returncode == 0, result.describe()
    return result.stdout


def _options(name: str) -> list[tuple[str, str | None]]:
    """Each option of ``name``: its longest spelling and its help."""
    import typer.main

    command = typer.main.get_command(make_app([name])).get_command(None, name)  # type: ignore[attr-defined]
    return [
        (max(p.opts, key=len), getattr(p, "help", None))
        for p in command.params
        if p.param_type_name == "option"
    ]


def test_the_command_list_reads_whole_at_80_columns() -> None:
    text = _help()
    assert all(len(line) <= 80 for line in text.splitlines()), text
    for name, command in COMMANDS.items():
        assert f"{name}  " in text and command.summary in text, (name, text)
    assert "…" not in text and not re.search(r"\w\.\.\.$", text, re.MULTILINE), text


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_commands_help_reads_whole_at_80_columns(name: str) -> None:
    text = _help(name)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text and not re.search(r"\w\.\.\.$", text, re.MULTILINE), text
    for option, helped in _options(name):
        assert option in text, (option, text)
        if option != "--help":
            assert helped, f"jxinspect {name} {option} has no help"


def test_donate_argnames_has_help_of_its_own() -> None:
    helps = dict(_options("lower"))
    assert helps["--donate-argnames"] != helps["--static-argnames"]
    assert "onate" in (helps["--donate-argnames"] or "")


def test_lower_offers_each_view() -> None:
    import typer.main

    command = typer.main.get_command(make_app(["lower"])).get_command(None, "lower")  # type: ignore[attr-defined]
    [show] = [p for p in command.params if p.name == "show"]
    assert tuple(show.type.choices) == VIEWS


def test_show_offers_only_the_pictures_a_saved_report_can_draw() -> None:
    text = _help("show")
    assert "<sharding>" in text and "jaxpr|" not in text, text
    result = run_cli("show", "no-such-folder", "--show", "jaxpr")
    assert result.returncode == 2, result.describe()
    assert "'jaxpr' is not one of 'sharding'" in error_line(result)


@pytest.mark.parametrize("name", ["lower", "diff-debug", "lint", "record", "show"])
def test_every_command_that_runs_takes_traceback(name: str) -> None:
    assert "--traceback" in dict(_options(name))
