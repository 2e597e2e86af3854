"""A survey (schema ``jxinspect.survey/1``) or a survey diff as indented JSON."""

from __future__ import annotations

from jxinspect.compare.survey import SurveyDiff
from jxinspect.core import codec
from jxinspect.core.survey import Survey


def render(product: Survey | SurveyDiff) -> str:
    """``to_dict()`` as indented JSON."""
    return codec.dumps(product.to_dict())
