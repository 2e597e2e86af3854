"""An upgrade as a first-class diff: reports saved under JAX 0.4.35 and 0.10.2
(``sample_programs/diff/jax_upgrade/``, made by its ``regenerate.sh``) compared by meaning.
Spelling changes between releases (result paths ``['y']`` → ``result['y']``, GSPMD →
Shardy for one layout, pmap's per-device program → global shapes) are no change; the
names pmap really lost are regressions.
"""

from __future__ import annotations

import json
from typing import Any

from helpers import REPO

UPGRADE = "sample_programs/diff/jax_upgrade"


def _diff(run_cli: Any, name: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("diff-debug", f"{UPGRADE}/{name}-old.json", f"{UPGRADE}/{name}-new.json",
                     "--format", "json")  # fmt: skip
    assert result.stderr == "", result.describe()
    return result.returncode, json.loads(result.stdout)


def _changes(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [change for target in data["targets"] for change in target["changes"]]


def test_the_samples_were_made_under_two_releases() -> None:
    for name in ("predict", "step", "update"):
        old = json.loads((REPO / UPGRADE / f"{name}-old.json").read_text(encoding="utf-8"))
        new = json.loads((REPO / UPGRADE / f"{name}-new.json").read_text(encoding="utf-8"))
        assert (old["jax_version"], new["jax_version"]) == ("0.4.35", "0.10.2")


def test_result_prefix_is_a_spelling_not_a_change(run_cli: Any) -> None:
    rc, data = _diff(run_cli, "predict")
    assert rc == 0, data
    old = json.loads((REPO / UPGRADE / "predict-old.json").read_text(encoding="utf-8"))
    assert old["outputs"][0]["name"] == "['logits']"  # what 0.4.35 wrote
    assert old["outputs"][0]["path"] == "result['logits']"
    assert not [c for c in _changes(data) if c["class"] in ("path", "name", "leaf")]


def test_gspmd_to_shardy_for_one_layout_is_no_change(run_cli: Any) -> None:
    rc, data = _diff(run_cli, "update")
    assert rc == 0, data
    assert _changes(data) == []
    old = json.loads((REPO / UPGRADE / "update-old.json").read_text(encoding="utf-8"))
    new = json.loads((REPO / UPGRADE / "update-new.json").read_text(encoding="utf-8"))
    assert (old["partitioner"], new["partitioner"]) == ("gspmd", "shardy")


def test_pmap_names_lost_in_the_upgrade_are_regressions(run_cli: Any) -> None:
    rc, data = _diff(run_cli, "step")
    assert rc == 1, data
    degraded = [(c["path"], c["before"], c["after"]) for c in _changes(data)
                if (c["class"], c["kind"]) == ("name", "degraded")]  # fmt: skip
    assert degraded == [(f"{p}", p, f"flat_args[{i}]") for i, p in enumerate(
        ["params['b']", "params['w']", "batch['x']", "batch['y']"])]  # fmt: skip
    assert not [c for c in _changes(data) if c["class"] in ("sharding", "shape")]
