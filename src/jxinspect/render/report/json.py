"""A report as JSON (schema ``jxinspect.report/1``)."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.model import Report


def render(report: Report) -> str:
    """``Report.to_dict()`` as indented, key-ordered JSON."""
    return codec.dumps(report.to_dict())
