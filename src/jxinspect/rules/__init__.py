"""Rules: each module holds one, with a stable code, a summary, an explanation and
``check(report) -> Iterable[Finding]``. ``RULES`` lists them in code order."""

from __future__ import annotations

from jxinspect.core.model import Finding, Report
from jxinspect.core.settings import DEFAULT_SETTINGS, Settings
from jxinspect.rules import (
    jx101_missing_arg_name,
    jx102_synthetic_arg_name,
    jx103_missing_result_path,
    jx104_degraded_result_path,
    jx105_pruned_argument,
    jx106_name_count,
    jx107_nested_without_debug_info,
    jx108_lowering_failed,
    jx109_mismatched_arg_name,
    jx110_partial_nested_debug_info,
    jx111_renamed_by_wrapper,
    jx112_nothing_staged,
    jx201_replicated_argument,
    jx202_output_sharding_unspecified,
    jx203_internal_axis_name,
    jx301_unusable_donation,
    jx302_memory_budget,
)
from jxinspect.rules.base import Rule

RULES: tuple[Rule, ...] = tuple(
    module.RULE
    for module in (
        jx101_missing_arg_name,
        jx102_synthetic_arg_name,
        jx103_missing_result_path,
        jx104_degraded_result_path,
        jx105_pruned_argument,
        jx106_name_count,
        jx107_nested_without_debug_info,
        jx108_lowering_failed,
        jx109_mismatched_arg_name,
        jx110_partial_nested_debug_info,
        jx111_renamed_by_wrapper,
        jx112_nothing_staged,
        jx201_replicated_argument,
        jx202_output_sharding_unspecified,
        jx203_internal_axis_name,
        jx301_unusable_donation,
        jx302_memory_budget,
    )
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def run_checks(report: Report, settings: Settings | None = None) -> tuple[Finding, ...]:
    """Every rule's findings on ``report``, in code order; ``settings`` holds the
    thresholds of the rules that take them (default: :class:`Settings`' defaults)."""
    given = settings or DEFAULT_SETTINGS
    return tuple(finding for rule in RULES for finding in rule.run(report, given))
