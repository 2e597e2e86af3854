"""A recording judged, the one way every reader gates on it (``show``, ``lint --records``,
``diff-debug`` of two runs): each recorded report judged once under the project's policy,
with the facts the recording holds of it (its code's compiles: JX401, JX402, JX405,
JX406; its lowerings compared across processes: JX403). The findings the recorder wrote
when it saved a report are never what a gate reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from jxinspect.core.identity import ProgramComparison
from jxinspect.core.model import Finding, Report
from jxinspect.core.recompiles import Compile, by_code
from jxinspect.core.recording import Entry, Index
from jxinspect.pipeline import judge, judge_comparisons
from jxinspect.project.config import Policy
from jxinspect.record.folder import REPORT, read_compiles, read_index, read_record, read_report

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
