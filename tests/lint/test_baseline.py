"""The baseline file: written sorted, keyed by target, code and leaf path (never a line),
read back, and refused in one line when it is not one this version wrote."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from jxinspect.core.errors import UsageError
from jxinspect.core.model import AcceptedCollective, AcceptedCost
from jxinspect.lint.baseline import Accepted, make_key, read_baseline, render_baseline


def test_baseline_round_trip_is_sorted_and_keyed_without_lines(tmp_path: Path) -> None:
    counts = Counter({make_key("b.py:f", "JX102", "x"): 1, make_key("a.py:f", "JX107", None): 2})
    costs = {
        target: AcceptedCost(target, 4096, (AcceptedCollective("all-gather", "fsdp", ("w",), 8),))
        for target in ("b.py:f", "a.py:f")
    }
    text = render_baseline(Accepted(counts, costs))
    assert text.index("a.py:f") < text.index("b.py:f") and '"line"' not in text
    assert text.index('"costs"') < text.rindex("a.py:f") < text.rindex("b.py:f")
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    assert read_baseline(path, "baseline.json") == Accepted(counts, costs)
    path.write_text('{"schema": "other"}', encoding="utf-8")
    with pytest.raises(UsageError, match="not a jxinspect baseline"):
        read_baseline(path, "baseline.json")
    path.write_text("{", encoding="utf-8")
    with pytest.raises(UsageError, match="baseline.json:1: the baseline is not JSON"):
        read_baseline(path, "baseline.json")
