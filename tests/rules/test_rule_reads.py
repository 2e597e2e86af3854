"""What each rule reads, and what a policy needs staged for its rules (``rules.needs``):
the one place ``lint``, ``lower`` and the API decide whether to compile, read the peak or
the partitioner's record. And what adding a rule must touch (docs/development.md's
"Adding a rule"): a module no table names, a rule without a fixture, a golden or a docs
page fails here or in ``test_rule_fixtures.py`` / ``tests/docs/test_generated.py``."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from helpers import GOLDEN_ROOT, GOLDEN_SERIES, REPO

import jxinspect.rules as rules
from jxinspect.core.facts import READS, Read
from jxinspect.core.settings import ForbiddenCollective, Settings
from jxinspect.project.config import Policy
from jxinspect.rules.base import Conditions

BUDGETS = (
    Settings(),
    Settings(temporaries_per_device=1),
    Settings(collective_bytes_per_step=1),
    Settings(peak_per_device=1),
    Settings(forbid_collectives=(ForbiddenCollective("all-gather"),)),
    Settings(hbm_fraction=0.5),
    Settings(max_compiles=1, bytes_per_device=1),
)


def test_every_read_is_said_in_words() -> None:
    assert set(READS) == set(get_args(Read))


@pytest.mark.parametrize("rule", rules.RULES, ids=lambda rule: rule.code)
def test_a_rule_needs_only_what_it_says_it_reads(rule: rules.Rule) -> None:
    assert rule.reads and set(rule.reads) <= set(get_args(Read))
    for settings in BUDGETS:
        for topology in (False, True):
            assert set(rule.needs(Conditions(settings, topology))) <= set(rule.reads)


@pytest.mark.parametrize(
    ("policy", "topology", "staged"),
    [
        (Policy(), False, {"lowered"}),
        (Policy(settings=Settings(temporaries_per_device=1)), False, {"lowered", "compiled"}),
        (Policy(settings=Settings(forbid_collectives=(ForbiddenCollective("all-gather"),))),
         False, {"lowered", "compiled"}),
        (Policy(settings=Settings(peak_per_device=1)), False, {"lowered", "compiled", "peak"}),
        (Policy(settings=Settings(peak_per_device=1), ignore=("JX303",)), False, {"lowered"}),
        (Policy(settings=Settings(hbm_fraction=0.5)), False, {"lowered"}),
        (Policy(settings=Settings(hbm_fraction=0.5)), True, {"lowered", "compiled", "peak"}),
        (Policy(settings=Settings(max_compiles=1, bytes_per_device=1)), False, {"lowered"}),
        (Policy(compile=True), False, {"lowered", "compiled"}),
        (Policy(why=True), False, {"lowered", "compiled", "origins"}),
    ],
)  # fmt: skip
def test_needs_is_what_the_policy_stages(policy: Policy, topology: bool, staged: set[str]) -> None:
    assert rules.needs(policy, topology=topology) == staged


def test_every_rule_module_is_in_a_table_with_a_fixture_golden_and_page() -> None:
    """A new ``rules/jxNNN_*.py`` is named in ``TABLE`` (or ``COMPARISON_TABLE``), has a
    fixture (the comparison rules: their own tests), a golden in a series and a
    generated docs page."""
    folder = Path(rules.__file__).parent
    modules = {p.stem for p in folder.glob("jx[0-9][0-9][0-9]_*.py")}
    assert modules == {*rules.TABLE, *rules.COMPARISON_TABLE}
    fixtures = {p.stem for p in (Path(__file__).parent / "fixtures").glob("jx*.py")}
    assert set(rules.TABLE) <= fixtures
    series = [GOLDEN_ROOT / f"jax-{name}" / "rules" for name in GOLDEN_SERIES]
    for code in rules.EXPLAINED:
        assert (REPO / "docs" / "rules" / f"{code}.md").is_file(), f"no docs page for {code}"
        if code in rules.RULES_BY_CODE:
            held = any((folder / f"{code}.json").is_file() for folder in series)
            assert held, f"no golden for {code}"
