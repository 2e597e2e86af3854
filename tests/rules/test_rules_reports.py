"""JX104 and JX106 on hand-built reports.

None of the releases CI tests produces them from its own tracing,
so their fixtures (``fixtures/jx104_*.py``, ``fixtures/jx106_*.py``) record none in every
golden file: 0.4.35 asserts in ``Jaxpr.__init__`` that the debug info has one name per
input and one path per output (JX106), 0.7.2 and 0.10 keep the counts in step through
every transformation probed (grad, jvp, vmap, linearize, checkpoint, scan, cond, while,
custom_jvp/vjp); only 0.5.3-0.7.1 miscount them (DESIGN.md's release facts). A result path
that differs from the output pytree (JX104) comes from wrappers that rebuild the output.
The rules exist for the programs that do (saved reports, those releases, future ones), so
they are checked here on reports built by hand, end to end through the rules and the text
renderer.
"""

from __future__ import annotations

from jxinspect.core import codec
from jxinspect.core.facts import Facts
from jxinspect.core.model import NestedJaxpr, Output, Report
from jxinspect.render.report import text
from jxinspect.rules import apply_rules


def report(outputs: tuple[Output, ...] = (), nested: tuple[NestedJaxpr, ...] = ()) -> Report:
    made = Report(
        target="m.py:f",
        stage="jit",
        reached="lowered",
        jax_version="0.10.2",
        platform="cpu",
        num_devices=1,
        outputs=outputs,
        jaxpr=NestedJaxpr("top", "jit", "ok", arg_names=(), result_paths=()),
        nested=nested,
    )
    return apply_rules(made, Facts())


def output(index: int, path: str, name: str, status: str) -> Output:
    return Output(index=index, path=path, jaxpr_path=path, name=name, status=status,  # type: ignore[arg-type]
                  shape=(2,), dtype="float32")  # fmt: skip


def test_jx104_fires_on_a_positional_or_different_result_path() -> None:
    made = report(
        outputs=(
            output(0, "result['logits']", "result[0]", "synthetic"),
            output(1, "result['loss']", "result['aux']", "mismatch"),
            output(2, "result['state']", "result['state']", "ok"),
        )
    )
    found = [(f.code, f.path, f.message) for f in made.findings if f.code == "JX104"]
    assert found == [
        ("JX104", "result['logits']", "result result['logits'] carries the path 'result[0]'"),
        ("JX104", "result['loss']", "result result['loss'] carries the path \"result['aux']\""),
    ]
    shown = text.render(made)
    assert "JX104 warning result result['logits'] carries the path 'result[0]'" in shown
    assert codec.convert(codec.plain(made), Report, source="the report") == made


def test_jx106_fires_when_names_and_inputs_do_not_match() -> None:
    broken = NestedJaxpr("2:pjit.jaxpr", "pjit", "count_mismatch", arg_names=("x",),
                         result_paths=("result",), num_invars=2, num_outvars=1)  # fmt: skip
    fine = NestedJaxpr("3:pjit.jaxpr", "pjit", "ok", arg_names=("y",), result_paths=("result",),
                       num_invars=1, num_outvars=1)  # fmt: skip
    made = report(nested=(broken, fine))
    found = [f.message for f in made.findings if f.code == "JX106"]
    assert found == ["jaxpr 2:pjit.jaxpr (pjit) has 1 names for 2 inputs and 1 paths for 1 outputs"]
    assert "JX106 warning jaxpr 2:pjit.jaxpr (pjit) has 1 names" in text.render(made)
