"""Rules, kept as ruff keeps them: one module per rule, one ordered table, one function
that applies them (the judge step, the policy included, is :func:`jxinspect.pipeline.judge`).

Each module ``jxNNN_<what>.py`` holds one :class:`~jxinspect.rules.base.Rule`: its code,
severity, summary, explanation (what ``jxinspect explain`` prints) and
``check(report, facts) -> Iterable[Finding]`` (``facts``: what it reads besides the
report, :class:`~jxinspect.core.facts.Facts`), and what it reads (``reads``) and, under
which settings, cannot judge without (``needs``). :data:`TABLE` names the modules in code
order, once; :func:`needs` is what a policy's rules need staged (the CLI, lint and the API
stage by it); :func:`apply_rules` is the only caller of the rules (and
:func:`apply_comparison_rules`, for lowerings compared), and where a rule's needs were
not read it runs no check but says so: a gate never passes what it did not read. Rules
produce data (findings), never text for a terminal; they import nothing of ours but
:mod:`jxinspect.core`.
"""

from __future__ import annotations

import importlib

from jxinspect.core.facts import READS, Facts, Read
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Report
from jxinspect.rules import advice
from jxinspect.rules.base import ComparisonRule, Conditions, Rule, RulePolicy, Surveyed

TABLE: tuple[str, ...] = (
    "jx101_missing_arg_name",
    "jx102_synthetic_arg_name",
    "jx103_missing_result_path",
    "jx104_degraded_result_path",
    "jx105_pruned_argument",
    "jx106_name_count",
    "jx107_nested_without_debug_info",
    "jx108_lowering_failed",
    "jx109_mismatched_arg_name",
    "jx110_partial_nested_debug_info",
    "jx111_renamed_by_wrapper",
    "jx112_nothing_staged",
    "jx201_replicated_argument",
    "jx202_output_sharding_unspecified",
    "jx203_internal_axis_name",
    "jx204_silent_replication",
    "jx301_unusable_donation",
    "jx302_memory_budget",
    "jx303_cost_budget",
    "jx304_collective_not_in_baseline",
    "jx305_memory_growth",
    "jx306_compiled_not_read",
    "jx307_does_not_fit",
    "jx308_offload_not_applied",
    "jx401_same_program_compiled_again",
    "jx402_compile_budget",
    "jx405_not_written_to_cache",
    "jx406_cache_missed_a_program_it_held",
)
"""The rule modules, in code order: the one list of the rules."""


def _load(module: str) -> Rule:
    """The ``RULE`` of ``module``, checked to be a rule whose code names the module."""
    rule = importlib.import_module(f"{__name__}.{module}").RULE
    if not isinstance(rule, Rule) or not module.startswith(f"{rule.code.lower()}_"):
        raise ImportError(f"{__name__}.{module}.RULE is not the rule its name says")
    return rule


RULES: tuple[Rule, ...] = tuple(_load(module) for module in TABLE)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
SURVEYED: dict[str, Surveyed] = {rule.code: rule.surveyed for rule in RULES if rule.surveyed}
"""The rules whose findings the shipped surveys advise, by code."""


PART_OF_COMPILED: frozenset[Read] = frozenset({"peak", "origins"})
"""What only a compile reads: needing one needs the compiled program."""


def needs(policy: RulePolicy, *, topology: bool = False) -> frozenset[Read]:
    """What to stage for ``policy`` (a target compiled for a TPU ``topology``): what its
    enabled rules need under its settings, and what it asks itself (``compile``: the
    compiled program; ``why``: the partitioner's record). The one place that decides
    whether ``lower``, a lint target or the API compiles, reads the peak or the record."""
    conditions = Conditions(policy.settings, topology)
    found: set[Read] = {"lowered"}
    for rule in RULES:
        if policy.enabled(rule.code):
            found.update(rule.needs(conditions))
    if policy.compile:
        found.add("compiled")
    if policy.why:
        found.update(("compiled", "origins"))
    if found & PART_OF_COMPILED:
        found.add("compiled")
    return frozenset(found)


def unread(read: Read, report: Report) -> bool:
    """Whether ``read`` is missing from ``report`` (the peak and the partitioner's record
    are missing only from a compiled program read without them: where the compile itself
    is missing, that is what is)."""
    compiled = report.compiled
    if read == "compiled":
        return compiled is None
    if read == "peak":
        return compiled is not None and compiled.peak is None
    if read == "origins":
        return compiled is not None and compiled.dropped is None and compiled.origins_unread is None
    return False  # the lowered report is there; a path's facts are given where it has them


def _unjudged(rule: Rule, report: Report, facts: Facts) -> Finding | None:
    """One finding at the rule's severity where something it needs under ``facts``'s
    settings was not read (it is then not run): ``cannot judge JX303: the compiled
    program was not read (compile: true, or --compile)``."""
    wanted = rule.needs(Conditions(facts.settings, report.topology is not None))
    missing = [read for read in wanted if unread(read, report)]
    if not missing:
        return None
    what, how = READS[missing[0]]
    why = "it did not compile" if missing[0] == "compiled" and report.error else how
    return rule.finding(report, f"cannot judge {rule.code}: {what} was not read ({why})")


def _judged(rule: Rule, report: Report, facts: Facts) -> tuple[Finding, ...]:
    unjudged = _unjudged(rule, report, facts)
    return (unjudged,) if unjudged is not None else tuple(rule.check(report, facts))


def apply_rules(report: Report, facts: Facts) -> Report:
    """``report`` with every rule's findings on it, in code order (any it had replaced):
    the report's rules, then the comparison rules on ``facts.comparisons``; each advised
    with the release that fixes it where the shipped surveys say so. A rule whose needs
    were not read is not run: one finding says what it could not judge."""
    found = tuple(finding for rule in RULES for finding in _judged(rule, report, facts))
    compared = tuple(f for c in facts.comparisons for f in apply_comparison_rules(c))
    return report.with_findings((*advice.advise(found, report.jax_version, SURVEYED), *compared))


COMPARISON_TABLE: tuple[str, ...] = (
    "jx403_divergent_processes",
    "jx404_nondeterministic_lowering",
)
"""The rules that judge two lowerings of one function (:class:`ComparisonRule`), in code
order: what they find is in no single report; :func:`apply_rules` runs them on the
comparisons its facts hold."""


def _load_comparison(module: str) -> ComparisonRule:
    rule = importlib.import_module(f"{__name__}.{module}").RULE
    if not isinstance(rule, ComparisonRule) or not module.startswith(f"{rule.code.lower()}_"):
        raise ImportError(f"{__name__}.{module}.RULE is not the rule its name says")
    return rule


COMPARISON_RULES: tuple[ComparisonRule, ...] = tuple(_load_comparison(m) for m in COMPARISON_TABLE)
EXPLAINED: dict[str, Rule | ComparisonRule] = dict(
    sorted([*((r.code, r) for r in RULES), *((r.code, r) for r in COMPARISON_RULES)])
)
"""Every code ``jxinspect explain`` explains."""


def apply_comparison_rules(comparison: ProgramComparison) -> tuple[Finding, ...]:
    """Every comparison rule's findings on two lowerings of one function, in code order."""
    return tuple(f for rule in COMPARISON_RULES for f in rule.check(comparison))
