"""Every output format of every product, one table per product: the formats users type
(``--format``), their renderers, file suffixes and what they are for.

The command line builds its ``--format`` choices from :meth:`Product.choice`, renders
through :meth:`Product.render`, and the notebook display (``render/display.py``) finds a
product's one-line description and coloured text here, by the product's name
(:data:`PRODUCTS`). Each renderer is imported when it is first used, so reading the
table (``--help``) imports none of them.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from jxinspect.compare.diff import DiffReport
    from jxinspect.compare.survey import SurveyDiff
    from jxinspect.core.model import Report
    from jxinspect.core.survey import History, Survey
    from jxinspect.lint.result import LintResult
    from jxinspect.render.record.summary import Recording

T = TypeVar("T")


@dataclass(frozen=True)
class Style:
    """How a product is asked to render."""

    color: bool = False
    """Colour the text (only formats with ``color`` take it)."""
    views: tuple[str, ...] = ()
    """Report views to add after the text report (``jaxpr``, ``mlir``, ``sharding``,
    ``collectives``)."""
    max_lines: int | None = None
    """Cut the jaxpr and module texts to this many lines."""


@dataclass(frozen=True)
class Format(Generic[T]):
    """One output format of one product."""

    name: str
    """What users type: ``--format NAME``."""
    render: Callable[[T, Style], str]
    suffix: str
    """The usual file suffix of ``-o FILE`` in this format."""
    machine: bool = False
    """Read by programs (JSON, SARIF, JUnit, workflow commands), not people."""
    color: bool = False
    """Coloured on a terminal (and in a notebook)."""


@dataclass(frozen=True)
class Product(Generic[T]):
    """A kind of result and the formats it renders in, the first the default."""

    name: str
    formats: tuple[Format[T], ...]
    describe: Callable[[T], str] | None = None
    """The one-line ``repr`` of a product that displays itself."""
    page: str | None = None
    """The format a notebook cell frames as a page; otherwise the cell shows the coloured
    text."""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.formats)

    def format(self, name: str) -> Format[T]:
        """The format called ``name`` (a plain name or a member of :meth:`choice`)."""
        for found in self.formats:
            if found.name == name:
                return found
        raise KeyError(f"{self.name} has no format {name!r}; use {', '.join(self.names)}")

    @property
    def colored(self) -> Format[T]:
        """The format shown as coloured text (in a console, or in a notebook cell)."""
        for found in self.formats:
            if found.color:
                return found
        raise KeyError(f"{self.name} has no coloured format")

    def render(self, product: T, name: str, style: Style = Style()) -> str:
        return self.format(name).render(product, style)

    def choice(self) -> type[enum.Enum]:
        """The ``--format`` choice for typer: a ``str`` enum of the names, in order."""
        return _choice(self.name, self.names)


@functools.cache
def _choice(product: str, names: tuple[str, ...]) -> type[enum.Enum]:
    title = "".join(part.title() for part in product.split("_"))
    return enum.Enum(f"{title}Format", {name: name for name in names}, type=str)  # type: ignore[return-value]


# ---- the renderers, each imported when first used ---------------------------------------


def _report_text(report: Report, style: Style) -> str:
    from jxinspect.render.report import views

    return views.text_with_views(report, style.views, style.color, style.max_lines)


def _report_json(report: Report, style: Style) -> str:
    from jxinspect.render.report import json

    return json.render(report)


def _report_html(report: Report, style: Style) -> str:
    from jxinspect.render.report import html

    return html.render(report, style.max_lines)


def _describe_report(report: Report) -> str:
    from jxinspect.render.report import text

    return text.describe(report)


def _diff_text(diff: DiffReport, style: Style) -> str:
    from jxinspect.render.compare import text

    return text.render(diff, color=style.color)


def _diff_json(diff: DiffReport, style: Style) -> str:
    from jxinspect.render.compare import json

    return json.render(diff)


def _diff_markdown(diff: DiffReport, style: Style) -> str:
    from jxinspect.render.compare import markdown

    return markdown.render(diff)


def _describe_diff(diff: DiffReport) -> str:
    from jxinspect.render.compare import text

    return text.describe(diff)


def _lint_text(result: LintResult, style: Style) -> str:
    from jxinspect.render.lint import text

    return text.render(result, color=style.color)


def _lint_json(result: LintResult, style: Style) -> str:
    from jxinspect.render.lint import json

    return json.render(result)


def _lint_sarif(result: LintResult, style: Style) -> str:
    from jxinspect.render.lint import sarif

    return sarif.render(result)


def _lint_github(result: LintResult, style: Style) -> str:
    from jxinspect.render.lint import github

    return github.render(result)


def _lint_junit(result: LintResult, style: Style) -> str:
    from jxinspect.render.lint import junit

    return junit.render(result)


def _describe_lint(result: LintResult) -> str:
    from jxinspect.render.lint import text

    return text.describe(result)


def _record_text(recording: Recording, style: Style) -> str:
    from jxinspect.render.record import summary

    return summary.render(recording)


def _record_json(recording: Recording, style: Style) -> str:
    from jxinspect.render.record import summary

    return summary.render_json(recording)


def _survey_text(survey: Survey, style: Style) -> str:
    from jxinspect.render.survey import text

    return text.render(survey, color=style.color)


def _survey_json(survey: Survey | SurveyDiff | History, style: Style) -> str:
    from jxinspect.render.survey import json

    return json.render(survey)


def _survey_html(survey: Survey, style: Style) -> str:
    from jxinspect.render.survey import html

    return html.render(survey)


def _describe_survey(survey: Survey) -> str:
    from jxinspect.render.survey import text

    return text.describe(survey)


def _history_text(history: History, style: Style) -> str:
    from jxinspect.render.survey import history as view

    return view.render(history, color=style.color)


def _history_html(history: History, style: Style) -> str:
    from jxinspect.render.survey import history as view

    return view.render_html(history)


def _describe_history(history: History) -> str:
    from jxinspect.render.survey import history as view

    return view.describe(history)


def _survey_diff_text(diff: SurveyDiff, style: Style) -> str:
    from jxinspect.render.survey import text

    return text.render_diff(diff, color=style.color)


def _survey_diff_markdown(diff: SurveyDiff, style: Style) -> str:
    from jxinspect.render.survey import markdown

    return markdown.render(diff)


def _describe_survey_diff(diff: SurveyDiff) -> str:
    from jxinspect.render.survey import text

    return text.describe_diff(diff)


# ---- the table ---------------------------------------------------------------------------

REPORT: Product[Report] = Product(
    "report",
    (
        Format("text", _report_text, ".txt", color=True),
        Format("json", _report_json, ".json", machine=True),
        Format("html", _report_html, ".html"),
    ),
    describe=_describe_report,
    page="html",
)
"""One staged function's report (``lower``, ``show FUNCTION``, ``jxinspect.inspect``)."""

DIFF: Product[DiffReport] = Product(
    "diff",
    (
        Format("text", _diff_text, ".txt", color=True),
        Format("json", _diff_json, ".json", machine=True),
        Format("markdown", _diff_markdown, ".md"),
    ),
    describe=_describe_diff,
)
"""What changed between two versions (``diff-debug``, ``jxinspect.diff``)."""

LINT: Product[LintResult] = Product(
    "lint",
    (
        Format("text", _lint_text, ".txt", color=True),
        Format("json", _lint_json, ".json", machine=True),
        Format("sarif", _lint_sarif, ".sarif", machine=True),
        Format("github", _lint_github, ".txt", machine=True),
        Format("junit", _lint_junit, ".xml", machine=True),
    ),
    describe=_describe_lint,
)
"""A lint run (``lint``, ``lint-merge``)."""

RECORD: Product[Recording] = Product(
    "record",
    (
        Format("text", _record_text, ".txt"),
        Format("json", _record_json, ".json", machine=True),
    ),
)
"""A record folder at a glance (``show FOLDER``)."""

SURVEY: Product[Survey] = Product(
    "survey",
    (
        Format("text", _survey_text, ".txt", color=True),
        Format("json", _survey_json, ".json", machine=True),
        Format("html", _survey_html, ".html"),
    ),
    describe=_describe_survey,
    page="html",
)
"""What the installed JAX keeps, transformation by transformation (``survey``)."""

SURVEY_HISTORY: Product[History] = Product(
    "survey_history",
    (
        Format("text", _history_text, ".txt", color=True),
        Format("json", _survey_json, ".json", machine=True),
        Format("html", _history_html, ".html"),
    ),
    describe=_describe_history,
    page="html",
)
"""The shipped surveys of every release side by side, a matrix per level
(``survey --history``)."""

SURVEY_DIFF: Product[SurveyDiff] = Product(
    "survey_diff",
    (
        Format("text", _survey_diff_text, ".txt", color=True),
        Format("json", _survey_json, ".json", machine=True),
        Format("markdown", _survey_diff_markdown, ".md"),
    ),
    describe=_describe_survey_diff,
)
"""Two surveys compared cell by cell (``diff-debug`` of two survey files)."""

PRODUCTS: dict[str, Product[Any]] = {
    p.name: p for p in (REPORT, DIFF, LINT, RECORD, SURVEY, SURVEY_HISTORY, SURVEY_DIFF)
}
"""Every product by name: what :class:`jxinspect.core.display.Displayed` dispatches on."""
