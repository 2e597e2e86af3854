"""A diff as JSON (schema ``jxinspect.diff/1``, shipped as ``schemas/diff.schema.json``)."""

from __future__ import annotations

from jxinspect.compare.diff import DiffReport
from jxinspect.core import codec


def render(diff: DiffReport) -> str:
    """``DiffReport.to_dict()`` as indented, key-ordered JSON."""
    return codec.dumps(diff.to_dict())
