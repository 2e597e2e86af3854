"""The recording page's compile marks and compile-time table say what the persistent
compilation cache did (the page in a browser: test_html_browser.py)."""

from __future__ import annotations

import re

from jxinspect.core.recompiles import CacheUse, Compile
from jxinspect.render.record import html


def _compile(number: int, cache: CacheUse | None, seconds: float) -> Compile:
    return Compile("step", "step at train.py:3", "step", number, compile_s=seconds, cache=cache)


def test_a_hit_is_pale_a_skipped_write_dashed_and_the_table_ranks_by_seconds() -> None:
    compiles = [
        _compile(
            1, CacheUse("not_written", "it compiled in 0.20 s, under x (1.0 s)", None, 1.0), 0.2
        ),
        _compile(2, CacheUse("hit", saved_s=2.5), 0.0),
        Compile("other", "other at train.py:9", "other", 1, compile_s=3.0, cache=CacheUse("miss")),
    ]
    svg = html.timeline(compiles)
    marks = re.findall(r"<rect class=\"mark\"[^>]*>", svg)
    assert 'data-cache="not_written"' in marks[0] and "stroke-dasharray" in marks[0]
    assert 'data-cache="hit"' in marks[1] and 'fill-opacity="0.3"' in marks[1]
    assert 'data-cache="miss"' in marks[2] and "fill-opacity" not in marks[2]
    assert "persistent cache: not written (it compiled in 0.20 s, under x (1.0 s))" in svg
    table = html._compile_time(compiles)
    assert table.index("<code>other</code>") < table.index("<code>step</code>")
    assert "1 not written, 1 hit, saved 2.50 s" in table


def test_no_table_where_no_compile_says_what_the_cache_did() -> None:
    assert html._compile_time([_compile(1, None, 0.1)]) == ""
