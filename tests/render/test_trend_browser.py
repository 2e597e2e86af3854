"""``jxinspect trend FILE --format html`` in headless Chromium (the harness of
``test_html_browser.py``): a section per target, a line chart per measure it measured
(a point per row, the line broken where a row did not measure it, higher values drawn
higher), the table of changes, names from the database escaped, nothing fetched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_html_browser import browser, open_offline

from jxinspect.core.history import CollectiveBytes, HistoryRow
from jxinspect.lint.history import append

__all__ = ["browser"]  # the fixture, shared

HOSTILE = "<b>&x.py:g"
"""A target name that would be markup if it were not escaped."""


def _row(target: str, run: int, temporaries: int | None, reduced: int | None) -> HistoryRow:
    collectives = (CollectiveBytes("all-reduce", "data", reduced, reduced),) if reduced else ()
    return HistoryRow(target, f"2026-12-0{run}T08:00:00Z", f"c{run}" * 20, "0.10.2", "cpu", 8,
                      512 if temporaries is not None else None,
                      64 if temporaries is not None else None, temporaries,
                      0 if temporaries is not None else None,
                      1.5e6 * run if temporaries is not None else None, None,
                      collectives=collectives)  # fmt: skip


def test_trend_line_charts_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    database = tmp_path / "h.db"
    runs = [(64, 64), (64, 64), (128, None), (96, 32)]
    for run, (temporaries, reduced) in enumerate(runs, start=1):
        rows = [_row("m.py:f", run, temporaries, reduced)]
        if run <= 2:  # compiled, then not
            rows.append(_row(HOSTILE, run, 10 if run == 1 else None, None))
        append(database, rows)
    page_file = tmp_path / "trend.html"
    drawn = run_cli("trend", database, "--format", "html", "-o", page_file, cwd=tmp_path)
    assert drawn.returncode == 0, drawn.describe()
    data = json.loads(run_cli("trend", database, "--format", "json", cwd=tmp_path).stdout)
    page, problems, refused = open_offline(browser, page_file, 1400, 1000)
    try:
        assert problems == [] and refused == []
        sections = page.locator("section.target")
        assert (
            [sections.nth(i).get_attribute("data-target") for i in range(2)]
            == [t["target"] for t in data["targets"]]
            == [HOSTILE, "m.py:f"]
        )
        assert sections.nth(0).locator("h2").inner_text() == HOSTILE
        assert page.locator("b").count() == 0
        f = sections.nth(1)
        charts = f.locator("figure.chart")
        measures = [charts.nth(i).get_attribute("data-measure") for i in range(charts.count())]
        assert measures == ["arguments", "outputs", "temporaries", "aliased", "flops",
                            "all-reduce over data"]  # fmt: skip
        for i in range(charts.count()):
            box = charts.nth(i).locator("svg").bounding_box()
            assert box is not None and box["width"] > 100 and box["height"] > 100
        temporaries = f.locator('figure[data-measure="temporaries"]')
        points = temporaries.locator("circle")
        assert [points.nth(i).get_attribute("data-value") for i in range(4)] == [
            "64", "64", "128", "96"
        ]  # fmt: skip
        heights = [float(points.nth(i).get_attribute("cy") or "nan") for i in range(4)]
        assert heights[2] < heights[3] < heights[0] == heights[1]  # SVG's y grows downward
        assert temporaries.locator("polyline").count() == 1
        assert len((temporaries.locator("polyline").get_attribute("points") or "").split()) == 4
        title = points.nth(2).locator("title").text_content()
        assert title == f"2026-12-03T08:00:00Z {'c3' * 6} JAX 0.10.2: temporaries 128 B"
        reduced = f.locator('figure[data-measure="all-reduce over data"]')
        assert reduced.locator("circle").count() == 3  # the third run had none
        lines = reduced.locator("polyline")
        assert lines.count() == 1  # runs 1-2 joined; run 4 stands alone after the gap
        assert len((lines.get_attribute("points") or "").split()) == 2
        changes = f.locator("table.changes tbody tr")
        assert changes.count() == len(data["targets"][1]["changes"])
        cells = [changes.nth(i).inner_text().split("\t") for i in range(changes.count())]
        assert cells[0][3:] == ["flops", "1,500,000 → 3,000,000", "+100.0%"]
        assert next(row for row in cells if row[3] == "temporaries") == [
            "2026-12-03T08:00:00Z", "c3" * 20, "0.10.2", "temporaries", "64 B → 128 B",
            "+100.0%",
        ]  # fmt: skip
    finally:
        page.close()
