"""A diff as JSON (schema ``jxinspect.diff/1``, shipped as ``schemas/diff.schema.json``)."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.diff import DiffReport


def render(diff: DiffReport) -> str:
    """The diff as indented JSON, keys in the types' order."""
    return codec.dumps(diff)
