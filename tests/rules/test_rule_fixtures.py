"""One fixture and one golden per rule per JAX series, and a real case for every status.

``fixtures/<rule module>.py`` is a small JAX program whose ``case()`` gives the function
and what :func:`jxinspect.inspect` stages it with (``DEVICES``: the devices it needs;
``SETTINGS``: the budgets the report is judged with; ``run()``: a run whose compiles
the report holds, as a recording's does, collected by ``assert_max_compiles``;
``accepted()``: a case whose compiled cost the report is judged against, as a lint
baseline's; ``WHY``: instead of ``case()``, the target of the module staged as ``lower
--why`` stages it).
Its report's findings (code, severity, message, path) and leaves (path, name carried,
status), normalized as the other golden files are, must equal
``rules/<CODE>.json`` among the series' golden files (layered: ``helpers.golden_file``).
Regenerate them after an intended change (then review ``git diff tests/golden``):

    JXINSPECT_UPDATE_GOLDEN=1 python -m pytest tests/rules/test_rule_fixtures.py

:data:`silent.SILENT` (``tests/rules/silent.py``, which the docs' rule pages read too)
says where a release cannot produce a code, and why: there the golden records that it
produced none, and the test checks that it did not.

JAX runs here on 8 simulated CPU devices, set when this module is collected (if another
module started JAX first with fewer, the multi-device fixtures skip and say so).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import GOLDEN, JAX_RELEASE, JAX_SERIES, REPO, UPDATE_GOLDEN, compare_golden, dump_json
from helpers import normalize_string as clean
from silent import SILENT

import jxinspect
import jxinspect.testing
from jxinspect.core.facts import Facts
from jxinspect.core.model import AcceptedCost, Report
from jxinspect.core.recompiles import Compile
from jxinspect.core.settings import Settings, parse_budget
from jxinspect.core.vocabulary import STATUSES, Status
from jxinspect.rules import RULES_BY_CODE, TABLE, apply_rules
from jxinspect.tracer import seam

if not seam.backend_started():
    seam.simulate_cpu_devices(8)

FIXTURES = Path(__file__).parent / "fixtures"
RULE_GOLDEN = GOLDEN / "rules"
REGENERATE = "JXINSPECT_UPDATE_GOLDEN=1 python -m pytest tests/rules/test_rule_fixtures.py"

STATUS_CASES: dict[Status, str] = {
    "ok": "jx105_pruned_argument",
    "synthetic": "jx102_synthetic_arg_name",
    "missing": "jx101_missing_arg_name",
    "mismatch": "jx109_mismatched_arg_name",
    "pruned": "jx105_pruned_argument",
    "renamed": "jx111_renamed_by_wrapper",
}
"""Each leaf status, and the fixture whose report shows it (where SILENT allows)."""

LIBRARIES = {"jx111_renamed_by_wrapper": "equinox", "jx307_does_not_fit": "libtpu"}
"""Fixtures that stage a library's wrapper or compile for a TPU topology (libtpu), and the
library they need (absent: the case skips)."""


def _silent(code: str) -> str | None:
    """Why this release's fixture of ``code`` produces none: its own entry, else its
    series' (``None``: it produces one)."""
    said = SILENT.get(code, {})
    return said[JAX_RELEASE] if JAX_RELEASE in said else said.get(JAX_SERIES)


def _code(stem: str) -> str:
    return stem.split("_", 1)[0].upper()


def _load(stem: str) -> ModuleType:
    if stem in LIBRARIES:
        pytest.importorskip(LIBRARIES[stem])
    spec = importlib.util.spec_from_file_location(f"rule_fixture_{stem}", FIXTURES / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def judged(stem: str) -> Report:
    """The fixture's report, staged by :func:`jxinspect.inspect` and judged."""
    module = _load(stem)
    devices = getattr(module, "DEVICES", 1)
    if seam.device_count() < devices:
        pytest.skip(f"needs {devices} devices; JAX started with {seam.device_count()}")
    compiles: tuple[Compile, ...] = ()
    run = getattr(module, "run", None)
    if run is not None:  # the compiles of a real run, as a recording holds them (first:
        with jxinspect.testing.assert_max_compiles(10**9) as guard:  # staging fills caches)
            run()
        compiles = tuple(guard.log.compiles)
    why = getattr(module, "WHY", None)
    report = _inspect(module.case()) if why is None else _inspect_why(stem, why)
    accepted, cost = getattr(module, "accepted", None), None
    if accepted is not None:
        compiled = _inspect(accepted()).compiled
        assert compiled is not None, f"{stem}: accepted() must compile"
        cost = AcceptedCost.of(stem, compiled)
    settings = Settings(
        **{k: parse_budget(k, v) for k, v in getattr(module, "SETTINGS", {}).items()}
    )
    return apply_rules(report, Facts(settings, compiles, cost))


def _inspect(case: dict[str, Any]) -> Report:
    fun, args, kwargs = case.pop("fun"), case.pop("args"), case.pop("kwargs", {})
    return jxinspect.inspect(fun, args, kwargs, texts=False, **case)


def _inspect_why(stem: str, function: str) -> Report:
    """The fixture's target ``function`` staged as ``lower --why`` stages it: compiled,
    with the partitioner's record of the same compile."""
    from jxinspect.pipeline import inspect_target

    target = f"{FIXTURES / f'{stem}.py'}:{function}"
    return inspect_target(target, compile=True, why=True, freeze=False, judged=False)


def golden_text(stem: str, report: Report) -> str:
    """The golden file's content: normalized findings and leaves."""
    leaves = {
        side: [f"{clean(leaf.path)}: {leaf.status}, carries {leaf.name!r}" for leaf in leaves]
        for side, leaves in (("inputs", report.inputs), ("outputs", report.outputs))
    }
    findings = [
        {"code": f.code, "severity": f.severity, "message": clean(f.message),
         "path": clean(f.path) if f.path is not None else None}
        for f in report.findings
    ]  # fmt: skip
    fixture = (FIXTURES / f"{stem}.py").relative_to(REPO).as_posix()
    return dump_json({"fixture": fixture, "findings": findings, **leaves})


@pytest.mark.parametrize("stem", TABLE)
def test_rule_fixture(stem: str) -> None:
    code = _code(stem)
    report = judged(stem)
    compare_golden(RULE_GOLDEN / f"{code}.json", golden_text(stem, report), REGENERATE)
    produced = [f for f in report.findings if f.code == code]
    why = _silent(code)
    if why is not None:
        assert produced == [], f"JAX {JAX_RELEASE} was thought not to produce {code}: {why}"
    else:
        assert produced, f"the fixture of {code} produced none under JAX {JAX_RELEASE}"
        assert {f.severity for f in produced} == {RULES_BY_CODE[code].severity}


@pytest.mark.parametrize("status", STATUSES)
def test_status_has_a_real_case(status: Status) -> None:
    stem = STATUS_CASES[status]
    report = judged(stem)
    seen = {leaf.status for leaf in report.inputs} | {leaf.status for leaf in report.outputs}
    why = _silent(_code(stem))
    if why is not None:
        assert status not in seen, f"JAX {JAX_RELEASE} was thought to show no {status}: {why}"
    else:
        assert status in seen, f"{stem} shows no {status} leaf under JAX {JAX_RELEASE}: {seen}"


def test_every_rule_has_one_fixture() -> None:
    """The fixtures are named after the rule modules, one each; the table is in code order."""
    assert sorted(p.stem for p in FIXTURES.glob("*.py")) == sorted(TABLE)
    assert [_code(stem) for stem in TABLE] == list(RULES_BY_CODE) == sorted(RULES_BY_CODE)


def test_no_stale_rule_golden_files() -> None:
    wanted = {f"{_code(stem)}.json" for stem in TABLE}
    stale = sorted(p for p in RULE_GOLDEN.glob("*") if p.name not in wanted)
    if UPDATE_GOLDEN:
        for path in stale:
            path.unlink()
        return
    assert not stale, f"rule golden files for no rule: {[p.name for p in stale]}"
