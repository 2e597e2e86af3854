"""The baseline file: written sorted, keyed by target, code and leaf path (never a line),
read back, and refused in one line when it is not one this version wrote."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from jxinspect.core.errors import UsageError
from jxinspect.lint.baseline import make_key, read_baseline, render_baseline


def test_baseline_round_trip_is_sorted_and_keyed_without_lines(tmp_path: Path) -> None:
    counts = Counter({make_key("b.py:f", "JX102", "x"): 1, make_key("a.py:f", "JX107", None): 2})
    text = render_baseline(counts)
    assert text.index("a.py:f") < text.index("b.py:f") and '"line"' not in text
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    assert read_baseline(path, "baseline.json") == counts
    path.write_text('{"schema": "other"}', encoding="utf-8")
    with pytest.raises(UsageError, match="not a jxinspect baseline"):
        read_baseline(path, "baseline.json")
    path.write_text("{", encoding="utf-8")
    with pytest.raises(UsageError, match="baseline.json:1: the baseline is not JSON"):
        read_baseline(path, "baseline.json")
