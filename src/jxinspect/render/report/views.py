"""The ``--show`` views of ``jxinspect lower``, by name, and the text report they follow."""

from __future__ import annotations

from collections.abc import Sequence

from jxinspect.core.model import Report
from jxinspect.render.report import jaxpr_view, mlir_view, sharding_view


def render(report: Report, what: str, color: bool = False, max_lines: int | None = None) -> str:
    """``jaxpr``, ``mlir`` or ``sharding``; ``max_lines`` cuts the program texts."""
    if what == "jaxpr":
        return jaxpr_view.render(report, color, max_lines)
    if what == "mlir":
        return mlir_view.render(report, color, max_lines)
    if what == "sharding":
        return sharding_view.render(report, color)
    raise ValueError(f"unknown view {what!r}: use jaxpr, mlir or sharding")


def text_with_views(
    report: Report, views: Sequence[str], color: bool = False, max_lines: int | None = None
) -> str:
    """The text report, then each view asked for (``collectives`` too), each under a rule
    naming it (the collectives table names itself)."""
    from jxinspect.render.report import text as text_render

    text = text_render.render(report, color=color)
    for what in views:
        if what == "collectives":
            from jxinspect.render.report import collectives

            text += "\n" + collectives.render(report)
            continue
        text += f"\n── {what} ──\n" + render(report, what, color, max_lines)
    return text
