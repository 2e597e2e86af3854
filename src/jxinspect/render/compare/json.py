"""A diff as JSON (schema ``jxinspect.diff/1``, shipped as ``schemas/diff.schema.json``)."""

from __future__ import annotations

import json

from jxinspect.compare.diff import DiffReport


def render(diff: DiffReport) -> str:
    """``DiffReport.to_dict()`` as indented, key-ordered JSON."""
    return json.dumps(diff.to_dict(), indent=2, ensure_ascii=False) + "\n"
