"""A survey (schema ``jxinspect.survey/1``), a survey history or a survey diff as indented
JSON."""

from __future__ import annotations

import json

from jxinspect.compare.survey import SurveyDiff
from jxinspect.core.survey import History, Survey


def render(product: Survey | SurveyDiff | History) -> str:
    """``to_dict()`` as indented JSON."""
    return json.dumps(product.to_dict(), indent=2, ensure_ascii=False) + "\n"
