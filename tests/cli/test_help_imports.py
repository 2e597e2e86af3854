"""``jxinspect --help`` lists the commands without importing them (nor JAX)."""

from __future__ import annotations

from helpers import run_python

MAX_MODULES = 12


def test_help_imports_at_most_twelve_of_our_modules_and_no_jax() -> None:
    code = """
import sys
from jxinspect.cli import app
sys.argv = ["jxinspect", "--help"]
try:
    app.main()
except SystemExit as exit:
    assert exit.code in (0, None), exit.code
ours = sorted(m for m in sys.modules if m.split(".")[0] == "jxinspect")
jax = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib"))
print("OURS", len(ours), " ".join(ours))
print("JAX", len(jax))
"""
    result = run_python(code)
    assert result.returncode == 0, result.describe()
    ours = next(line for line in result.stdout.splitlines() if line.startswith("OURS "))
    assert int(ours.split()[1]) <= MAX_MODULES, ours
    assert "JAX 0" in result.stdout, result.describe()
    for name in ("lower", "diff-debug", "lint-merge", "record", "show"):  # all listed
        assert f" {name} " in result.stdout, result.describe()


def test_output_and_format_have_help_in_every_command() -> None:
    from typer.testing import CliRunner

    from jxinspect.cli.app import make_app

    for command in ("lower", "diff-debug", "lint", "show"):
        app = make_app([command])
        text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        assert "Output format" in text and "not to standard output" in text, (command, text)
