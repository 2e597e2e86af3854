"""Where ``Report.show`` puts a view: HTML in a notebook, coloured text in a console."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from jxinspect.render import notebook

if TYPE_CHECKING:
    from jxinspect.core.model import Report


def in_notebook() -> bool:
    """Whether this runs in an IPython kernel (Jupyter, Colab), not a terminal."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def show(report: Report, view: str = "report") -> None:
    """Display the report or one of its views (``jaxpr``, ``mlir``, ``sharding``)."""
    if view == "report":
        text = notebook.report_text(report)
    else:
        from jxinspect.render.report import views

        text = views.render(report, view, color=True)
    if in_notebook():
        from IPython.display import HTML, display

        display(HTML(notebook.ansi_html(text)))
        return
    from rich.console import Console

    Console().print(notebook.as_rich(text))
