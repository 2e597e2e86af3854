"""A survey (schema ``jxinspect.survey/1``), a survey history or a survey diff as indented
JSON."""

from __future__ import annotations

from jxinspect.compare.survey import SurveyDiff
from jxinspect.core import codec
from jxinspect.core.survey import History, Survey


def render(product: Survey | SurveyDiff | History) -> str:
    """``to_dict()`` as indented JSON."""
    return codec.dumps(product.to_dict())
