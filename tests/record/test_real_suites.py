"""`jxinspect record` on a real test suite: optax's own tests (a fixed set of the files
its wheel ships) run plainly, under record, and under record with JAX_DUMP_IR_TO, through
bench/record_suites.py. The counts of passed and failed tests must be equal, no run may
crash, and every recorded report must say what JAX dumped (tests/record/dump_agreement.py).

About three minutes on two cores, so deselected by default (pyproject's addopts
`-m "not suites"`); run it with `python -m pytest -m suites tests/record/test_real_suites.py`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

pytestmark = pytest.mark.suites


@pytest.mark.skipif(importlib.util.find_spec("optax") is None, reason="optax is not installed")
def test_the_optax_suite_under_record() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import record_suites
    finally:
        sys.path.remove(str(BENCH))
    outcome = record_suites.measure("optax")
    described = record_suites.report(outcome, examples=5)
    assert outcome.dumped is not None, described
    runs = (outcome.plain, outcome.record, outcome.dumped)
    assert outcome.plain.outcomes, described
    assert not any(run.crashed for run in runs), described
    assert outcome.plain.counts == outcome.record.counts == outcome.dumped.counts, described
    assert not outcome.differences, described
    assert outcome.agreement is not None, described
    assert outcome.agreement.matched > 0, described
    assert outcome.agreement.full, described
    assert not outcome.agreement.unrecorded, described
