"""A recording judged, the one way every reader gates on it (``show``, ``lint --records``,
``diff-debug`` of two runs): each recorded report judged once under the project's policy,
with the facts the recording holds of it (its code's compiles: JX401, JX402, JX405,
JX406; its lowerings compared across processes: JX403). The findings the recorder wrote
when it saved a report are never what a gate reads.

The compile budget (``record --max-compiles N``, ``jxinspect.testing.assert_max_compiles``)
is JX402 judged here under :func:`compile_budget`'s policy: a recording's folder through
:func:`judged_records`, the compiles of a test's block (no folder) through
:func:`judged_compiles`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Report
from jxinspect.core.recompiles import Compile, by_code
from jxinspect.core.recording import Entry, Index
from jxinspect.core.units import source_parts
from jxinspect.pipeline import judge, judge_comparisons
from jxinspect.project.config import Policy
from jxinspect.record.folder import REPORT, read_compiles, read_index, read_record, read_report
from jxinspect.rules.jx402_compile_budget import RULE as COMPILE_BUDGET

Compiles = dict[str, tuple[Compile, ...]]
"""A recording's compiles of each code, by the folder of its first program."""


def compiles_by_folder(folder: Path) -> Compiles:
    """Each code's compiles, under the folder of its first program (its first compile's),
    whose report the compile rules judge them on."""
    compiles, _ = read_compiles(folder)
    return {found[0].folder: found for found in by_code(compiles) if found[0].folder}


def judged_record(
    folder: Path,
    entry: Entry,
    policy: Policy,
    compiles: Compiles,
    comparisons: Sequence[ProgramComparison] = (),
) -> Report:
    """``entry``'s report, judged under ``policy`` with its compiles and ``comparisons``."""
    report = read_record(folder, entry)
    return judge(report, policy, compiles=compiles.get(entry.folder, ()), comparisons=comparisons)


def judged_records(
    folder: Path, policy: Policy, index: Index | None = None
) -> Iterator[tuple[Entry, Report]]:
    """Every entry of a (one-process) record folder with its report judged, in the
    index's order."""
    index = index if index is not None else read_index(folder)
    compiles = compiles_by_folder(folder)
    for entry in index.functions:
        yield entry, judged_record(folder, entry, policy, compiles)


def judged_function(function_folder: Path, policy: Policy) -> Report:
    """One recorded function's folder (``FOLDER/NAME``), judged as its recording's
    entries are."""
    folder = function_folder.parent
    name = function_folder.name
    entry = next((e for e in read_index(folder).functions if e.folder == name), None)
    if entry is None:  # a folder the index does not list: its report, with no compiles
        return judge(read_report(str(function_folder / REPORT), inside=folder), policy)
    return judged_record(folder, entry, policy, compiles_by_folder(folder))


def compared_findings(compared: Sequence[ProgramComparison], policy: Policy) -> tuple[Finding, ...]:
    """The comparison rules' findings on lowerings compared (of processes, of two runs,
    within one), under ``policy``."""
    return judge_comparisons(compared, policy)


def compile_budget(policy: Policy, most: int) -> Policy:
    """``policy`` judging a budget of ``most`` compiles per function (``record
    --max-compiles``, ``assert_max_compiles``): JX402 alone, with that budget, under the
    policy's ``select``/``ignore`` and ``severity`` as ``lint --records`` applies them to
    ``budgets: {max_compiles: N}``: a policy that leaves JX402 out judges nothing."""
    code = COMPILE_BUDGET.code
    return replace(
        policy,
        select=(code,) if policy.enabled(code) else (),
        settings=replace(policy.settings, max_compiles=most),
        compile=False,
        why=False,
    )


def judged_compiles(
    compiles: Sequence[Compile], policy: Policy
) -> Iterator[tuple[tuple[Compile, ...], Report]]:
    """A run's compiles held in memory, with no record folder (``jxinspect.testing``'s
    blocks): each code's compiles, in the order it first compiled, with the report they
    are judged on as a recording's are: the function known by its compiles alone (its
    name and line; nothing of it was read, so only the rules that read compiles find
    anything)."""
    for found in by_code(compiles):
        yield found, judge(_known_by_compiles(found[0]), policy, compiles=found)


def _known_by_compiles(compile: Compile) -> Report:
    """The report of a function nothing was read of but that it compiled."""
    _, file, line = source_parts(compile.source)
    return Report(
        target=compile.function,
        function=compile.source,
        file=file,
        line=line,
        stage=None,
        reached="lowered",
        jax_version=None,
        platform=None,
        num_devices=1,
        notes=("known by its compiles alone: its program was not read",),
    )
