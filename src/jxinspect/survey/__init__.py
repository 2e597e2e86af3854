"""``jxinspect survey``: what the installed JAX keeps of the debug info, transformation by
transformation.

:mod:`~jxinspect.survey.run` stages the corpus (``corpus/programs.py``, a user's module
in every respect) through the one pipeline; :mod:`~jxinspect.survey.grade` turns each
report into the survey's cells (:mod:`jxinspect.core.survey`). Rendering, diffing and
the findings' "fixed in" advice read the survey as plain data, never this package.
"""
