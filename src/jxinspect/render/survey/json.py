"""A survey (schema ``jxinspect.survey/1``) or a survey diff as indented JSON."""

from __future__ import annotations

import json

from jxinspect.compare.survey import SurveyDiff
from jxinspect.core.survey import Survey


def render(product: Survey | SurveyDiff) -> str:
    """``to_dict()`` as indented JSON."""
    return json.dumps(product.to_dict(), indent=2, ensure_ascii=False) + "\n"
