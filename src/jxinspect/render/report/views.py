"""The ``--show`` views of ``jxinspect lower``, by name."""

from __future__ import annotations

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
