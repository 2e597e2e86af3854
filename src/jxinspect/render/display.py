"""How the products display themselves, found in the format registry by product name:
the renderers :class:`jxinspect.core.display.Displayed` is handed (by the root package).

``repr`` is the product's one-line description; a notebook cell shows its page (a
report's HTML) framed, or its coloured text; ``__rich__`` is the coloured text; and
``Report.show`` puts the report or one view in the notebook or the console.
"""

from __future__ import annotations

import sys
from typing import Any

from jxinspect.core.display import Displayed
from jxinspect.core.model import Report
from jxinspect.render import formats, notebook
from jxinspect.render.formats import Product, Style


def _product(shown: Displayed) -> Product[Any]:
    return formats.PRODUCTS[shown.product]


def describe(shown: Displayed) -> str:
    """One line: what it is and how it went."""
    line = _product(shown).describe
    if line is None:
        raise TypeError(f"{shown.product} has no one-line description")
    return line(shown)


def coloured_text(shown: Displayed) -> str:
    product = _product(shown)
    return product.render(shown, product.colored.name, Style(color=True))


def cell_html(shown: Displayed) -> str:
    """A notebook cell: the product's page framed, or its coloured text."""
    product = _product(shown)
    if product.page is not None:
        return notebook.framed(product.render(shown, product.page))
    return notebook.ansi_html(coloured_text(shown))


def rich_text(shown: Displayed) -> Any:
    return notebook.as_rich(coloured_text(shown))


def in_notebook() -> bool:
    """Whether this runs in an IPython kernel (Jupyter, Colab), not a terminal."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def show(shown: Displayed, view: str = "report") -> None:
    """Display the report or one of its views, by name
    (:data:`~jxinspect.core.vocabulary.VIEWS`)."""
    if not isinstance(shown, Report):
        raise TypeError(f"only a report has views, not a {shown.product}")
    if view == "report":
        text = coloured_text(shown)
    else:
        from jxinspect.render.report import views

        text = views.render(shown, view, color=True)
    if in_notebook():
        from IPython.display import HTML, display

        display(HTML(notebook.ansi_html(text)))
        return
    from rich.console import Console

    Console().print(notebook.as_rich(text))
