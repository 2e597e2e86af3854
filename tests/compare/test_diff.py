"""Unit tests of jxinspect.diff on hand-built reports, the diff renderers, and the parts of
jxinspect.compare.sources that need no JAX. No subprocess, no JAX."""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jxinspect.cli.diff import allowed_classes
from jxinspect.compare.cost import cost_changes
from jxinspect.compare.diff import diff_reports, match_leaves
from jxinspect.compare.sources import (
    JsonSource,
    MlirSource,
    Program,
    PythonSource,
    TargetSource,
    open_source,
    pair_targets,
)
from jxinspect.core import codec
from jxinspect.core.cost_diff import CollectiveChange, CostDiff, MeasureChange
from jxinspect.core.diff import CHANGE_CLASSES, Change, DiffReport, Gate, TargetDiff
from jxinspect.core.errors import UsageError
from jxinspect.core.model import (
    Collective,
    Finding,
    Input,
    Mesh,
    NestedJaxpr,
    Output,
    Report,
    Sharding,
    StaticArg,
    Status,
)
from jxinspect.project.targets import parse_target
from jxinspect.render.compare import markdown as diff_markdown
from jxinspect.render.compare import text as diff_text

diff_module = importlib.import_module("jxinspect.compare.diff")

MESH = Mesh((("data", 4), ("model", 2)))


def arg(
    path: str,
    name: str | None = "=",
    status: Status | None = None,
    shape: tuple[int, ...] = (8, 16),
    index: int = 0,
    **more: Any,
) -> Input:
    """An argument; ``name="="`` means it carries its path (status ``ok``)."""
    carried = path if name == "=" else name
    if status is None:
        status = "ok" if carried == path else "missing" if not carried else "synthetic"
    return Input(
        index=index,
        path=path,
        jaxpr_name=carried,
        name=carried,
        status=status,
        shape=shape,
        dtype="float32",
        **more,
    )


def res(
    path: str,
    name: str | None = "=",
    status: Status | None = None,
    shape: tuple[int, ...] = (8,),
    index: int = 0,
    **more: Any,
) -> Output:
    carried = path if name == "=" else name
    if status is None:
        status = "ok" if carried == path else "missing" if not carried else "synthetic"
    return Output(
        index=index,
        path=path,
        jaxpr_path=carried,
        name=carried,
        status=status,
        shape=shape,
        dtype="float32",
        **more,
    )


def report(inputs: list[Input] | None = None, outputs: list[Output] | None = None,
           **more: Any) -> Report:  # fmt: skip
    """A lowered jit report; leaves are numbered in order."""
    ins = tuple(replace(leaf, index=i) for i, leaf in enumerate(inputs or []))
    outs = tuple(replace(leaf, index=i) for i, leaf in enumerate(outputs or []))
    fields: dict[str, Any] = dict(
        target="m.py:f",
        stage="jit",
        reached="lowered",
        jax_version="0.10.2",
        platform="cpu",
        num_devices=8,
        jaxpr=NestedJaxpr("top", "jit", "ok"),
    )
    fields.update(more)
    return Report(inputs=ins, outputs=outs, **fields)


def only(diff: TargetDiff, category: str | None = None) -> Change:
    changes = [c for c in diff.changes if category is None or c.category == category]
    assert len(changes) == 1, changes
    return changes[0]


def tiled(*spec: tuple[str, ...], mesh: Mesh | None = MESH, source: str = "sdy") -> Sharding:
    used = {a for axes in spec for a in axes}
    replicas = 1 if mesh is None else math.prod(s for n, s in mesh.axes if n not in used)
    return Sharding(
        "tiled" if used else "replicated",
        spec=tuple(spec),
        mesh=mesh,
        replicas=replicas,
        source=source,
    )


# ---- names and paths ---------------------------------------------------------------------


def test_identical_reports_have_no_changes() -> None:
    r = report([arg("x"), arg("w", shape=(16, 4))], [res("result")])
    diff = diff_reports(r, r)
    assert diff.changes == ()
    assert (diff.unchanged.inputs, diff.unchanged.outputs) == (2, 1)


@pytest.mark.parametrize(
    ("after", "kind", "verdict"),
    [
        (arg("x", "flat_args[0]"), "degraded", "regression"),
        (arg("x", None), "lost", "regression"),
        (arg("x", "w", status="mismatch"), "degraded", "regression"),
    ],
)
def test_name_lost_or_degraded_is_an_error(after: Input, kind: str, verdict: str) -> None:
    change = only(diff_reports(report([arg("x")]), report([after])))
    assert (change.category, change.kind, change.verdict, change.severity) == (
        "name",
        kind,
        verdict,
        "error",
    )
    assert change.matched_by == "path" and change.before == "x"
    assert Gate().fails(change)


def test_name_recovered_and_improved() -> None:
    recovered = only(diff_reports(report([arg("x", "args[0]")]), report([arg("x")])))
    assert (recovered.kind, recovered.verdict, recovered.severity) == (
        "recovered",
        "improvement",
        None,
    )
    improved = only(diff_reports(report([arg("x", None)]), report([arg("x", "args[0]")])))
    assert (improved.kind, improved.verdict) == ("improved", "improvement")
    changed = only(diff_reports(report([arg("x", "args[0]")]), report([arg("x", "flat_args[0]")])))
    assert (changed.kind, changed.verdict) == ("changed", "neutral")


def test_a_lost_name_is_matched_by_position_not_removed_and_added() -> None:
    """A report read from StableHLO knows no paths: ``#0`` with ``flat_args[0]``."""
    before = report([arg("params['b']", shape=(4,)), arg("params['w']", shape=(16, 4))])
    after = report([arg("#0", "flat_args[0]", shape=(4,)), arg("#1", None, shape=(16, 4))])
    diff = diff_reports(before, after)
    assert [(c.kind, c.path, c.before, c.after, c.matched_by) for c in diff.changes] == [
        ("degraded", "params['b']", "params['b']", "flat_args[0]", "position"),
        ("lost", "params['w']", "params['w']", None, "position"),
    ]
    assert "matched by position" in diff.changes[0].message


def test_renamed_parameter_and_result_key_are_neutral() -> None:
    before = report(
        [arg("params", shape=(3,)), arg("x")], [res("result['acc']"), res("result['loss']")]
    )
    after = report(
        [arg("params", shape=(3,)), arg("inputs")],
        [res("result['accuracy']"), res("result['loss']")],
    )
    diff = diff_reports(before, after)
    assert [(c.category, c.kind, c.verdict, c.before, c.after) for c in diff.changes] == [
        ("name", "renamed", "neutral", "x", "inputs"),
        ("path", "renamed", "neutral", "result['acc']", "result['accuracy']"),
    ]
    assert (diff.unchanged.inputs, diff.unchanged.outputs) == (1, 1)


def test_leaves_of_another_type_are_removed_and_added() -> None:
    diff = diff_reports(report([arg("x", shape=(3,))]), report([arg("y", shape=(4,))]))
    assert [(c.category, c.kind, c.path) for c in diff.changes] == [
        ("leaf", "removed", "x"),
        ("leaf", "added", "y"),
    ]
    assert all(c.verdict == "neutral" for c in diff.changes)


def test_matching_by_position_keeps_order_and_skips_inserted_leaves() -> None:
    before = [arg("a", shape=(1,)), arg("b", shape=(2,)), arg("c", shape=(3,))]
    after = [arg("#0", None, shape=(1,)), arg("new", shape=(9,)), arg("#2", None, shape=(3,))]
    before = [replace(leaf, index=i) for i, leaf in enumerate(before)]
    after = [replace(leaf, index=i) for i, leaf in enumerate(after)]
    pairs, removed, added = match_leaves(before, after)
    assert [(b.path, a.path, how) for b, a, how in pairs] == [
        ("a", "#0", "position"),
        ("c", "#2", "position"),
    ]
    assert [leaf.path for leaf in removed] == ["b"]
    assert [leaf.path for leaf in added] == ["new"]


@pytest.mark.parametrize("limit", [diff_module.ALIGN_LIMIT, 0])
def test_align_keeps_order_with_difflib_or_greedily(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diff_module, "ALIGN_LIMIT", limit)
    assert diff_module.align("abcxdef", "abydef") == [(0, 0), (1, 1), (4, 3), (5, 4), (6, 5)]
    assert diff_module.align("ab", "") == []
    pairs = diff_module.align("xyzab", "azbyq")
    assert pairs == sorted(pairs) and all("xyzab"[i] == "azbyq"[j] for i, j in pairs)
    assert len({j for _, j in pairs}) == len(pairs)


def test_shape_change_is_neutral() -> None:
    change = only(diff_reports(report([arg("x")]), report([arg("x", shape=(4, 16))])))
    assert (change.category, change.before, change.after, change.verdict) == (
        "shape",
        "f32[8,16]",
        "f32[4,16]",
        "neutral",
    )


def test_equal_names_are_not_compared_across_knowledge() -> None:
    """py knows ``result[0]`` is a fallback; StableHLO alone cannot: same name, no change."""
    before = report(outputs=[res("result['y']", "result[0]")])
    after = report(outputs=[res("result[0]", "result[0]", status="ok")])
    assert diff_reports(before, after).changes == ()


# ---- shardings, donation, pruning ----------------------------------------------------------


def test_a_sharding_change_is_judged_by_the_bytes_per_device() -> None:
    """Replicated → split 2 ways halves a device's bytes (an improvement); the same split
    on another dimension holds as many (neutral); a layout a side does not declare has
    no known effect (an error, as it was); the reverse of an improvement is an error."""
    before = report(
        [arg("w", sharding=tiled((), ("model",))), arg("e", sharding=tiled((), ()), index=1)],
        [res("result")],
    )
    after = report(
        [arg("w", sharding=tiled(("model",), ())), arg("e", sharding=tiled(("model",), ()))],
        [res("result", sharding=tiled(("data",)))],
    )
    diff = diff_reports(before, after)
    found = {c.path: (c.verdict, c.severity, c.before, c.after) for c in diff.changes}
    # f32[8,16] is 512 B; split 2 ways over model, 256 B a device
    assert found == {
        "w": ("neutral", None, "P(None, 'model')", "P('model', None)"),
        "e": ("improvement", None, "replicated, 512 B per device",
              "P('model', None), 256 B per device"),
        "result": ("regression", "error", None, "P('data')"),
    }  # fmt: skip
    worse = [c for c in diff_reports(after, before).changes if c.path == "e"]
    assert [(c.verdict, c.severity) for c in worse] == [("regression", "error")]
    gate = DiffReport(before="a", after="b", targets=(diff,), allow=("sharding",))
    assert gate.failing == [] and not gate.failed
    assert DiffReport(before="a", after="b", targets=(diff,)).failed


def test_a_change_both_declared_and_compiled_is_one_change() -> None:
    def leaf(declared: Sharding, compiled: Sharding) -> Input:
        return replace(arg("x", sharding=declared), compiled_sharding=compiled)

    before, after = tiled((), ()), tiled(("data",), ())
    [change] = diff_reports(report([leaf(before, before)]), report([leaf(after, after)])).changes
    assert (change.verdict, change.before, change.after) == (
        "improvement", "replicated, 512 B per device", "P('data', None), 128 B per device",
    )  # fmt: skip


def test_same_layout_from_shardy_and_gspmd_is_no_change() -> None:
    shardy = tiled(("data",), ())
    gspmd = Sharding("tiled", spec=((), ()), mesh=None, tiles=(4, 1), replicas=2, source="gspmd")
    assert (
        diff_reports(
            report([arg("x", sharding=shardy)]), report([arg("x", sharding=gspmd)])
        ).changes
        == ()
    )


def test_sharding_on_another_mesh_names_the_meshes() -> None:
    other = Mesh((("data", 8),))
    change = only(
        diff_reports(
            report([arg("x", sharding=tiled(("data",), ()))]),
            report([arg("x", sharding=tiled(("data",), (), mesh=other))]),
        )
    )
    assert change.before == "P('data', None) on data=4,model=2, 128 B per device"
    assert change.after == "P('data', None) on data=8, 64 B per device"
    assert change.verdict == "improvement"


def test_compiled_sharding_is_compared_when_both_sides_have_it() -> None:
    def leaf(sharding: Sharding | None) -> Input:
        return replace(arg("x"), compiled_sharding=sharding)

    change = only(diff_reports(report([leaf(tiled(("data",), ()))]), report([leaf(tiled((), ()))])))
    assert (change.category, change.verdict, change.before, change.after) == (
        "sharding",
        "regression",
        "P('data', None), 128 B per device (compiled)",
        "replicated, 512 B per device (compiled)",
    )
    assert diff_reports(report([leaf(tiled(("data",), ()))]), report([leaf(None)])).changes == ()


def test_a_donation_the_compiler_could_not_use_is_dropped_neutrally() -> None:
    """JX301 on the before side says the donation did nothing, and so does a lowered
    donor no output of its type and per-device shape could take: dropping it loses
    nothing. A donor an output could take is an error to drop, as an alias is."""
    unusable = Finding("JX301", "warning", "argument tokens is donated but ...", path="tokens")
    donor = arg("tokens", donated=True, buffer_donor=True)
    fits, other = res("out", shape=(8, 16)), res("out", shape=(4,))
    cases = [
        (report([donor], [fits], findings=(unusable,)), [fits], ("neutral", None)),
        (report([donor], [other]), [other], ("neutral", None)),  # nothing could take it
        (report([donor], [fits]), [fits], ("regression", "error")),
    ]
    for before, outputs, graded in cases:
        change = only(diff_reports(before, report([arg("tokens")], outputs)), "donation")
        assert (change.kind, change.verdict, change.severity) == ("dropped", *graded)


@pytest.mark.parametrize(
    ("old", "new", "kind", "verdict"),
    [
        ({"donated": True, "aliased_output": 0}, {}, "dropped", "regression"),
        ({"donated": True, "buffer_donor": True}, {"donated": True}, "dropped", "regression"),
        ({}, {"donated": True, "aliased_output": 1}, "added", "improvement"),
        (
            {"donated": True, "aliased_output": 0},
            {"donated": True, "aliased_output": 2},
            "changed",
            "neutral",
        ),
        ({"donated": True}, {}, "changed", "neutral"),
    ],
)
def test_donation(old: dict[str, Any], new: dict[str, Any], kind: str, verdict: str) -> None:
    taker = [res("out", shape=(8, 16))]  # an output a donation can go to
    change = only(
        diff_reports(report([arg("state", **old)], taker), report([arg("state", **new)], taker))
    )
    assert (change.category, change.kind, change.verdict) == ("donation", kind, verdict)
    assert change.severity == ("error" if verdict == "regression" else None)


def test_pruned_and_unpruned() -> None:
    kept, pruned = arg("w"), arg("w", None, status="pruned")
    change = only(diff_reports(report([kept]), report([pruned])))
    assert (change.category, change.kind, change.severity) == ("pruned", "pruned", "warning")
    assert not Gate().fails(change) and Gate("warning").fails(change)
    back = only(diff_reports(report([pruned]), report([kept])))
    assert (back.kind, back.verdict) == ("unpruned", "improvement")


# ---- target, static arguments, nested jaxprs, findings --------------------------------------


def test_stage_and_reached() -> None:
    diff = diff_reports(report(), report(stage="pmap", reached="traced"))
    assert [(c.path, c.kind, c.verdict, c.severity) for c in diff.changes] == [
        ("reached", "degraded", "regression", "error"),
        ("stage", "changed", "neutral", None),
    ]
    # `compiled` is not better than `lowered`: diff-debug does not compile.
    assert diff_reports(report(reached="compiled"), report()).changes == ()


def test_static_arguments() -> None:
    before = report(
        static_args=(
            StaticArg("n", 1, "3"),
            StaticArg("mode", None, "'a'"),
            StaticArg("gone", 2, "1"),
        )
    )
    after = report(
        static_args=(
            StaticArg("n", None, "3"),
            StaticArg("mode", None, "'b'"),
            StaticArg("new", 3, "True"),
        )
    )
    changes = diff_reports(before, after).changes
    assert [(c.kind, c.path, c.before, c.after) for c in changes] == [
        ("moved", "n", "position 1", "keyword"),
        ("changed", "mode", "'a'", "'b'"),
        ("removed", "gone", "1", None),
        ("added", "new", None, "True"),
    ]
    assert {c.verdict for c in changes} == {"neutral"}


def test_what_stablehlo_does_not_know_is_not_compared() -> None:
    before = report(
        static_args=(StaticArg("n", 1, "3"),), nested=(NestedJaxpr("0:pjit.jaxpr", "pjit", "ok"),)
    )
    after = report(stage=None, jaxpr=None, jax_version=None)
    assert diff_reports(before, after).changes == ()


def test_nested_jaxprs_are_matched_by_structure() -> None:
    def nested(*items: tuple[str, str]) -> tuple[NestedJaxpr, ...]:
        return tuple(
            NestedJaxpr(where, where.split(":")[-1].split(".")[0], q) for where, q in items
        )  # type: ignore[arg-type]

    before = report(nested=nested(("1:pjit.jaxpr", "ok"), ("4:scan.jaxpr", "missing")))
    after = report(
        nested=nested(
            ("0:pjit.jaxpr", "partial"), ("5:scan.jaxpr", "ok"), ("6:cond.branches[0]", "missing")
        )
    )
    changes = diff_reports(before, after).changes
    assert [(c.kind, c.path, c.verdict, c.before, c.after) for c in changes] == [
        ("degraded", "pjit.jaxpr", "regression", "ok", "partial"),
        ("added", "cond.branches[0]", "regression", None, "missing"),
        ("improved", "scan.jaxpr", "improvement", "missing", "ok"),
    ]


def test_finding_deltas_by_code_carry_the_finding_severity() -> None:
    def finding(code: str, severity: Any) -> Finding:
        return Finding(code, severity, "m")

    before = report(findings=(finding("JX105", "info"), finding("JX105", "info")))
    after = report(findings=(finding("JX102", "warning"), finding("JX108", "error")))
    changes = diff_reports(before, after).changes
    assert [(c.path, c.kind, c.severity, c.before, c.after) for c in changes] == [
        ("JX102", "more", "warning", "0", "1"),
        ("JX108", "more", "error", "0", "1"),
        ("JX105", "fewer", None, "2", "0"),
    ]


# ---- the gate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gate", "failing"),
    [
        ({}, ["name", "sharding"]),
        ({"fail_on": "warning"}, ["name", "sharding", "pruned"]),
        ({"allow": ("name",)}, ["sharding"]),
        ({"fail_on": "never"}, []),
    ],
)
def test_gate(gate: dict[str, Any], failing: list[str]) -> None:
    before = report([arg("x"), arg("w")])
    after = report(
        [arg("x", "flat_args[0]", sharding=tiled(("data",), ())), arg("w", None, status="pruned")]
    )
    diff = DiffReport(before="a", after="b", targets=(diff_reports(before, after),), **gate)
    assert [c.category for c in diff.failing] == failing
    assert diff.summary.failing == len(failing) and diff.failed == bool(failing)
    again = codec.decode(codec.dumps(diff), DiffReport, source="diff.json")
    assert again == diff and codec.dumps(again) == codec.dumps(diff)


def test_regressions_come_first() -> None:
    before = report([arg("a", "args[0]"), arg("b", shape=(3,))])
    after = report([arg("a"), arg("b", None, shape=(4,))], stage="pjit")
    verdicts = [c.verdict for c in diff_reports(before, after).changes]
    assert verdicts == sorted(verdicts, key=["regression", "improvement", "neutral"].index)
    assert verdicts[0] == "regression"


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded CI machine
@given(st.lists(st.sampled_from(["ok", "synthetic", "missing"]), min_size=2, max_size=12))
def test_swapping_sides_swaps_regressions_and_improvements(statuses: list[str]) -> None:
    half = len(statuses) // 2
    names = {"ok": "=", "synthetic": "flat_args[0]", "missing": None}

    def side(chosen: list[str]) -> Report:
        return report([arg(f"p{i}", names[s]) for i, s in enumerate(chosen)])

    a, b = side(statuses[:half]), side(statuses[half : 2 * half])
    forward = verdict_counts(diff_reports(a, b))
    backward = verdict_counts(diff_reports(b, a))
    assert forward["regression"] == backward["improvement"]
    assert forward["improvement"] == backward["regression"]


def verdict_counts(diff: TargetDiff) -> dict[str, int]:
    return {v: len(diff.of_verdict(v)) for v in ("regression", "improvement", "neutral")}  # type: ignore[arg-type]


def test_allow_flag_parses_classes() -> None:
    assert allowed_classes(["sharding", "donation, pruned"]) == {"sharding", "donation", "pruned"}
    with pytest.raises(UsageError, match="did you mean `sharding`"):
        allowed_classes(["shardin"])
    from typing import get_args

    from jxinspect.core.diff import ChangeClass

    assert CHANGE_CLASSES == get_args(ChangeClass)


# ---- JSON schema and renderers -------------------------------------------------------------------


@functools.cache
def _diff_validator() -> Any:
    from jsonschema import Draft202012Validator

    text = importlib.resources.files("jxinspect").joinpath("schemas/diff.schema.json").read_text()
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def assert_valid_diff(data: Any) -> None:
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in _diff_validator().iter_errors(data)
    ]
    assert not errors, "\n".join(errors[:20])


def _busy_diff(**gate: Any) -> DiffReport:
    before = report(
        [
            arg("params['b']", shape=(4,), donated=True, aliased_output=0),
            arg("x|y", shape=(2,)),
            arg("gone", shape=(7,)),
        ],
        [res("result['probs']")],
        static_args=(StaticArg("n", 1, "3"),),
    )
    after = report(
        [
            arg("#0", "flat_args[0]", shape=(4,), sharding=tiled(("data",))),
            arg("x|y", "args[1]", shape=(2,)),
        ],
        [res("result['probabilities']")],
        stage="pmap",
        static_args=(StaticArg("n", None, "3"),),
        findings=(Finding("JX102", "warning", "m"),),
    )
    targets = (diff_reports(before, after, "step"),)
    return DiffReport(before="before.py", after="after.mlir", targets=targets, **gate)


def test_json_matches_the_schema() -> None:
    diff = _busy_diff(fail_on="warning", allow=("donation",))
    data = json.loads(codec.dumps(diff))
    assert_valid_diff(data)
    assert data["schema"] == "jxinspect.diff/1" and data["failed"] is True
    assert data["allow"] == ["donation"] and data["fail_on"] == "warning"
    kinds = {(c["class"], c["kind"]): c for c in data["targets"][0]["changes"]}
    assert kinds[("donation", "dropped")]["failing"] is False
    assert kinds[("name", "degraded")]["failing"] is True
    assert set(kinds) >= {
        ("leaf", "removed"),
        ("static", "moved"),
        ("finding", "more"),
        ("path", "renamed"),
        ("stage", "changed"),
        ("sharding", "changed"),
    }
    never = json.loads(codec.dumps(_busy_diff(fail_on="never")))
    assert_valid_diff(never)
    assert never["fail_on"] == "never" and never["failed"] is False


def test_plain_text_is_side_by_side_with_regressions_first() -> None:
    text = diff_text.render(_busy_diff())
    assert text.startswith("before: before.py\nafter:  after.mlir\n\n== step ==\n")
    assert "\x1b[" not in text
    sections = [
        line.split(" (")[0]
        for line in text.splitlines()
        if line.startswith(("regressions", "improvements", "neutral"))
    ]
    assert sections == ["regressions", "neutral"]
    assert "  stage     jit → reached lowered" in text and "pmap → reached lowered" in text
    assert "error     name      degraded  argument  params['b']" in text
    assert text.rstrip().endswith("failing at --fail-on error), 0 improvements, 4 neutral")
    assert text.rstrip().splitlines()[-1].startswith("FAIL: ")


def test_rich_text_has_colour_and_the_same_rows() -> None:
    text = diff_text.render(_busy_diff(), color=True)
    assert "\x1b[" in text
    for word in ("params['b']", "flat_args[0]", "regressions", "FAIL:"):
        assert word in text


def test_markdown_escapes_pipes_and_folds_neutral_changes() -> None:
    text = diff_markdown.render(_busy_diff())
    assert text.startswith("## ❌ jxinspect diff-debug\n")
    assert "`x\\|y`" in text
    assert "<details><summary>Neutral (4)</summary>" in text
    assert "| **error** | name | degraded | argument | `params['b']` |" in text
    same = (diff_reports(report(), report(), "f"),)
    ok = diff_markdown.render(DiffReport(before="a", after="b", targets=same))
    assert ok.startswith("## ✅") and "No changes." in ok


# ---- sources, without JAX ----------------------------------------------------------------------


def test_json_that_is_not_a_report(tmp_path: Path) -> None:
    cases = {
        "list.json": "[1, 2]",
        "other.json": '{"schema": "other/1"}',
        "broken.json": '{"schema": "jxinspect.report/1", "target": "x"}',
        "bad.json": "{nope",
    }
    messages = {}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(UsageError) as err:
            open_source(str(tmp_path / name))
        messages[name] = str(err.value)
    assert "not a jxinspect report" in messages["list.json"]
    assert "its schema is 'other/1'" in messages["other.json"]
    assert messages["broken.json"] == (
        f"{tmp_path / 'broken.json'} is not a jxinspect report "
        "(at $: object missing required field `stage`); "
        "save one with `jxinspect lower TARGET --format json -o FILE`"
    )
    assert (
        messages["bad.json"]
        == f"{tmp_path / 'bad.json'} is not JSON (object keys must be strings (byte 1))"
    )
    assert all("\n" not in m for m in messages.values())


def test_a_saved_report_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "saved"  # no suffix: sniffed
    path.write_text(codec.dumps(report([arg("x")], target="pkg/m.py:step")))
    source = open_source(str(path))
    assert isinstance(source, JsonSource) and source.functions == ("step",)
    assert source.report.inputs[0].path == "x"


def test_missing_files() -> None:
    for text in ("nope.py", "nope.json", "nope.mlir", "nope.py:f"):
        with pytest.raises(UsageError, match="no such file: nope"):
            open_source(text)


PY, JSON, MLIR = "python", "json", "mlir"


def side(text: str, kind: str, *functions: Any) -> Program:
    """An input of ``kind`` called ``text`` that holds ``functions``."""
    if kind == PY:
        return PythonSource(text, parse_target("m.py"), functions)
    if kind == "target":
        return TargetSource(text, parse_target(f"m.py:{functions[0]}"))
    if kind == JSON:
        return JsonSource(text, report(target=f"m.py:{functions[0]}"))
    assert kind == MLIR and functions == (None,)
    return MlirSource(text, "")


@pytest.mark.parametrize(
    ("old", "new", "pairs"),
    [
        ((MLIR, None), (JSON, "step"), [("step", None, "step")]),
        ((MLIR, None), (PY, "step"), [("step", None, "step")]),
        (("target", "f"), ("target", "g"), [("f → g", "f", "g")]),
        ((MLIR, None), (MLIR, None), [("@main", None, None)]),
        ((PY, "a", "b"), (PY, "b", "a"), [("a", "a", "a"), ("b", "b", "b")]),
        ((JSON, "b"), (PY, "a", "b"), [("b", "b", "b")]),
    ],
)
def test_pairing(old: tuple[Any, ...], new: tuple[Any, ...], pairs: list[tuple[Any, ...]]) -> None:
    found = pair_targets(side("old", *old), side("new", *new))
    assert [(p.name, p.before, p.after) for p in found] == pairs


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ((PY, "a", "b"), (PY, "a", "c"), "`b` is declared only in old"),
        ((PY, "a"), (PY, "a", "c"), "`c` is declared only in new"),
        (
            (JSON, "a"),
            (PY, "b", "c"),
            r"`a` \(old\) is not among the functions new declares \(b, c\)",
        ),
        ((MLIR, None), (PY, "b", "c"), "old holds one program but new declares 2 functions"),
    ],
)
def test_a_target_only_one_side_has(old: Any, new: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        pair_targets(side("old", *old), side("new", *new))


def test_report_read_from_stablehlo_text_fits_the_schema() -> None:
    """A report built from an .mlir file (stage and versions unknown) is still a valid
    jxinspect.report/1 document."""
    import jax
    import jax.numpy as jnp
    from helpers import assert_valid_report

    from jxinspect.tracer import seam
    from jxinspect.tracer.read.stablehlo import report_from_text

    def layer(x: Any, w: Any) -> Any:
        return x @ w

    sds = jax.ShapeDtypeStruct
    lowered = jax.jit(layer).trace(sds((8, 4), jnp.float32), sds((4, 2), jnp.float32)).lower()
    report = report_from_text(seam.lowered_text(lowered, "stablehlo", True), "layer.mlir")
    assert report.stage is None and report.jax_version is None and report.platform is None
    assert [leaf.name for leaf in report.inputs] == ["x", "w"]
    assert_valid_report(codec.plain(report), "report from StableHLO text")


# ---- the compiled cost judged by its effect -------------------------------------------------


def _collective(kind: str, size: int, path: str) -> Collective:
    return Collective(kind, (), size, ("model",), instruction=f"{kind}.{size}",
                      operand_paths=(path,))  # fmt: skip


def _graded(cost: CostDiff) -> dict[str, tuple[str, str | None]]:
    return {f"{c.kind} {c.path}": (c.verdict, c.severity) for c in cost_changes(cost)}


def test_cost_measures_falling_are_improvements_growing_regressions() -> None:
    """One threshold (10%) both ways: a fall past it an improvement, a rise past it a
    regression (temporaries an error, the budget; the rest warnings), within it nothing."""
    measures = (
        MeasureChange("arguments", 400, 100), MeasureChange("outputs", 100, 150),
        MeasureChange("temporaries", 100, 150), MeasureChange("aliased", 0, 400),
        MeasureChange("flops", 100.0, 95.0),
    )  # fmt: skip
    assert _graded(CostDiff(measures)) == {
        "shrank arguments": ("improvement", None),
        "grew outputs": ("regression", "warning"),
        "grew temporaries": ("regression", "error"),
    }


@pytest.mark.parametrize(("moved_after", "added"), [(300, "warning"), (1100, "error")])
def test_a_collective_added_is_judged_against_the_bytes_moved(moved_after: int, added: str) -> None:
    """A collective added is an error, a warning where the bytes every collective moves
    per step fall past the threshold all the same; a collective's own bytes falling past
    it are an improvement, rising a warning, within it neutral."""
    big, small = _collective("all-reduce", 1000, "a"), _collective("all-reduce", 100, "a")
    changes = (
        CollectiveChange("added", None, _collective("all-gather", 100, "b")),
        CollectiveChange("changed", big, small),
        CollectiveChange("changed", small, big),
        CollectiveChange("changed", big, _collective("all-reduce", 950, "a")),
    )
    cost = CostDiff((MeasureChange("moved", 1000, moved_after),), changes)
    graded = [(c.kind, c.verdict, c.severity) for c in cost_changes(cost)][:4]
    assert graded == [
        ("added", "regression", added),
        ("changed", "improvement", None),
        ("changed", "regression", "warning"),
        ("changed", "neutral", None),
    ]


def test_the_gate_line_says_what_failed_and_the_policy_apart() -> None:
    cost = CostDiff(
        (MeasureChange("temporaries", 100, 300), MeasureChange("moved", 0, 200)),
        tuple(CollectiveChange("added", None, _collective("all-gather", 100, p)) for p in "ab"),
    )
    target = diff_reports(report(), report())
    target = replace(target, changes=tuple(cost_changes(cost)), cost=cost)
    text = diff_text.render(DiffReport(before="a", after="b", targets=(target,)))
    assert "failed: 2 collectives added, temporaries grew\n" in text
    assert "policy: --fail-on error fails on each regression that severe" in text
    assert "fails on:" not in text
    passing = diff_text.render(DiffReport(before="a", after="b", targets=(target,),
                                          fail_on="never"))  # fmt: skip
    assert "failed:" not in passing and "policy:" not in passing
