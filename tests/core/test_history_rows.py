"""A target's cost over time, in process and without JAX: a report read into a history
row (:func:`jxinspect.core.history.history_row`), the rows where a measure changed, and
the trend's JSON against its shipped schema. The rows a real lint run writes are tested
in ``tests/lint/test_lint_history.py``."""

from __future__ import annotations

import dataclasses
import importlib.resources
import json

from test_schema import full_report

from jxinspect.core import codec
from jxinspect.core.history import (
    CollectiveBytes,
    HistoryRow,
    Trend,
    TrendChange,
    changes,
    history_row,
    measures,
    percent,
    trend,
)
from jxinspect.core.model import Collective, CompiledInfo, MemoryStats, Operand

WHEN = "2026-12-03T08:00:00Z"


def row(**given: object) -> HistoryRow:
    base = HistoryRow(target="m.py:f", time=WHEN, commit="c1", jax_version="0.10.2",
                      platform="cpu", devices=8, arguments=512, outputs=64, temporaries=64,
                      aliased=0, flops=None, bytes_accessed=None,
                      collectives=(CollectiveBytes("all-reduce", "data", 64, 64),))  # fmt: skip
    return dataclasses.replace(base, **given)  # type: ignore[arg-type]


def test_a_compiled_report_is_its_memory_and_collectives_by_kind_and_axes() -> None:
    report = full_report()
    collectives = (
        Collective("all-reduce", (Operand((16,), "float32"),), 64, ("data",)),
        Collective("all-gather", (Operand((8,), "int32"),), 32, None),
        Collective("all-reduce", (Operand((4, 4), "float32"),), 64, ("data",)),
        Collective("all-reduce", (Operand((2,), "float32"),), 8, ("data", "model")),
    )
    compiled = CompiledInfo(MemoryStats(1024, 512, 4096, 100, 256), collectives)
    found = history_row(dataclasses.replace(report, compiled=compiled), target="t",
                        time=WHEN, commit="abc")  # fmt: skip
    assert found == HistoryRow(
        target="t", time=WHEN, commit="abc", jax_version="0.10.2", platform="cpu", devices=8,
        arguments=1024, outputs=512, temporaries=4096, aliased=256, flops=None,
        bytes_accessed=None,
        collectives=(CollectiveBytes("all-gather", "?", 32, 32),
                     CollectiveBytes("all-reduce", "data", 128, 128),
                     CollectiveBytes("all-reduce", "data,model", 8, 8)),
    )  # fmt: skip
    assert list(measures(found)) == [
        "arguments", "outputs", "temporaries", "aliased", "peak", "flops", "bytes_accessed",
        "all-gather over ?", "all-reduce over data", "all-reduce over data,model",
    ]  # fmt: skip


def test_a_report_not_compiled_measures_nothing() -> None:
    found = history_row(dataclasses.replace(full_report(), compiled=None), target="t",
                        time=WHEN, commit=None)  # fmt: skip
    assert (found.devices, found.commit, found.collectives) == (8, None, ())
    assert set(measures(found).values()) == {None}


def test_changes_are_each_measure_that_differs_from_the_row_before() -> None:
    rows = [
        row(),
        row(commit="c2"),  # nothing measured changed
        row(commit="c3", temporaries=128, collectives=()),
        row(commit="c4", temporaries=0, outputs=None),  # the collective is back
    ]
    assert changes(rows) == (
        TrendChange(WHEN, "c3", "0.10.2", "temporaries", 64, 128, 100.0),
        TrendChange(WHEN, "c3", "0.10.2", "all-reduce over data", 64, None, None),
        TrendChange(WHEN, "c4", "0.10.2", "outputs", 64, None, None),
        TrendChange(WHEN, "c4", "0.10.2", "temporaries", 128, 0, -100.0),
        TrendChange(WHEN, "c4", "0.10.2", "all-reduce over data", None, 64, None),
    )
    assert (percent(0, 5), percent(None, 5), percent(3, 4)) == (None, None, 33.33)


def test_the_trend_groups_rows_by_target_in_order_and_matches_its_schema() -> None:
    from jsonschema import Draft202012Validator

    rows = [row(target="b.py:g"), row(), row(target="b.py:g", flops=1.5e9), row(aliased=64)]
    shown = trend("h.db", rows)
    assert [(t.target, len(t.rows), len(t.changes)) for t in shown.targets] == [
        ("b.py:g", 2, 1), ("m.py:f", 2, 1)
    ]  # fmt: skip
    assert shown.targets[0].changes[0].measure == "flops"
    data = json.loads(codec.dumps(shown))
    assert data["schema"] == "jxinspect.trend/1"
    resource = importlib.resources.files("jxinspect").joinpath("schemas/trend.schema.json")
    schema = json.loads(resource.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert list(Draft202012Validator(schema).iter_errors(data)) == []
    assert codec.decode(codec.dumps(shown), Trend, source="trend") == shown
    data["targets"][0]["rows"][0]["devices"] = "8"
    assert list(Draft202012Validator(schema).iter_errors(data)) != []
