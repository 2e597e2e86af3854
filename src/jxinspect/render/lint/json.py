"""A lint result as JSON (schema ``jxinspect.lint/1``)."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.lint import LintResult


def render(result: LintResult) -> str:
    """The result as the codec writes it: indented JSON, keys in the type's field order."""
    return codec.dumps(result)
