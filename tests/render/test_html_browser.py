"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright, opening a report the installed command wrote, from disk.

Every request other than the file itself is refused and recorded (the page must need
none). Checked: no console errors, the tables show every leaf of the JSON report, the text
filter and a status toggle hide and show rows, a collapsible section closes and opens, a
finding's link brings back a leaf the filter hid, the code search finds lines. A
screenshot goes to the test's folder, or to ``$JXINSPECT_TEST_ARTIFACTS`` to look at.
Skips, saying why, only when Playwright or a Chromium binary is missing or the browser
cannot start (``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, WARM_PYTHON, needs_profile_reader

TARGET = "sample_programs/data_parallel.py:step"
ARTIFACTS = "JXINSPECT_TEST_ARTIFACTS"
"""The variable naming a folder to keep the pages' screenshots in, to look at them."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip


def chromium_path() -> str | None:
    """``$JXINSPECT_CHROMIUM``, else Debian's ``chromium`` (or a Chrome) on PATH."""
    given = os.environ.get("JXINSPECT_CHROMIUM")
    if given:
        return given
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def screenshot(page: Any, name: str, folder: Path) -> None:
    """A full-page screenshot: in ``$JXINSPECT_TEST_ARTIFACTS`` where it is set, else in
    the test's own temporary ``folder`` (a test writes nowhere else)."""
    kept = os.environ.get(ARTIFACTS)
    if kept:
        folder = Path(kept)
        folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
    )
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium binary: apt-get install -y chromium, or set JXINSPECT_CHROMIUM")
    with sync_api.sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Exception as err:  # Playwright's own error type
            pytest.skip(f"{executable} does not start headless: {str(err).splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: Any, run_cli: Any) -> Path:
    out = tmp_path_factory.mktemp("html") / "report.html"
    result = run_cli("lower", TARGET, "--format", "html", "-o", out, "--source")
    assert result.returncode == 0, result.describe()
    return Path(out)


def open_offline(
    browser: Any, file: Path, width: int, height: int
) -> tuple[Any, list[str], list[str]]:
    """A page showing ``file``, recording console errors and refusing (and recording)
    every request but the file itself."""
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    refused: list[str] = []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
    page.on("pageerror", lambda err: problems.append(str(err)))

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url == file.as_uri():
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    page.route("**/*", route)
    page.goto(file.as_uri(), wait_until="load")
    return page, problems, refused


def visible_rows(page: Any, table: str) -> list[str]:
    rows = page.locator(f"#{table}-table tbody tr")
    return [rows.nth(i).inner_text() for i in range(rows.count()) if rows.nth(i).is_visible()]


def test_report_in_chromium(browser: Any, report_file: Path, lower_json: Any) -> None:
    _, report = lower_json(TARGET)
    page, problems, refused = open_offline(browser, report_file, 1280, 900)

    # every leaf is in its table, with its status
    for table, leaves in (("inputs", report["inputs"]), ("outputs", report["outputs"])):
        rows = visible_rows(page, table)
        assert len(rows) == len(leaves), (table, rows)
        for row, leaf in zip(rows, leaves):
            assert leaf["path"] in row and leaf["status"] in row
        assert page.locator(f".filters[data-table={table}-table] .shown").inner_text() == (
            f"{len(leaves)} of {len(leaves)} shown"
        )

    # the text filter, then a status toggle
    page.fill(".filters[data-table=inputs-table] input[type=search]", "params")
    assert [r.split("\t")[1] for r in visible_rows(page, "inputs")] == ["params['b']",
                                                                         "params['w']"]  # fmt: skip
    assert page.inner_text(".filters[data-table=inputs-table] .shown") == "2 of 4 shown"
    page.fill(".filters[data-table=inputs-table] input[type=search]", "")
    assert len(visible_rows(page, "inputs")) == 4
    status = report["outputs"][0]["status"]  # ok, or missing where pmap drops the paths
    toggle = page.locator(f".filters[data-table=outputs-table] input[value={status}]")
    toggle.uncheck()
    others = [o for o in report["outputs"] if o["status"] != status]
    assert len(visible_rows(page, "outputs")) == len(others)
    toggle.check()
    assert len(visible_rows(page, "outputs")) == 3

    # a finding links to the leaf it names, even when a filter hid it (what pmap's names
    # became depends on the JAX release: flat_args[i], none at all, or the real names)
    named = {leaf["path"] for leaf in report["inputs"]}
    links = page.locator(".finding a.leaf-link[href^='#in-']")
    assert links.count() == sum(1 for f in report["findings"] if f["path"] in named)
    page.fill(".filters[data-table=inputs-table] input[type=search]", "no such leaf")
    if links.count():
        row = links.first.get_attribute("href")
        assert not page.locator(row).is_visible()
        links.first.click()
        page.locator(row).wait_for(state="visible", timeout=10_000)
        assert page.evaluate("location.hash") == row

    # a collapsible section
    code = page.locator("#jaxpr pre.code")
    assert code.is_visible()
    page.click("#jaxpr summary")
    code.wait_for(state="hidden", timeout=10_000)
    assert page.get_attribute("#jaxpr details", "open") is None
    page.click("#jaxpr summary")
    code.wait_for(state="visible", timeout=10_000)

    # the code search
    term = report["inputs"][2]["name"] or "%arg2"  # the third argument, named or not
    page.fill("#module .codebar input", term)
    page.wait_for_function("document.querySelector('#module .hits').textContent.includes('of')")
    assert page.locator("#module .l.hit").count() >= 1
    assert term in page.locator("#module .l.current").inner_text()

    # the sharding pictures are drawn
    assert page.locator("#sharding svg").count() == 3
    assert page.locator("#sharding svg rect").count() >= 8

    page.fill("#module .codebar input", "")
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "report-data_parallel.step.png", report_file.parent)
    page.close()
    assert problems == [], problems
    assert refused == [], f"the page asked for more than its own file: {refused}"


def test_a_large_program_is_packed_and_unpacked_in_chromium(browser: Any, tmp_path: Path,
                                                           run_cli: Any) -> None:  # fmt: skip
    """A program text over ``PACK_FROM`` is embedded gzip-compressed: the file is smaller,
    and the page unpacks it into the same lines, searchable and linkable."""
    import base64
    import gzip
    import re

    out = tmp_path / "big.html"
    result = run_cli("lower", "sample_programs/big_mlp.py:forward", "--format", "html", "-o", out)
    assert result.returncode == 0, result.describe()
    html = out.read_text(encoding="utf-8")
    (payload,) = re.findall(r"<script type=application/octet-stream class=packed "
                            r"data-for=module-code>([^<]*)</script>", html)  # fmt: skip
    code = gzip.decompress(base64.b64decode(payload)).decode()
    lines = code.count("<span class=l") + code.count("<span class='l")
    assert len(html) < len(code) / 2  # the page is smaller than its module text alone
    page, problems, refused = open_offline(browser, out, 1280, 900)
    page.wait_for_selector("#module pre.code:not(.packing) .l", timeout=20_000)
    assert page.locator("#module pre.code .l").count() == lines
    count = page.inner_text("#module summary .count")
    assert count == f"{lines} lines" or lines == int(count.split()[0]) + 1, count
    page.fill("#module .codebar input", "func.func public @main")
    page.wait_for_function("document.querySelector('#module .hits').textContent.includes('of')")
    assert "@main" in page.locator("#module .l.current").inner_text()
    page.close()
    assert problems == [], problems
    assert refused == [], refused


def test_notebook_cell_html_in_chromium(browser: Any, tmp_path: Path) -> None:
    """``Report._repr_html_``, as a notebook cell shows it: the report in a sandboxed
    frame that fetches nothing, every leaf in its table, no console errors."""
    import jax
    import jax.numpy as jnp

    import jxinspect

    def predict(params: dict[str, Any], x: Any) -> dict[str, Any]:
        return {"logits": x @ params["w"] + params["b"]}

    f32 = jnp.float32
    params = {"w": jax.ShapeDtypeStruct((8, 4), f32), "b": jax.ShapeDtypeStruct((4,), f32)}
    report = jxinspect.inspect(predict, (params, jax.ShapeDtypeStruct((2, 8), f32)))
    cell = tmp_path / "cell.html"
    cell.write_text(f"<!DOCTYPE html><html><body>{report._repr_html_()}</body></html>",
                    encoding="utf-8")  # fmt: skip
    page, problems, refused = open_offline(browser, cell, 1000, 800)
    frame = page.frame_locator("iframe")
    rows = frame.locator("#inputs-table tbody tr")
    rows.first.wait_for(state="visible", timeout=10_000)
    assert rows.count() == 3
    assert "params['w']" in frame.locator("#inputs-table").inner_text()
    assert "result['logits']" in frame.locator("#outputs-table").inner_text()
    box = page.locator("iframe").bounding_box()
    assert box is not None and box["height"] >= 400  # sized for a cell, scrolls inside
    page.close()
    assert problems == [], problems
    assert refused == [], f"the cell asked for more than its own file: {refused}"


@pytest.fixture(scope="module")
def survey_page(tmp_path_factory: pytest.TempPathFactory, run_cli: Any) -> tuple[Path, Any]:
    """The survey as an HTML page and as JSON, made once for the tests of the page."""
    page_file = tmp_path_factory.mktemp("survey") / "survey.html"
    result = run_cli("survey", "--format", "html", "-o", page_file)
    assert result.returncode == 0, result.describe()
    return page_file, json.loads(run_cli("survey", "--format", "json").stdout)


def test_survey_heat_map_in_chromium(browser: Any, survey_page: tuple[Path, Any]) -> None:
    """The survey page needs nothing but itself, shows a row per program and a cell per
    level, each coloured by its verdict."""
    from jxinspect.render.survey.html import COLOURS

    page_file, data = survey_page
    page, problems, refused = open_offline(browser, page_file, 1400, 900)
    try:
        assert problems == [] and refused == []
        rows = page.locator("#survey tbody tr")
        assert rows.count() == len(data["programs"])
        names = [rows.nth(i).locator("th").inner_text() for i in range(rows.count())]
        assert names == [p["name"] for p in data["programs"]]
        cells = page.locator("#survey td[data-verdict]")
        for i in range(cells.count()):
            cell = cells.nth(i)
            colour = cell.evaluate("e => getComputedStyle(e).backgroundColor")
            hex_colour = COLOURS[cell.get_attribute("data-verdict")]
            rgb = tuple(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
            assert colour == f"rgb({rgb[0]}, {rgb[1]}, {rgb[2]})", (i, colour)
        screenshot(page, "survey.png", survey_page[0].parent)
    finally:
        page.close()


def test_survey_details_and_legend_are_on_the_page(
    browser: Any, survey_page: tuple[Path, Any]
) -> None:
    """What a cell lost is read on the page, not only in a tooltip; the legend says what
    each verdict means; JAX's own nested jaxprs are a cell of their own, not counted."""
    page_file, data = survey_page
    page, problems, refused = open_offline(browser, page_file, 1400, 900)
    try:
        assert problems == [] and refused == []
        headers = page.locator("#survey thead th").all_inner_texts()
        assert "compiled.args" not in headers
        details = page.locator("#details")
        assert details.is_visible()
        shown = details.inner_text()
        for program in data["programs"]:
            for cell in program["cells"]:
                for example in cell["examples"]:
                    assert example in shown, example
        legend = page.locator("#legend")
        assert legend.is_visible() and "partial" in legend.inner_text()
        own = [p for p in data["programs"] if p["jax_own"]]
        assert own, "a program with JAX's own nested jaxprs (grad_of_custom_vjp's jnp.clip)"
        cells = page.locator("#survey td.own")
        assert cells.count() >= 1 and "not counted" in cells.first.inner_text()
        assert cells.first.is_visible()
    finally:
        page.close()


def test_survey_history_heat_maps_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    """``survey --history``: one table per level, a column per shipped release (oldest
    first), each verdict cell coloured as the survey's, what moved listed on the page, a
    link to each level that brings it into view."""
    from jxinspect.render.survey.html import COLOURS

    page_file = tmp_path / "history.html"
    result = run_cli("survey", "--history", "--format", "html", "-o", page_file)
    assert result.returncode == 0, result.describe()
    data = json.loads(run_cli("survey", "--history", "--format", "json").stdout)
    page, problems, refused = open_offline(browser, page_file, 1600, 1000)
    try:
        assert problems == [] and refused == []
        sections = page.locator("section.level")
        assert sections.count() == len(data["levels"])
        for i, entry in enumerate(data["levels"]):
            section = sections.nth(i)
            assert section.get_attribute("data-level") == entry["level"]
            headers = section.locator("thead th").all_inner_texts()
            assert headers == ["program", *data["releases"]]
            rows = section.locator("tbody tr")
            assert rows.count() == len(entry["programs"])
            names = [rows.nth(k).locator("th").inner_text() for k in range(rows.count())]
            assert names == [r["program"] for r in entry["programs"]]
            moved = [r for r in entry["programs"] if len(r["runs"]) > 1]
            assert section.locator("ul.moved li").count() == len(moved)
        painted = page.evaluate(
            "() => [...document.querySelectorAll('section.level td[data-verdict]')]"
            ".map(e => [e.dataset.verdict, getComputedStyle(e).backgroundColor])"
        )
        assert len(painted) == sum(
            1 for e in data["levels"] for r in e["programs"] for c in r["cells"]
            if c["mark"] not in ("own", "none", "unavailable", "absent")
        )  # fmt: skip
        seen = set()
        for verdict, colour in painted:
            seen.add(verdict)
            hex_colour = COLOURS[verdict]
            rgb = tuple(int(hex_colour[j : j + 2], 16) for j in (1, 3, 5))
            assert colour == f"rgb({rgb[0]}, {rgb[1]}, {rgb[2]})", (verdict, colour)
        assert {"kept", "missing"} <= seen
        last = len(data["levels"]) - 1
        page.locator(f'nav a[href="#level-{last}"]').click()
        assert page.locator(f"#level-{last} h2").is_visible()
        screenshot(page, "survey-history.png", tmp_path)
    finally:
        page.close()


RECOMPILING = """
import jax, jax.numpy as jnp

@jax.jit
def step(batch):
    return batch["x"].sum()

for n in (4, 4, 3, 2):
    step({"x": jnp.ones((n, 2))})
for _ in range(2):
    jax.jit(lambda x: x + 1)(jnp.ones(3))
"""


def test_recording_compile_timeline_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    """``show FOLDER --format html``: a row per function, a mark per compile in the run's
    order coloured by its first reason's kind, and the grouped reasons with advice on
    the page; nothing fetched."""
    from jxinspect.core.recompiles import ADVICE
    from jxinspect.render.record.html import COLOURS

    (tmp_path / "run.py").write_text(RECOMPILING, encoding="utf-8")
    recorded = run_cli("record", "-o", "runs", "--", *WARM_PYTHON, "run.py", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.describe()
    shown = run_cli("show", "runs", "--format", "html", "-o", "page.html", cwd=tmp_path)
    assert shown.returncode == 0, shown.describe()
    page, problems, refused = open_offline(browser, tmp_path / "page.html", 1200, 800)
    try:
        assert problems == [] and refused == []
        marks = page.locator("#timeline rect.mark")
        mark = marks.nth
        said = [(mark(i).get_attribute("data-function"), mark(i).get_attribute("data-kind"))
                for i in range(marks.count())]  # fmt: skip
        assert said == [("step", "first"), ("step", "shape"), ("step", "shape"),
                        ("<lambda>", "first"), ("<lambda>", "function")]  # fmt: skip
        for i in range(marks.count()):
            fill = marks.nth(i).evaluate("e => getComputedStyle(e).fill")
            hex_colour = COLOURS[said[i][1]]
            rgb = tuple(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
            assert fill == f"rgb({rgb[0]}, {rgb[1]}, {rgb[2]})", (i, fill)
        assert page.locator("h3.function").all_inner_texts() == [
            f"step step at {tmp_path / 'run.py'}:4",
            f"<lambda> <lambda> at {tmp_path / 'run.py'}:11",
        ]
        assert page.locator("ul.reasons li").all_inner_texts() == [
            "2× batch['x'] shape f32[4,2] → f32[N,2], N in 2..3",
            f"shape: {ADVICE['shape']}",
            "1× function an earlier function object → a new function object of the same code",
            f"function: {ADVICE['function']}",
        ]
        caches = {marks.nth(i).get_attribute("data-cache") for i in range(marks.count())}
        assert caches == {"off"}  # no cache folder in this run
        rows = page.locator("#compile-time tr").all_inner_texts()
        assert [row.split("\t")[0] for row in rows[1:]] == ["step", "<lambda>"] or [
            row.split("\t")[0] for row in rows[1:]
        ] == ["<lambda>", "step"]
        assert all(row.endswith("off") for row in rows[1:]), rows
        screenshot(page, "recording.png", tmp_path)
    finally:
        page.close()


LAYERS = """
import jax, jax.numpy as jnp


def layers(params, x):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    h, _ = jax.lax.scan(layer, x, params["layers"]["w"])
    return h


JXINSPECT = {"layers": {"devices": 8, "mesh": "fsdp=8",
                        "args": "{'layers': {'w': f32[4,64,64]}}, f32[32,64]",
                        "in_specs": "{'layers': {'w': P(None, 'fsdp', None)}}, P('fsdp', None)"}}
"""


def test_cost_section_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    """A compiled report's cost section (FSDP over a scan of layers): the navigation
    reaches it; memory per kind, FLOPs and every collective (its paths, axes, trips,
    bytes per step and line) read as the JSON report says them; it folds and unfolds."""
    from jxinspect.core.units import human_bytes, human_flops

    (tmp_path / "layers.py").write_text(LAYERS, encoding="utf-8")
    out = tmp_path / "cost.html"
    result = run_cli("lower", "layers.py:layers", "--compile", "--format", "html", "-o", out,
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    json_run = run_cli("lower", "layers.py:layers", "--compile", "--format", "json", cwd=tmp_path)
    compiled = json.loads(json_run.stdout)["compiled"]
    page, problems, refused = open_offline(browser, out, 1400, 900)
    try:
        page.locator('nav a[href="#cost"]').click()
        assert page.evaluate("location.hash") == "#cost"
        assert page.locator("#cost h2").is_visible()
        memory = compiled["memory"]
        kinds = {"arguments": "arguments", "outputs": "outputs", "temporaries": "temporaries",
                 "code": "generated_code", "aliased": "aliased"}  # fmt: skip
        rows = page.locator("#memory-table tbody tr")
        assert rows.count() == sum(memory[k] is not None for k in kinds.values())
        for i in range(rows.count()):
            kind, size, count = rows.nth(i).locator("td").all_inner_texts()
            assert (size, int(count)) == (human_bytes(memory[kinds[kind]]), memory[kinds[kind]])
        assert page.inner_text("#cost .flops").startswith(human_flops(compiled["flops"]))
        rows = page.locator("#collectives-table tbody tr")
        assert rows.count() == len(compiled["collectives"]) >= 1
        headers = page.locator("#collectives-table thead th").all_inner_texts()
        for i, c in enumerate(compiled["collectives"]):
            cells = dict(zip(headers, rows.nth(i).locator("td").all_inner_texts()))
            assert cells["collective"] == c["kind"] and cells["axes"] == ",".join(c["axes"])
            assert cells["moves"] == (", ".join(c["operand_paths"]) or "an intermediate")
            assert cells["trips"].split()[0] == str(c["trip_count"])
            assert cells["bytes/step"] == human_bytes(c["bytes_per_step"])
            # the page is read where the command ran: the user's file relative to it
            assert cells["source"] == f"{os.path.relpath(c['file'], tmp_path)}:{c['line']}"
        table = page.locator("#collectives-table")
        page.click("#cost summary")
        table.wait_for(state="hidden", timeout=10_000)
        page.click("#cost summary")
        table.wait_for(state="visible", timeout=10_000)
        screenshot(page, "cost.png", tmp_path)
    finally:
        page.close()
    assert problems == [], problems
    assert refused == [], f"the page asked for more than its own file: {refused}"


def test_peak_chart_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    """``--memory``'s section: the chart is drawn in view, its peak line where the JSON's
    point is, the peak and its largest buffers labelled; the table holds every buffer."""
    from jxinspect.core.units import human_bytes

    (tmp_path / "layers.py").write_text(LAYERS, encoding="utf-8")
    out = tmp_path / "peak.html"
    result = run_cli("lower", "layers.py:layers", "--memory", "--format", "html", "-o", out,
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    json_run = run_cli("lower", "layers.py:layers", "--memory", "--format", "json", cwd=tmp_path)
    peak = json.loads(json_run.stdout)["compiled"]["peak"]
    page, problems, refused = open_offline(browser, out, 1400, 900)
    try:
        page.locator('nav a[href="#cost"]').click()
        chart = page.locator("svg.peak-chart")
        chart.scroll_into_view_if_needed()
        assert chart.is_visible()
        box = chart.bounding_box()
        assert box["width"] > 300 and box["height"] > 100
        line = chart.locator("line").bounding_box()
        fraction = peak["at"]["position"] / (len(peak["timeline"]) - 1)
        assert abs(line["x"] - box["x"] - fraction * box["width"]) < 3
        labels = chart.locator("text").all_text_contents()
        assert labels[0] == f"peak {human_bytes(peak['bytes'])} at {peak['at']['instruction']}"
        assert len(labels) == 4
        assert page.locator("#peak-table tbody tr").count() == len(peak["buffers"])
        screenshot(page, "peak.png", tmp_path)
    finally:
        page.close()
    assert problems == [], problems
    assert refused == [], f"the page asked for more than its own file: {refused}"


def test_processes_side_by_side_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    """``show FOLDER --format html`` of a recording of several processes: a column per
    process, each function's cells coloured by the program that process lowered, the
    JX403 finding on the page; nothing fetched. The recording is bench/processes_show.py's
    (six processes, the last lowering f0 with another batch)."""
    import sys

    from jxinspect.render.record.processes_html import COLOURS

    sys.path.insert(0, str(REPO / "bench"))
    try:
        import processes_show
    finally:
        sys.path.remove(str(REPO / "bench"))
    processes_show.write_recording(tmp_path / "runs", 6, 3)
    shown = run_cli("show", "runs", "--format", "html", "-o", "page.html", cwd=tmp_path)
    assert shown.returncode == 0, shown.describe()
    page, problems, refused = open_offline(browser, tmp_path / "page.html", 1100, 500)
    try:
        assert problems == [] and refused == []
        rows = page.locator("#processes tbody tr")
        verdicts = [(rows.nth(i).get_attribute("data-function"), rows.nth(i).get_attribute(
            "data-verdict")) for i in range(rows.count())]  # fmt: skip
        assert verdicts == [("f0", "differs"), ("f1", "same"), ("f2", "same")]
        cells = rows.nth(0).locator("td.p")
        groups = [cells.nth(i).get_attribute("data-group") for i in range(cells.count())]
        assert groups == ["0", "0", "0", "0", "0", "1"]
        for i, group in enumerate(groups):
            fill = cells.nth(i).evaluate("e => getComputedStyle(e).backgroundColor")
            hex_colour = COLOURS[int(group)]
            rgb = tuple(int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
            assert fill == f"rgb({rgb[0]}, {rgb[1]}, {rgb[2]})", (i, fill)
        assert page.locator("#findings li").all_inner_texts() == [
            "error JX403 `f0`: process 0 and process 5 lowered different programs: argument "
            "x: f32[16,8] vs f32[17,8]"]  # fmt: skip
        screenshot(page, "processes.png", tmp_path)
    finally:
        page.close()


WIDE = """
import jax

def step(params, batch):
    return jax.tree.map(lambda p: p * 2, params), batch["inputs"]["tokens"].sum()

JXINSPECT = {"step": {"devices": 8, "mesh": "data=4,model=2", "donate_argnums": 0, "args":
    "{'transformer': {'encoder_layers_block_0': {"
    "'self_attention_query_kernel': f32[256@data,512@model], "
    "'self_attention_output_kernel_weights': f32[512@model,256@data]}}}, "
    "{'inputs': {'tokens': i32[64@data,128]}}"}}
"""


@pytest.mark.parametrize("width", [1400, 1024])
def test_every_column_of_a_wide_table_is_in_view(
    browser: Any, tmp_path: Path, run_cli: Any, width: int
) -> None:
    """Long paths wrap inside their cell: the last column (a leaf's links) is on screen,
    not clipped behind the page's width (it was at 1400 px on a real trainer)."""
    (tmp_path / "wide.py").write_text(WIDE, encoding="utf-8")
    out = tmp_path / "wide.html"
    result = run_cli("lower", "wide.py:step", "--compile", "--format", "html", "-o", out,
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode in (0, 1), result.describe()
    page, problems, refused = open_offline(browser, out, width, 900)
    try:
        for table in ("#inputs-table", "#outputs-table"):
            fits = page.evaluate(
                """(table) => {
                    const wrap = document.querySelector(table).closest('.table-wrap');
                    const cells = document.querySelectorAll(table + ' tbody td:last-child');
                    const right = wrap.getBoundingClientRect().right;
                    return wrap.scrollWidth <= wrap.clientWidth
                        && [...cells].every(c => c.getBoundingClientRect().right <= right + 1);
                }""",
                table,
            )
            assert fits, f"{table} runs past the page at {width} px"
        screenshot(page, f"wide-{width}.png", tmp_path)
    finally:
        page.close()
    assert problems == [], problems
    assert refused == [], f"the page asked for more than its own file: {refused}"


MEASURED = """
import jax.numpy as jnp


def step(a, b, c, d):
    big = jnp.tanh(a @ b)
    small = c @ d
    return big.sum() + small.sum()


JXINSPECT = {"step": {"args": "f32[256,256], f32[256,256], f32[16,16], f32[16,16]"}}
"""


@needs_profile_reader
def test_the_measured_step_in_chromium(browser: Any, tmp_path: Path, run_cli: Any) -> None:
    """``profile --format html``: the timeline of one step by line (one bar per instruction
    run of the report's own timeline, in the row of its line) and the time-by-line table,
    drawn from the file alone."""
    (tmp_path / "prog.py").write_text(MEASURED, encoding="utf-8")
    measured = run_cli("profile", "prog.py:step", "--steps", "3", "--format", "json",
                       cwd=tmp_path)  # fmt: skip
    assert measured.returncode == 0, measured.describe()
    profile = json.loads(measured.stdout)["profile"]
    result = run_cli("profile", "prog.py:step", "--steps", "3", "--format", "html",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    out = tmp_path / "profile.html"
    out.write_text(result.stdout, encoding="utf-8")
    page, problems, refused = open_offline(browser, out, 1280, 900)
    try:
        assert page.locator("nav a[href='#profile']").inner_text() == "Measured"
        if profile["unread"] is not None:
            assert "Not measured: " in page.locator("#profile").inner_text()
        else:
            bars = page.locator("#profile svg.timeline rect.span")
            assert bars.count() == len(profile["timeline"])  # the same program, step for step
            assert bars.first.is_visible()
            titles = [bars.nth(i).text_content() or "" for i in range(bars.count())]
            big = profile["by_line"][0]
            assert any(
                t.startswith(big["instructions"][0] + " · ") and "prog.py:6 · " in t for t in titles
            ), titles
            rows = page.locator("#profile-lines-table tbody tr")
            assert rows.count() == len(profile["by_line"])
            assert "prog.py:6" in rows.first.inner_text()  # the large product's line first
            top = page.evaluate("""() => {
                const bars = [...document.querySelectorAll('#profile rect.span')];
                return Math.min(...bars.filter(b => b.textContent.includes('prog.py:6'))
                                       .map(b => b.getBoundingClientRect().top));
            }""")  # fmt: skip
            first_row = page.evaluate(
                "document.querySelector('#profile svg.timeline').getBoundingClientRect().top"
            )
            assert top - first_row < 18  # its line holds the first row
        page.locator("#profile").scroll_into_view_if_needed()
        screenshot(page, "profile-step.png", tmp_path)
    finally:
        page.close()
    assert problems == [], problems
    assert refused == [], f"the page asked for more than its own file: {refused}"
