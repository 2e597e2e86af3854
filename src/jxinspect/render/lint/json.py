"""A lint result as JSON (schema ``jxinspect.lint/1``)."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.lint.result import LintResult


def render(result: LintResult) -> str:
    """:meth:`LintResult.to_dict` as indented JSON, keys in a fixed order."""
    return codec.dumps(result.to_dict())
