"""The built docs site in a real browser: headless Chromium (Debian's ``chromium``) driven
by Playwright, the site served from 127.0.0.1 and every other request refused.

The site is ``$JXINSPECT_DOCS_SITE`` (``.ci/run`` builds it with ``zensical build
--strict`` on one leg and points here), else built into the test's folder when Zensical
is installed (the docs extra). Checked: the index, a rule page and the command-line
reference open without console errors, their links resolve and their code blocks render;
from the index, a new user reaches how to stage a method with a sharded input, read a
recompile reason and gate a collective in CI in one click each; the search finds a page
with the network cut. Skips, saying why, when there is no site to open and no Zensical to
build one, or no Playwright or Chromium.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO
from render.test_html_browser import browser, screenshot  # noqa: F401  (its fixture)

SITE = "JXINSPECT_DOCS_SITE"
"""The variable naming a built site (``site/`` of ``zensical build``)."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: Any) -> Path:
    given = os.environ.get(SITE)
    if given:
        assert (Path(given) / "index.html").is_file(), f"${SITE}={given} holds no built site"
        return Path(given)
    zensical = shutil.which("zensical")
    if zensical is None:
        pytest.skip(
            f"no built site (${SITE}) and no zensical to build one: pip install -e '.[docs]'"
        )
    root = _copy(tmp_path_factory.mktemp("repo"))
    built = subprocess.run(
        [zensical, "build", "--strict", "--clean"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return root / "site"


def _copy(root: Path) -> Path:
    """What the build reads (it writes ``site/`` and ``.cache/`` beside them)."""
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copytree(REPO / "docs", root / "docs")
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site's address on 127.0.0.1."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _page(browser: Any, base: str) -> tuple[Any, list[str], list[str]]:  # noqa: F811
    """A page that may reach ``base`` only, recording console errors and what it refused."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    refused: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(m.text))
    page.on("pageerror", lambda err: problems.append(str(err)))

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(base):
            request_route.continue_()
        else:
            refused.append(url)
            request_route.abort()

    page.route("**/*", route)
    return page, problems, refused


def _links_resolve(page: Any, base: str) -> int:
    """Every link of the page's article to a page of the site answers 200 (and its
    anchor, if any, is on that page); the number checked."""
    hrefs = page.eval_on_selector_all("article a[href]", "els => els.map(e => e.href)")
    checked = 0
    for href in sorted(set(hrefs)):
        if not href.startswith(base):
            continue
        url, _, anchor = href.partition("#")
        response = page.request.get(url)
        assert response.status == 200, href
        if anchor and url.endswith(".html"):
            assert f'id="{anchor}"' in response.text(), f"{href}: no such anchor"
        checked += 1
    return checked


def test_the_index_leads_a_new_user_to_each_task(browser: Any, served: str, tmp_path: Path) -> None:  # noqa: F811
    page, problems, refused = _page(browser, served)
    page.goto(served + "index.html", wait_until="load")
    assert page.title().endswith("jxinspect")
    assert _links_resolve(page, served) >= 20
    tasks = {
        "a method target, its input split over a mesh axis": (
            "inputs.html#stage-a-method-with-a-sharded-input", "--dims seq=64@data,width=32"),
        "why did it recompile?": (
            "recording.html#why-did-it-recompile", "advice (shape)"),
        "forbid a collective, or fail on one the baseline does not have": (
            "ci.html#gate-a-collective", "forbid_collectives"),
    }  # fmt: skip
    for link, (where, shown) in tasks.items():
        page.goto(served + "index.html", wait_until="load")
        page.get_by_role("link", name=link).click()
        page.wait_for_load_state("load")
        assert page.url == served + where, link
        heading = page.locator(f"#{where.split('#')[1]}")
        assert heading.is_visible(), link
        assert shown in page.inner_text("article"), link
    screenshot(page, "docs-task.png", tmp_path)
    assert not problems, problems
    assert not refused, refused


def test_a_rule_page_and_the_command_reference(browser: Any, served: str, tmp_path: Path) -> None:  # noqa: F811
    page, problems, refused = _page(browser, served)
    page.goto(served + "rules/JX303.html", wait_until="load")
    assert page.inner_text("article h1").startswith("JX303")
    code = page.locator("article .highlight code").first  # the fixture, highlighted
    assert code.is_visible() and "def " in code.inner_text()
    assert page.locator("article .highlight code span").count() > 10  # coloured tokens
    _links_resolve(page, served)
    page.get_by_role("link", name="All rules").click()
    page.wait_for_load_state("load")
    assert page.url == served + "rules/index.html"
    assert page.locator("article table a", has_text="JX404").count() == 1
    screenshot(page, "docs-rules.png", tmp_path)

    page.goto(served + "reference/cli.html", wait_until="load")
    table = page.inner_text("article")
    for option in ("--shard <str>", "--args-from-record", "--max-compiles", "--history"):
        assert option in table, option
    assert _links_resolve(page, served) >= 9
    page.get_by_role("link", name="the lint page").click()
    page.wait_for_load_state("load")
    assert page.url == served + "commands/lint.html"
    screenshot(page, "docs-cli.png", tmp_path)
    assert not problems, problems
    assert not refused, refused


def test_the_search_works_offline(browser: Any, served: str) -> None:  # noqa: F811
    """The site's own search (its index and worker are files of the site), the network
    cut: a query finds the section, and choosing it opens that page there."""
    page, problems, refused = _page(browser, served)
    page.goto(served + "index.html", wait_until="load")
    page.locator(".md-search__button").first.click()
    page.keyboard.type("recompile")
    page.get_by_text(re.compile(r"^\d+ results?$")).wait_for(timeout=15000)
    found = page.get_by_text("Why did it recompile?", exact=True).first
    found.wait_for(state="visible", timeout=15000)  # the list fills in as the index answers
    found.click()
    page.wait_for_url(re.compile(r".*/recording\.html(\?[^#]*)?#why-did-it-recompile$"))
    assert not problems, problems
    assert not refused, refused
