"""One spelling of a partition spec in every view."""

from __future__ import annotations


def test_one_spelling_of_a_partition_spec() -> None:
    from jxinspect.core.model import spec_text

    assert spec_text((("model",), None)) == "P('model', None)"  # never P(('model',), None)
    assert spec_text(("model",)) == "P('model')"  # never Python's P('model',)
    assert spec_text((("data", "fsdp"), "model")) == "P(('data', 'fsdp'), 'model')"
    assert spec_text(((), None)) == "P(None, None)"
