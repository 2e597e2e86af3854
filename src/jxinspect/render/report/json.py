"""A report as JSON (schema ``jxinspect.report/1``)."""

from __future__ import annotations

import json

from jxinspect.core.model import Report


def render(report: Report) -> str:
    """``Report.to_dict()`` as indented, key-ordered JSON."""
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
