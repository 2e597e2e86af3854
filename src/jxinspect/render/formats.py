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
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jxinspect.core import vocabulary

if TYPE_CHECKING:
    from jxinspect.core.diff import DiffReport
    from jxinspect.core.history import Trend
    from jxinspect.core.lint import LintResult
    from jxinspect.core.model import Report
    from jxinspect.core.processes import ProcessesSummary
    from jxinspect.core.recording import Recording
    from jxinspect.core.survey import History, Survey
    from jxinspect.core.survey_diff import SurveyDiff

T = TypeVar("T")


@dataclass(frozen=True)
class Style:
    """How a product is asked to render."""

    color: bool = False
    """Colour the text (only formats with ``color`` take it)."""
    views: tuple[str, ...] = ()
    """Report views to add after the text report, by name
    (:data:`~jxinspect.core.vocabulary.VIEWS`)."""
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
    return vocabulary.choice(f"{title}Format", names)


# ---- the renderers, each imported when first used ---------------------------------------

_RENDERERS = "jxinspect.render."


def _renderer(path: str, *style: str) -> Callable[[Any, Style], str]:
    """The renderer ``module:function`` (under ``jxinspect.render.``), imported when first
    called with a product and, by name, the :class:`Style` fields listed."""
    module, _, name = path.partition(":")

    def render(product: Any, given: Style) -> str:
        found = getattr(importlib.import_module(_RENDERERS + module), name)
        return str(found(product, **{field: getattr(given, field) for field in style}))

    return render


def _as_json(product: Any, given: Style) -> str:
    """A product as the codec writes it: indented JSON, keys in its type's field order
    (every product's ``--format json`` but a recording's, which has views of its own)."""
    from jxinspect.core import codec

    return codec.dumps(product)


def _describer(path: str) -> Callable[[Any], str]:
    """A product's one-line description, ``module:function``, imported when first used."""
    render = _renderer(path)
    return lambda product: render(product, Style())


# ---- the table ---------------------------------------------------------------------------

REPORT: Product[Report] = Product(
    "report",
    (
        Format(
            "text",
            _renderer("report.views:text_with_views", "views", "color", "max_lines"),
            ".txt",
            color=True,
        ),
        Format("json", _as_json, ".json", machine=True),
        Format("html", _renderer("report.html:render", "max_lines"), ".html"),
    ),
    describe=_describer("report.text:describe"),
    page="html",
)
"""One staged function's report (``lower``, ``show FUNCTION``, ``jxinspect.inspect``)."""

DIFF: Product[DiffReport] = Product(
    "diff",
    (
        Format("text", _renderer("compare.text:render", "color"), ".txt", color=True),
        Format("json", _as_json, ".json", machine=True),
        Format("markdown", _renderer("compare.markdown:render"), ".md"),
    ),
    describe=_describer("compare.text:describe"),
)
"""What changed between two versions (``diff-debug``, ``jxinspect.diff``)."""

LINT: Product[LintResult] = Product(
    "lint",
    (
        Format("text", _renderer("lint.text:render", "color"), ".txt", color=True),
        Format("json", _as_json, ".json", machine=True),
        Format("sarif", _renderer("lint.sarif:render"), ".sarif", machine=True),
        Format("github", _renderer("lint.github:render"), ".txt", machine=True),
        Format("junit", _renderer("lint.junit:render"), ".xml", machine=True),
    ),
    describe=_describer("lint.text:describe"),
)
"""A lint run (``lint``, ``lint-merge``)."""

RECORD: Product[Recording] = Product(
    "record",
    (
        Format("text", _renderer("record.summary:render"), ".txt"),
        Format("json", _renderer("record.summary:render_json"), ".json", machine=True),
        Format("html", _renderer("record.html:render"), ".html"),
    ),
)
"""A record folder at a glance (``show FOLDER``)."""

PROCESSES: Product[ProcessesSummary] = Product(
    "processes",
    (
        Format("text", _renderer("record.processes:render"), ".txt"),
        Format("json", _renderer("record.processes:render_json"), ".json", machine=True),
        Format("html", _renderer("record.processes_html:render_html"), ".html"),
    ),
)
"""A recording of several JAX processes at a glance (``show FOLDER``)."""

SURVEY: Product[Survey] = Product(
    "survey",
    (
        Format("text", _renderer("survey.text:render", "color"), ".txt", color=True),
        Format("json", _as_json, ".json", machine=True),
        Format("html", _renderer("survey.html:render"), ".html"),
    ),
    describe=_describer("survey.text:describe"),
    page="html",
)
"""What the installed JAX keeps, transformation by transformation (``survey``)."""

SURVEY_HISTORY: Product[History] = Product(
    "survey_history",
    (
        Format("text", _renderer("survey.history:render", "color"), ".txt", color=True),
        Format("json", _as_json, ".json", machine=True),
        Format("html", _renderer("survey.history:render_html"), ".html"),
    ),
    describe=_describer("survey.history:describe"),
    page="html",
)
"""The shipped surveys of every release side by side, a matrix per level
(``survey --history``)."""

SURVEY_DIFF: Product[SurveyDiff] = Product(
    "survey_diff",
    (
        Format("text", _renderer("survey.text:render_diff", "color"), ".txt", color=True),
        Format("json", _as_json, ".json", machine=True),
        Format("markdown", _renderer("survey.markdown:render"), ".md"),
    ),
    describe=_describer("survey.text:describe_diff"),
)
"""Two surveys compared cell by cell (``diff-debug`` of two survey files)."""

TREND: Product[Trend] = Product(
    "trend",
    (
        Format("text", _renderer("trend.text:render", "color"), ".txt", color=True),
        Format("json", _as_json, ".json", machine=True),
        Format("html", _renderer("trend.html:render"), ".html"),
    ),
    describe=_describer("trend.text:describe"),
)
"""Where each target's cost changed from one ``lint --history`` run to the next
(``trend``)."""

PRODUCTS: dict[str, Product[Any]] = {
    p.name: p
    for p in (REPORT, DIFF, LINT, RECORD, PROCESSES, SURVEY, SURVEY_HISTORY, SURVEY_DIFF, TREND)
}
"""Every product by name: what :class:`jxinspect.core.display.Displayed` dispatches on."""
