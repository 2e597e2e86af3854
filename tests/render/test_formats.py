"""The format registry in this process: every command's ``--format`` choice is its
product's formats, each format renders through the table, and the products display
themselves through it (``repr``, notebook cell, rich) with core importing no renderer.
No JAX: the products here are built by hand."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer

from jxinspect.cli.app import make_app
from jxinspect.core.diff import DiffReport
from jxinspect.core.display import Displayed
from jxinspect.core.lint import LintResult
from jxinspect.core.model import Report
from jxinspect.render import display, formats, notebook
from jxinspect.render.lint import sarif
from jxinspect.render.lint import text as lint_text

COMMANDS = {
    "lower": formats.REPORT,
    "show": formats.REPORT,
    "diff-debug": formats.DIFF,
    "lint": formats.LINT,
    "lint-merge": formats.LINT,
}

REPORT = Report(target="m.py:f", stage="jit", reached="lowered", jax_version="0.10.2",
                platform="cpu", num_devices=1)  # fmt: skip
LINT = LintResult(targets=(), rules=())
DIFF = DiffReport(before="a.py", after="b.py", targets=())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_format_choice_is_its_products_formats(name: str) -> None:
    group: Any = typer.main.get_command(make_app([name]))
    option = next(p for p in group.commands[name].params if p.name == "format")
    assert tuple(option.type.choices) == COMMANDS[name].names
    assert option.default == COMMANDS[name].names[0] == "text"


def test_every_format_has_a_suffix_and_one_coloured_text() -> None:
    for product in formats.PRODUCTS.values():
        assert len(set(product.names)) == len(product.names)
        assert all(f.suffix.startswith(".") for f in product.formats)
        assert product.formats[0].name == "text"
    for product in (formats.REPORT, formats.DIFF, formats.LINT):
        assert product.describe is not None and product.colored.name == "text"
    assert formats.RECORD.names == ("text", "json", "html")  # html: the compile timeline


def test_a_format_renders_through_the_table() -> None:
    assert formats.LINT.render(LINT, "sarif") == sarif.render(LINT)
    choice = formats.LINT.choice()
    assert formats.LINT.render(LINT, choice("text")) == lint_text.render(LINT)
    coloured = formats.LINT.render(LINT, "text", formats.Style(color=True))
    assert coloured == lint_text.render(LINT, color=True)
    with pytest.raises(KeyError, match="no format 'yaml'"):
        formats.LINT.format("yaml")


@pytest.mark.parametrize("shown", [REPORT, LINT, DIFF], ids=lambda s: s.product)
def test_the_products_display_through_the_registry(shown: Displayed) -> None:
    product = formats.PRODUCTS[shown.product]
    assert product.describe is not None and repr(shown) == product.describe(shown)
    text = product.render(shown, "text", formats.Style(color=True))
    assert shown.__rich__().plain == notebook.as_rich(text).plain
    if product.page is None:
        assert shown._repr_html_() == notebook.ansi_html(text)
    else:
        assert shown._repr_html_() == notebook.framed(product.render(shown, product.page))
    assert display.describe(shown) == repr(shown)


def test_core_loads_no_renderer_until_a_product_is_shown() -> None:
    code = (
        "import sys; from jxinspect.core.model import Report\n"
        "r = Report(target='t', stage='jit', reached='lowered', jax_version=None,"
        " platform='cpu', num_devices=1)\n"
        "before = sorted(m for m in sys.modules if m.startswith('jxinspect.render'))\n"
        "line = repr(r)\n"
        "print(before, 'jxinspect.render.display' in sys.modules, line)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("[] True <Report t · jit → lowered · JAX ")
