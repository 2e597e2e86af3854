"""A survey (schema ``jxinspect.survey/1``), a survey history or a survey diff as indented
JSON."""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.survey import History, Survey
from jxinspect.core.survey_diff import SurveyDiff


def render(product: Survey | SurveyDiff | History) -> str:
    """The product as the codec writes it, indented."""
    return codec.dumps(product)
