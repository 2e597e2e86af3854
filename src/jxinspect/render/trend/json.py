"""A trend as JSON (schema ``jxinspect.trend/1``): every row of each target, oldest
first, and the changes between them."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.history import Trend


def render(trend: Trend) -> str:
    """The trend, as indented JSON."""
    return codec.dumps(trend)
