"""The docs site's generated pages against the code, and its navigation against its pages.

``docs/generate.py`` writes a page per rule, the configuration reference, the
command-line reference and each command page's option table from the rule table, the
typed configuration and the typer app; these tests fail when a page differs from what it
writes today (as ``tests/core/test_schema.py`` does for the JSON Schemas). Imports no JAX.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from helpers import REPO

DOCS = REPO / "docs"
REGENERATE = "python docs/generate.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generate = _generator()


def test_every_generated_page_is_what_the_code_generates() -> None:
    stale = [path.relative_to(REPO).as_posix() for path in generate.stale()]
    assert not stale, f"{', '.join(stale)} differ from the code: run {REGENERATE}"


def test_every_rule_has_its_page_linked_from_the_rules_index() -> None:
    from jxinspect.rules import EXPLAINED

    index = (DOCS / "rules" / "index.md").read_text(encoding="utf-8")
    for code in EXPLAINED:
        assert (DOCS / "rules" / f"{code}.md").is_file(), code
        assert f"]({code}.md)" in index, code


def _changes(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """One deliberate change to the code the pages come from."""
    from jxinspect.project import config, options
    from jxinspect.rules import EXPLAINED

    if kind == "a rule's summary":
        rule = EXPLAINED["JX105"]
        monkeypatch.setitem(
            generate.EXPLAINED, "JX105", dataclasses.replace(rule, summary="pruned, said else")
        )
    elif kind == "a config key":
        keys = tuple(
            dataclasses.replace(k, name="fail_on_x") if k.name == "fail_on" else k
            for k in config.CONFIG_KEYS
        )
        monkeypatch.setattr(generate, "CONFIG_KEYS", keys)
        monkeypatch.setattr(config, "CONFIG_KEYS", keys)
    else:
        changed = tuple(
            dataclasses.replace(o, help="Staging API, said else.") if o.name == "stage" else o
            for o in options.OPTIONS
        )
        monkeypatch.setattr(generate, "OPTIONS", changed)
        monkeypatch.setattr("jxinspect.cli.staging.OPTIONS", changed)
        _reload_commands()  # their flags are made from the table when they are imported


def _reload_commands() -> None:
    for name in ("jxinspect.cli.lower", "jxinspect.cli.diff"):
        importlib.reload(importlib.import_module(name))


@pytest.mark.parametrize("kind", ["a rule's summary", "a config key", "an option"])
def test_a_change_to_the_code_fails_the_drift_test(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        _changes(monkeypatch, kind)
        stale = {path.relative_to(DOCS).as_posix() for path in generate.stale()}
    finally:
        monkeypatch.undo()
        _reload_commands()
    expected = {
        "a rule's summary": {"rules/JX105.md", "rules/index.md"},
        "a config key": {"reference/configuration.md"},
        "an option": {"reference/configuration.md", "reference/cli.md", "commands/lower.md",
                      "commands/diff-debug.md"},
    }[kind]  # fmt: skip
    assert stale == expected


def _nav_pages(nav: object) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def test_the_navigation_names_existing_pages_and_every_page_is_reachable() -> None:
    """The strict build fails on a broken link; a nav entry to a missing page, it does not
    (Zensical 0.0.73): checked here. Every page is in the nav, or a rule page the rules'
    index links to."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    named = list(_nav_pages(config["nav"]))
    missing = [page for page in named if not (DOCS / page).is_file()]
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    unlisted = pages - set(named) - {f"rules/{p.name}" for p in (DOCS / "rules").glob("JX*.md")}
    assert not unlisted, f"pages in no nav entry of mkdocs.yml: {sorted(unlisted)}"


def test_a_generated_page_reads_as_the_code_says(tmp_path: Path) -> None:
    page = generate.rule_page("JX105", generate._silent())
    assert page.startswith(generate.GENERATED)
    assert "# JX105: unused argument pruned from @main" in page
    assert "**Severity:** info" in page
    assert "def loss(w: Any, x: Any, unused: Any)" in page  # the fixture
    assert "| 0.10.2 | finds it |" in page
    reference = generate.configuration()
    assert "| `fail_on` | top level | error |" in reference
    assert "| `memory_growth` | `0.1` |" in reference
