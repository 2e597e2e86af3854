"""The worker protocol's reports: sent as the codec's JSON text, read back typed."""

from __future__ import annotations

from jxinspect._version import __version__
from jxinspect.core.errors import installed_version
from jxinspect.core.model import Finding, Report
from jxinspect.lint.workers.protocol import Outcome, received, sent

UNUSED = Finding("JX105", "warning", "argument unused is unused", "unused")
REPORT = Report(target="m.py:f", stage="jit", reached="lowered", jax_version="0.10.2",
                platform="cpu", num_devices=1, findings=(UNUSED,))  # fmt: skip


def test_a_report_crosses_as_text_and_is_read_back_typed() -> None:
    outcome = sent(REPORT)
    assert outcome.report is None and isinstance(outcome.text, str)
    back = received(outcome, "m.py:f")
    assert back.report == REPORT and back.text == outcome.text and back.kind is None


def test_a_message_that_is_not_a_report_is_an_internal_error() -> None:
    back = received(Outcome(None, text='{"schema": "jxinspect.report/1"}', seconds=2.0), "m.py:f")
    assert back.report is None and back.kind == "internal" and back.seconds == 2.0
    assert back.error == (
        f"internal error (jxinspect {__version__}, JAX {installed_version('jax')}): DecodeError: "
        "the worker's report of m.py:f: at $: object missing required field `target` (rerun "
        "with --traceback and report it)"
    )
