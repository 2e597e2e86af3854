"""The lint rules JX201-JX303 on real staged functions, in this process.

JAX runs here on 8 simulated CPU devices: the count is set when this module is
collected, before any test starts JAX's backend (if another module started it first with
fewer devices, the multi-device tests skip and say so).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jxinspect.core.facts import Facts
from jxinspect.core.model import Report
from jxinspect.core.settings import ForbiddenCollective, Settings
from jxinspect.core.units import human_bytes
from jxinspect.pipeline import inspect_function
from jxinspect.rules import RULES, apply_rules
from jxinspect.tracer import seam

if not seam.backend_started():
    seam.simulate_cpu_devices(8)

f32 = jnp.float32


def sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, f32)


@pytest.fixture(scope="module")
def mesh() -> Any:
    if jax.device_count() < 8:
        pytest.skip(f"needs 8 CPU devices; JAX started in this process with {jax.device_count()}")
    return seam.make_mesh((4, 2), ("data", "model"), jax.devices(), explicit=False)


def codes(report: Report, code: str) -> list[str | None]:
    """The leaf paths of ``code``'s findings."""
    return [f.path for f in report.findings if f.code == code]


def matmul(x: Any, w: Any) -> Any:
    return jnp.tanh(x @ w)


def shardings(mesh: Any, *specs: Any) -> tuple[NamedSharding, ...]:
    return tuple(NamedSharding(mesh, spec) for spec in specs)


# ---- JX201 large argument left replicated -------------------------------------------------


def test_jx201_fires_on_a_large_replicated_weight(mesh: Any) -> None:
    report = inspect_function(
        matmul,
        (sds(64, 1024), sds(1024, 512)),
        {},
        options={"in_shardings": shardings(mesh, P("data"), P())},
    )
    [finding] = [f for f in report.findings if f.code == "JX201"]
    assert (finding.path, finding.message, finding.severity) == (
        "w",
        "argument w (f32[1024,512], 2.0 MiB) is replicated on all 8 devices (threshold 1.0 MiB)",
        "warning",
    )
    assert (finding.file, finding.line) == (__file__, matmul.__code__.co_firstlineno)


def test_jx201_quiet_when_sharded_small_or_under_the_threshold(mesh: Any) -> None:
    sharded = inspect_function(
        matmul,
        (sds(64, 1024), sds(1024, 512)),
        {},
        options={"in_shardings": shardings(mesh, P("data"), P(None, "model"))},
    )
    assert codes(sharded, "JX201") == []
    small = inspect_function(
        matmul,
        (sds(64, 16), sds(16, 16)),
        {},
        options={"in_shardings": shardings(mesh, P("data"), P())},
    )
    assert codes(small, "JX201") == []
    replicated = inspect_function(
        matmul,
        (sds(64, 1024), sds(1024, 512)),
        {},
        options={"in_shardings": shardings(mesh, P("data"), P())},
    )
    assert codes(replicated, "JX201") == ["w"]
    raised = apply_rules(replicated, Facts(Settings(replicated_bytes=4 << 20))).findings
    assert [f.path for f in raised if f.code == "JX201"] == []


def test_jx201_quiet_on_one_device() -> None:
    report = inspect_function(matmul, (sds(64, 1024), sds(1024, 512)), {})
    assert codes(report, "JX201") == []


# ---- JX202 output sharding left to the compiler -------------------------------------------


def test_jx202_fires_when_inputs_declare_and_outputs_do_not(mesh: Any) -> None:
    def step(x: Any, w: Any) -> Any:
        return {"y": x @ w, "norm": jnp.sum(w * w)}

    options = {"in_shardings": shardings(mesh, P("data"), P(None, "model"))}
    report = inspect_function(step, (sds(64, 32), sds(32, 16)), {}, options=options)
    assert codes(report, "JX202") == ["result['norm']", "result['y']"]
    compiled = inspect_function(step, (sds(64, 32), sds(32, 16)), {}, options=options, compile=True)
    chosen = {leaf.path: leaf.compiled_sharding for leaf in compiled.outputs}
    assert all(chosen.values()), compiled.outputs  # XLA's choice: its layout varies by release
    collectives = compiled.compiled.collectives if compiled.compiled else None
    assert collectives is not None

    def made_by(path: str) -> str:  # the collectives whose data becomes that output
        said = [
            f"{c.kind} over {','.join(c.axes or ['?'])} ({human_bytes(c.bytes)} per device, at "
            f"{c.file}:{c.line})"
            for c in collectives
            if path in c.operand_paths
        ]
        return f", which {' and '.join(said)} makes" if said else ""

    assert made_by("result['norm']")  # the sum of a sharded weight is reduced into it
    assert [(f.path, f.message) for f in compiled.findings if f.code == "JX202"] == [
        (
            path,
            f"output {path} has no declared sharding although the inputs declare theirs: the "
            f"compiler picks its layout; XLA chose {chosen[path].readable}{made_by(path)}",
        )
        for path in ("result['norm']", "result['y']")
    ]


def test_jx202_quiet_with_out_shardings_or_without_any_shardings(mesh: Any) -> None:
    declared = inspect_function(
        matmul,
        (sds(64, 32), sds(32, 16)),
        {},
        options={
            "in_shardings": shardings(mesh, P("data"), P()),
            "out_shardings": NamedSharding(mesh, P("data")),
        },
    )
    assert codes(declared, "JX202") == []
    plain = inspect_function(matmul, (sds(64, 32), sds(32, 16)), {})
    assert codes(plain, "JX202") == []


# ---- JX203 internal axis name ------------------------------------------------------------


def test_jx203_fires_on_pmap_without_axis_name(mesh: Any) -> None:
    """Where the program names pmap's axis itself (pmap on shard_map, JAX 0.10); the older
    pmap's axis is anonymous: no name leaks, and the report calls it ``(unnamed)``."""
    report = inspect_function(matmul, (sds(8, 4, 16), sds(8, 16, 16)), {}, stage="pmap")
    findings = [f for f in report.findings if f.code == "JX203"]
    if seam.pmap_axis_default() == "(unnamed)":
        assert findings == [] and report.mesh is not None
        assert report.mesh.axes == (("(unnamed)", 8),)
        return
    assert [f.message for f in findings] == [
        "internal axis name '_internal_pmap_axis_name' leaks into the program "
        "(pmap without axis_name)"
    ]


def test_jx203_fires_on_an_underscore_mesh_axis(mesh: Any) -> None:
    hidden = seam.make_mesh((8,), ("_shard",), jax.devices(), explicit=False)
    report = inspect_function(
        matmul,
        (sds(64, 32), sds(32, 16)),
        {},
        options={"in_shardings": shardings(hidden, P("_shard"), P())},
    )
    assert [(f.path, f.message) for f in report.findings if f.code == "JX203"] == [
        (None, "internal axis name '_shard' leaks into the program")
    ]


def test_jx203_quiet_with_a_named_axis(mesh: Any) -> None:
    report = inspect_function(
        matmul, (sds(8, 4, 16), sds(8, 16, 16)), {}, stage="pmap", options={"axis_name": "batch"}
    )
    assert codes(report, "JX203") == []


# ---- JX301 unusable donation -------------------------------------------------------------


def add(x: Any, y: Any) -> Any:
    return x + y


def test_jx301_fires_on_a_donation_no_output_can_reuse() -> None:
    report = inspect_function(add, (sds(8, 16), sds(8, 16)), {}, options={"donate_argnums": (0, 1)})
    assert [(f.path, f.message) for f in report.findings if f.code == "JX301"] == [
        (
            "y",
            "argument y (f32[8,16]) is donated but lowering aliases it to no output: the "
            "outputs that match it are reused by other donated arguments",
        )
    ]


def test_jx301_quiet_when_the_donation_is_used() -> None:
    report = inspect_function(add, (sds(8, 16), sds(8, 16)), {}, options={"donate_argnums": (0,)})
    assert codes(report, "JX301") == []


def test_jx301_reads_the_compiled_aliasing(mesh: Any) -> None:
    """With shardings JAX marks donors for the compiler to match: only compiling tells."""

    def scale(x: Any, scratch: Any) -> Any:
        return x * 2.0 + scratch.sum()

    options = {"in_shardings": shardings(mesh, P("data"), P()), "donate_argnums": (1,)}
    args = (sds(64, 32), sds(8))
    lowered = inspect_function(scale, args, {}, options=options)
    assert lowered.inputs[1].buffer_donor and codes(lowered, "JX301") == []
    compiled = inspect_function(scale, args, {}, options=options, compile=True)
    assert codes(compiled, "JX301") == ["scratch"]


# ---- JX302 bytes per device over a budget ------------------------------------------------


def test_jx302_fires_only_over_a_configured_budget(mesh: Any) -> None:
    report = inspect_function(
        matmul,
        (sds(64, 1024), sds(1024, 512)),
        {},
        options={"in_shardings": shardings(mesh, P("data"), P(None, "model"))},
    )
    # per device: x 16x1024 (64 KiB) + w 1024x256 (1 MiB) + the result, whose sharding
    # is not declared: its layout the compiler's to pick, its size unknown before compiling
    assert codes(report, "JX302") == []  # no budget by default
    over = apply_rules(report, Facts(Settings(bytes_per_device=1 << 20))).findings
    assert [f.message for f in over if f.code == "JX302"] == [
        "at least 1.1 MiB per device (arguments + results) is over the budget of 1.0 MiB"
    ]
    # the unknown result is at most its global 128 KiB: under 2 MiB the budget holds
    assert codes(apply_rules(report, Facts(Settings(bytes_per_device=2 << 20))), "JX302") == []
    # under a budget the known part fits and the whole result may not: it fails closed
    budget = (1 << 20) + (64 << 10) + (64 << 10)  # x, w, half the result
    unjudged = apply_rules(report, Facts(Settings(bytes_per_device=budget))).findings
    assert [(f.severity, f.message) for f in unjudged if f.code == "JX302"] == [(
        "error",
        "the budget of 1.1 MiB per device cannot be judged: the per-device size of result is "
        "unknown before compiling (a layout the compiler picks, or a symbolic dimension; "
        "compile: true, or --compile); the rest is 1.1 MiB (arguments + results)",
    )]  # fmt: skip
    compiled = inspect_function(
        matmul,
        (sds(64, 1024), sds(1024, 512)),
        {},
        options={"in_shardings": shardings(mesh, P("data"), P(None, "model"))},
        compile=True,
    )
    assert [f for f in apply_rules(compiled, Facts(Settings(bytes_per_device=2 << 20))).findings
            if f.code == "JX302"] == []  # fmt: skip


def test_jx302_counts_a_donated_buffer_once() -> None:
    report = inspect_function(
        add, (sds(256, 256), sds(256, 256)), {}, options={"donate_argnums": (0,)}
    )
    budget = Settings(bytes_per_device=2 * 256 * 256 * 4)  # x + y; the result reuses x
    assert [f for f in apply_rules(report, Facts(budget)).findings if f.code == "JX302"] == []
    tight = Settings(bytes_per_device=2 * 256 * 256 * 4 - 1)
    assert [f.message for f in apply_rules(report, Facts(tight)).findings if f.code == "JX302"] == [
        "512.0 KiB per device (arguments + results) is over the budget of 512.0 KiB"
    ]  # 524,288 bytes over 524,287


def test_jx302_uses_xla_memory_analysis_once_compiled(mesh: Any) -> None:
    report = inspect_function(matmul, (sds(64, 1024), sds(1024, 512)), {}, compile=True)
    messages = [
        f.message
        for f in apply_rules(report, Facts(Settings(bytes_per_device=1024))).findings
        if f.code == "JX302"
    ]
    stats = jax.jit(matmul).trace(sds(64, 1024), sds(1024, 512)).lower().compile()
    memory = stats.memory_analysis()  # the installed XLA's own count, as the rule reads it
    total = (
        memory.argument_size_in_bytes
        + memory.output_size_in_bytes
        + memory.temp_size_in_bytes
        - memory.alias_size_in_bytes
    )
    assert messages == [
        f"{human_bytes(total)} per device (XLA memory analysis) is over the budget of 1.0 KiB"
    ]


# ---- JX303 compiled cost over a budget, or a forbidden collective --------------------------


def scanned_sum(x: Any) -> Any:
    def body(c: Any, _: Any) -> Any:
        return c * 0.5 + jnp.sum(jnp.tanh(x * c)), None

    return jax.lax.scan(body, jnp.float32(1.0), None, length=4)[0]


def test_jx303_reads_xla_temporaries_and_bytes_per_step(mesh: Any) -> None:
    args = (sds(64, 16),)
    options = {"in_shardings": shardings(mesh, P(("data", "model")))}
    report = inspect_function(scanned_sum, args, {}, options=options, compile=True)
    assert codes(report, "JX303") == []  # off unless a budget is set
    compiled = jax.jit(scanned_sum, **options).trace(*args).lower().compile()
    temporaries = compiled.memory_analysis().temp_size_in_bytes
    [psum] = report.compiled.collectives if report.compiled is not None else ()
    assert (psum.kind, psum.trip_count, psum.bytes_per_step) == ("all-reduce", 4, 4 * psum.bytes)
    assert compiled.as_text().count(" all-reduce(") == 1  # one instruction, run 4 times
    budgets = Settings(temporaries_per_device=max(temporaries - 1, 0),
                       collective_bytes_per_step=4 * psum.bytes - 1)  # fmt: skip
    messages = [
        f.message for f in apply_rules(report, Facts(budgets)).findings if f.code == "JX303"
    ]
    over_temporaries = (
        [f"{human_bytes(temporaries)} of temporaries per device (XLA memory analysis) is over "
         f"the budget of {human_bytes(temporaries - 1)}"] if temporaries > 0 else []
    )  # fmt: skip
    assert messages == [
        *over_temporaries,
        f"{human_bytes(4 * psum.bytes)} per step per device moved by 1 collective is over the "
        f"budget of {human_bytes(4 * psum.bytes - 1)}",
    ]
    at_budget = Settings(
        temporaries_per_device=temporaries, collective_bytes_per_step=4 * psum.bytes
    )
    assert codes(apply_rules(report, Facts(at_budget)), "JX303") == []


def test_jx303_needs_the_compiled_program(mesh: Any) -> None:
    options = {"in_shardings": shardings(mesh, P(("data", "model")))}
    lowered = inspect_function(scanned_sum, (sds(64, 16),), {}, options=options)
    forbid = Settings(forbid_collectives=(ForbiddenCollective("all-reduce"),),
                      temporaries_per_device=0, collective_bytes_per_step=0)  # fmt: skip
    # not compiled: one finding that it cannot judge, never a pass
    unjudged = [f for f in apply_rules(lowered, Facts(forbid)).findings if f.code == "JX303"]
    assert [(f.severity, f.message) for f in unjudged] == [
        ("error", "cannot judge JX303: the compiled program was not read "
                  "(compile: true, or --compile)")
    ]  # fmt: skip
    assert codes(apply_rules(lowered, Facts()), "JX303") == []  # no budget: nothing needed
    compiled = inspect_function(scanned_sum, (sds(64, 16),), {}, options=options, compile=True)
    [forbidden] = [
        f
        for f in apply_rules(
            compiled, Facts(Settings(forbid_collectives=(ForbiddenCollective("all-reduce"),)))
        ).findings
        if f.code == "JX303"
    ]
    assert forbidden.message.startswith("all-reduce over data,model moving an intermediate (")
    assert forbidden.message.endswith(") is forbidden (budgets.forbid_collectives)")
    assert forbidden.path is None


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_each_rule_explains_itself(rule: Any) -> None:
    """A summary, and an explanation that says how to fix or how to silence it."""
    assert rule.summary
    assert "Fix" in rule.explanation or "Silence" in rule.explanation
