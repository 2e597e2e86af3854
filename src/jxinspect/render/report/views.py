"""The report's views (``lower --show``, ``Report.show``), one renderer for each name of
:data:`~jxinspect.core.vocabulary.VIEWS`, and the text report they follow."""

from __future__ import annotations

from collections.abc import Sequence

from jxinspect.core.exhaustive import assert_never
from jxinspect.core.model import Report
from jxinspect.core.vocabulary import COMPILED_VIEWS, view_named
from jxinspect.render.report import (
    collectives,
    jaxpr_view,
    memory_view,
    mlir_view,
    provenance_view,
    sharding_view,
)


def render(report: Report, what: str, color: bool = False, max_lines: int | None = None) -> str:
    """The view called ``what`` (a ``ValueError`` names the views for any other name);
    ``max_lines`` cuts the program texts."""
    view = view_named(what)
    match view:
        case "jaxpr":
            return jaxpr_view.render(report, color, max_lines)
        case "mlir":
            return mlir_view.render(report, color, max_lines)
        case "sharding":
            return sharding_view.render(report, color)
        case "collectives":
            return collectives.render(report)
        case "memory":
            return memory_view.render(report)
        case "why":
            return provenance_view.render(report)
        case _:
            assert_never(view)


def text_with_views(
    report: Report, views: Sequence[str], color: bool = False, max_lines: int | None = None
) -> str:
    """The text report, then each view asked for, each under a rule naming it (the
    compiled program's views name themselves)."""
    from jxinspect.render.report import text as text_render

    text = text_render.render(report, color=color)
    if report.profile is not None:  # jxinspect profile, or a recording's measured calls
        from jxinspect.render.report import profile_view

        text += "\n" + profile_view.render(report.profile)
    for what in views:
        drawn = render(report, what, color, max_lines)
        text += "\n" + (drawn if what in COMPILED_VIEWS else f"── {what} ──\n" + drawn)
    return text
