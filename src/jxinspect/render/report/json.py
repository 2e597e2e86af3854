"""A report as JSON (schema ``jxinspect.report/1``)."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.model import Report


def render(report: Report) -> str:
    """The report as indented JSON, keys in the model's order."""
    return codec.dumps(report)
