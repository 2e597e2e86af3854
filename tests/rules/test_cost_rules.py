"""JX302's one count, JX305 from a 0 B baseline, and the rules that need an unread
compiled program, on reports built by hand."""

from __future__ import annotations

from dataclasses import replace

from jxinspect.core.facts import Facts
from jxinspect.core.model import (
    AcceptedCost,
    Collective,
    CompiledInfo,
    Input,
    MemoryStats,
    Report,
)
from jxinspect.core.settings import DEFAULT_SETTINGS, Settings, parse_budget
from jxinspect.rules import apply_rules

KIB = 1024


def compiled(temporaries: int, unread: str | None = None) -> Report:
    memory = MemoryStats(4 * KIB, 4 * KIB, temporaries, 0, 2 * KIB)
    info = (
        CompiledInfo(memory, collectives=None, aliases=None, unread=unread)
        if unread
        else CompiledInfo(memory)
    )
    leaf = Input(index=0, path="a", jaxpr_name="a", name="a", status="ok", shape=(1024,),
                 dtype="float32", donated=True, main_index=0)  # fmt: skip
    return Report(target="m.py:f", stage="jit", reached="compiled", jax_version="0.10.2",
                  platform="cpu", num_devices=1, inputs=(leaf,), compiled=info)  # fmt: skip


def codes(
    report: Report, settings: Settings = DEFAULT_SETTINGS, accepted: AcceptedCost | None = None
) -> list[str]:
    return [f.code for f in apply_rules(report, Facts(settings, accepted_cost=accepted)).findings]


def test_jx305_fires_from_a_zero_baseline() -> None:
    zero = AcceptedCost("m.py:f", temporaries=0)
    judged = apply_rules(compiled(256 * KIB), Facts(accepted_cost=zero))
    (finding,) = [f for f in judged.findings if f.code == "JX305"]
    assert "from 0 B" in finding.message and "256.0 KiB" in finding.message
    assert "JX305" not in codes(compiled(0), accepted=zero)


def test_jx302_counts_arguments_results_temporaries_less_aliased() -> None:
    report = compiled(8 * KIB)  # 4 + 4 + 8 - 2 = 14 KiB
    assert "JX302" in codes(report, replace(DEFAULT_SETTINGS, bytes_per_device=13 * KIB))
    assert "JX302" not in codes(report, replace(DEFAULT_SETTINGS, bytes_per_device=14 * KIB))


def test_an_unread_program_is_jx306_and_no_jx301() -> None:
    unread = compiled(0, unread="optimized HLO not read (x; JAX 0.10.2)")
    forbid = parse_budget("forbid_collectives", ["all-gather"])
    found = codes(unread, replace(DEFAULT_SETTINGS, forbid_collectives=forbid))
    assert "JX306" in found and "JX303" in found and "JX301" not in found
    assert "JX304" in codes(unread, accepted=AcceptedCost("m.py:f", temporaries=0))
    assert codes(compiled(0)) == ["JX301"]  # read, and aliased nowhere


def test_a_forbidden_kind_with_a_size_forbids_only_the_larger() -> None:
    """``"all-gather > 32 KiB"``: a gather of 64 KiB per device is reported with its size
    and the limit, one of 16 KiB (a bias) is not; a size on another kind forbids none."""
    large = Collective("all-gather", (), 64 * KIB, ("data",), operand_paths=("w",))
    small = Collective("all-gather", (), 16 * KIB, ("data",), operand_paths=("b",))
    report = compiled(0)
    report = replace(report, compiled=replace(report.compiled, collectives=(large, small)))
    limits = parse_budget("forbid_collectives", ["all-gather > 32 KiB", "all-reduce"])
    findings = [
        f for f in apply_rules(report, Facts(Settings(forbid_collectives=limits))).findings
        if f.code == "JX303"
    ]  # fmt: skip
    assert [(f.message, f.path) for f in findings] == [(
        "all-gather over data moving w, 64.0 KiB per device, is forbidden "
        "(budgets.forbid_collectives: all-gather > 32.0 KiB)", "w")]  # fmt: skip
    at_most = parse_budget("forbid_collectives", ["all-gather > 64 KiB"])
    assert "JX303" not in codes(report, Settings(forbid_collectives=at_most))


def test_a_loop_of_unknown_trips_leaves_the_collective_budget_unjudged() -> None:
    """A collective in a while loop whose trip count XLA does not say (a TPU's loops, a
    loop on a traced bound) counts once: a lower bound, which cannot pass a budget."""
    gather = Collective("all-gather", (), 64 * KIB, ("data",), loops=("while.12",),
                        trip_count=None)  # fmt: skip
    report = compiled(0)
    report = replace(report, compiled=replace(report.compiled, collectives=(gather,)))
    roomy = Settings(collective_bytes_per_step=1 << 30)
    (finding,) = [f for f in apply_rules(report, Facts(roomy)).findings if f.code == "JX303"]
    assert finding.message == (
        "the collective budget cannot be judged: collectives run in loops whose trip count "
        "XLA does not say (while.12); once each, they move 64.0 KiB per step per device"
    )
    tight = Settings(collective_bytes_per_step=1 * KIB)
    (over,) = [f for f in apply_rules(report, Facts(tight)).findings if f.code == "JX303"]
    assert over.message.startswith("at least 64.0 KiB per step per device moved by 1 collective")
    counted = replace(gather, trip_count=4)
    report = replace(report, compiled=replace(report.compiled, collectives=(counted,)))
    assert "JX303" not in codes(report, roomy)
