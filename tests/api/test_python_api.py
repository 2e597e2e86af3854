"""The Python side: reports, diffs and lint results that display themselves (one-line
``repr``, ``__rich__``, ``_repr_html_``, ``show``), and ``jxinspect.diff`` returning the
same :class:`DiffReport` the CLI renders. On real JAX, on whichever release runs the tests.
(The notebook cell's HTML is opened in Chromium in ``test_html_browser.py``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jxinspect
from jxinspect.core.diff import DiffReport
from jxinspect.core.lint import LintFinding, LintResult, TargetResult
from jxinspect.core.model import Report

f32 = jnp.float32
PARAMS = {"w": jax.ShapeDtypeStruct((8, 4), f32), "b": jax.ShapeDtypeStruct((4,), f32)}
X = jax.ShapeDtypeStruct((2, 8), f32)


def predict(params: dict[str, Any], x: Any) -> dict[str, Any]:
    return {"logits": x @ params["w"] + params["b"]}


def predict_unbiased(params: dict[str, Any], x: Any) -> dict[str, Any]:
    """A later version that no longer uses the bias: JAX prunes it from the program."""
    return {"logits": x @ params["w"]}


@pytest.fixture(scope="module")
def report() -> Report:
    return jxinspect.inspect(predict, (PARAMS, X))


def test_repr_is_one_useful_line(report: Report) -> None:
    text = repr(report)
    assert "\n" not in text and len(text) < 200
    assert text.startswith("<Report predict · jit → lowered · JAX ")
    assert text.endswith("3/3 arguments and 1/1 results carry their names>")


def test_rich_and_html(report: Report) -> None:
    from rich.text import Text

    rich = report.__rich__()
    assert isinstance(rich, Text)
    assert "params['w']" in rich.plain and "carry their names" in rich.plain
    cell = report._repr_html_()
    assert cell.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;')
    assert "<script" not in cell  # all of the page is inside the escaped srcdoc
    assert "http://" not in cell and "https://" not in cell


def test_show_prints_a_view_in_a_console(report: Report, capsys: Any) -> None:
    report.show("sharding")
    out = capsys.readouterr().out
    assert "no sharding recorded" in out and "params['w']" in out
    report.show("jaxpr")  # the texts are kept by jxinspect.inspect
    assert "# params['w']" in capsys.readouterr().out
    report.show("collectives")  # a view too, of a report that did not compile
    assert capsys.readouterr().out == "collectives: not compiled (reached lowered)\n"
    with pytest.raises(ValueError) as refused:
        report.show("nope")
    said = "unknown view 'nope': use jaxpr, mlir, sharding, collectives, memory or why"
    assert str(refused.value) == said


def test_diff_of_two_functions_finds_the_newly_pruned_argument() -> None:
    diff = jxinspect.diff(predict, predict_unbiased, (PARAMS, X), fail_on="warning")
    assert isinstance(diff, DiffReport) and diff.failed
    assert [(c.category, c.kind, c.path) for c in diff.regressions] == [
        ("pruned", "pruned", "params['b']"), ("finding", "more", "JX105")]  # fmt: skip
    assert repr(diff) == (
        "<DiffReport predict → predict_unbiased · 1 target · FAIL: 2 regressions (1 failing), "
        "0 improvements, 0 neutral>"
    )
    assert "<pre" in diff._repr_html_() and "pruned" in diff._repr_html_()
    assert "pruned" in diff.__rich__().plain
    assert not jxinspect.diff(predict, predict_unbiased, (PARAMS, X)).failed  # a warning
    allowed = jxinspect.diff(predict, predict_unbiased, (PARAMS, X), fail_on="warning",
                             allow=("pruned",))  # fmt: skip
    assert allowed.regressions and not allowed.failed


def test_diff_of_reports_equals_what_the_cli_says(report: Report, tmp_path: Path,
                                                  run_cli: Any) -> None:  # fmt: skip
    after = jxinspect.inspect(predict_unbiased, (PARAMS, X))
    files = []
    for name, side in (("before", report), ("after", after)):
        path = tmp_path / f"{name}.json"
        path.write_text(jxinspect.to_json(side), encoding="utf-8")
        files.append(str(path))
    result = run_cli("diff-debug", *files, "--format", "json", "--fail-on", "warning")
    assert result.returncode == 1, result.describe()
    cli = json.loads(result.stdout)
    ours = json.loads(jxinspect.to_json(jxinspect.diff(
        jxinspect.from_json(Path(files[0]).read_text(), Report),
        jxinspect.from_json(Path(files[1]).read_text(), Report),
        fail_on="warning",
    )))  # fmt: skip
    assert ours["targets"][0]["changes"] == cli["targets"][0]["changes"]
    assert ours["summary"] == cli["summary"] and ours["failed"] is cli["failed"] is True


def test_diff_with_compile_compares_the_cost(report: Report) -> None:
    diff = jxinspect.diff(predict, predict_unbiased, (PARAMS, X), compile=True)
    cost = diff.targets[0].cost
    assert cost is not None and cost.memory_growth == 0.10
    sides = [jxinspect.inspect(f, (PARAMS, X), compile=True).compiled for f in (predict,
             predict_unbiased)]  # fmt: skip
    assert [(m.measure, m.before, m.after) for m in cost.measures] == [
        (kind, getattr(sides[0].memory, kind), getattr(sides[1].memory, kind))
        for kind in ("arguments", "outputs", "temporaries", "aliased")
    ] + [("flops", sides[0].flops, sides[1].flops), ("moved", 0, 0)]  # fmt: skip
    assert (cost.collectives, cost.unchanged_collectives) == ((), 0)  # one device
    assert jxinspect.diff(predict, predict_unbiased, (PARAMS, X)).targets[0].cost is None
    with pytest.raises(ValueError, match=r"compile=True compares compiled reports"):
        jxinspect.diff(report, report, compile=True)


def test_diff_says_what_it_cannot_take() -> None:
    with pytest.raises(ValueError, match="fail_on='fatal': use one of error, warning, info"):
        jxinspect.diff(predict, predict, (PARAMS, X), fail_on="fatal")
    with pytest.raises(ValueError, match="allow: unknown change class 'names'"):
        jxinspect.diff(predict, predict, (PARAMS, X), allow=("names",))
    with pytest.raises(TypeError, match="expected a Report or a function, got int"):
        jxinspect.diff(3, predict, (PARAMS, X))


def test_lint_result_displays_itself() -> None:
    finding = LintFinding("JX201", "warning", "big argument replicated", "w", "m.py", 3)
    result = LintResult(
        targets=(TargetResult("m.py:f", "m.py", 3, findings=(finding,)),
                 TargetResult("m.py:g", "m.py", 9, error="tracing failed: boom")),
        rules=(),
    )  # fmt: skip
    assert repr(result) == (
        "<LintResult 2 targets · 1 findings · 1 failed to stage · fail on error>"
    )
    assert "JX201" in result.__rich__().plain
    assert "<pre" in result._repr_html_() and "JX201" in result._repr_html_()


class _LoudRepr:
    """A callable whose ``repr`` raises: jxinspect must never need it."""

    def __repr__(self) -> str:
        raise RuntimeError("repr is not for you")

    def __call__(self, x: Any) -> Any:
        return x * 2


def test_a_callable_whose_repr_raises_is_named_by_its_type() -> None:
    report = jxinspect.inspect(_LoudRepr(), (X,))
    assert report.target == "_LoudRepr" and report.inputs[0].status == "ok"


def test_the_products_are_importable_from_the_package(tmp_path: Path) -> None:
    """A saved report reads back with ``jxinspect.Report.from_dict``, no internal import;
    ``DiffReport`` and ``LintResult`` are the classes the commands make."""
    assert (jxinspect.Report, jxinspect.DiffReport, jxinspect.LintResult) == (
        Report,
        DiffReport,
        LintResult,
    )
    assert {"Report", "DiffReport", "LintResult"} <= set(jxinspect.__all__)
    report = jxinspect.inspect(predict, (PARAMS, X))
    saved = tmp_path / "report.json"
    saved.write_text(jxinspect.to_json(report), encoding="utf-8")
    again = jxinspect.from_json(saved.read_text(encoding="utf-8"), jxinspect.Report)
    assert again == report and jxinspect.to_json(again) == jxinspect.to_json(report)
    with pytest.raises(ValueError, match=r"^a Report: at \$\.reached: invalid enum value 'x'$"):
        jxinspect.from_json(jxinspect.to_json(report).replace('"lowered"', '"x"', 1), Report)
    assert isinstance(jxinspect.diff(report, again), jxinspect.DiffReport)
    with pytest.raises(AttributeError):
        jxinspect.NoSuchThing  # noqa: B018
