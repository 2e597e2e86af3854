"""What ``jxinspect lint`` found: plain frozen dataclasses, drawn by the ``render/lint``
renderers (text, JSON, SARIF, GitHub, JUnit). No JAX.

Its JSON form (schema ``jxinspect.lint/1``) is written and read by
:mod:`jxinspect.core.codec` from these types alone; ``lint-merge`` reads the parts of a
sharded run back. Paths and messages are relative to the lint root (the configuration's
folder), and everything is sorted, so two runs give byte-identical output.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal

from msgspec import Meta

from jxinspect.core.display import Displayed
from jxinspect.core.errors import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USER_CODE,
)
from jxinspect.core.model import AcceptedCost, Code, Count, Finding, gate
from jxinspect.core.vocabulary import INTERNAL, SEVERITIES, ErrorKind, FailOn, Reached, Severity

LINT_SCHEMA: Literal["jxinspect.lint/1"] = "jxinspect.lint/1"
BASELINE_SCHEMA: Literal["jxinspect.baseline/1"] = "jxinspect.baseline/1"


@dataclass(frozen=True)
class LintFinding(Finding):
    """A finding on one target, with the severity the configuration gives it."""

    baselined: bool = False
    """Recorded in the baseline: reported, but never fails the run."""

    @classmethod
    def of(cls, finding: Finding, **changes: Any) -> LintFinding:
        """``finding`` as a lint finding, with ``changes`` (a severity, relative paths)."""
        return cls(**{f.name: getattr(finding, f.name) for f in fields(Finding)} | changes)


@dataclass(frozen=True)
class TargetResult:
    """One target: its findings, or why it could not be staged."""

    target: str
    """``models/mlp.py:predict`` (relative to the root) or ``pkg.module:function``."""
    file: str | None
    """The target's module, relative to the root, when known."""
    line: int | None
    """Where the function is defined (its ``def`` line), when known."""
    function: str | None = None
    """``func_src_info``: the function's name and where it is defined."""
    reached: Reached | None = None
    """``traced``, ``lowered`` or ``compiled``; ``None`` when it failed."""
    error: str | None = None
    """Why it could not be staged (import, trace, inputs); ``None`` when it was."""
    error_kind: ErrorKind | None = None
    """Whose fault the failure is (:data:`~jxinspect.core.vocabulary.ErrorKind`)."""
    findings: tuple[LintFinding, ...] = ()
    """Its findings after the policy (select, ignore, severities) and the baseline."""
    cached: bool = field(default=False, compare=False, metadata={"written": False})
    """Its report came from the cache (not in the JSON: runs give identical output)."""
    seconds: float | None = field(default=None, compare=False, metadata={"written": False})
    """How long staging took, when it was staged (not in the JSON)."""

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass(frozen=True)
class GoneEntry:
    """A baseline entry no finding matched: fixed (or moved); drop it with --write-baseline."""

    target: str
    code: Code
    path: str | None
    """The leaf the accepted findings were about, if any."""
    count: Count
    """Accepted findings of this key that no finding matched."""


@dataclass(frozen=True)
class ShardInfo:
    """Which part of a run split across CI jobs (``--shard K/N``) this result is."""

    index: int
    """K, from 1."""
    count: int
    """N."""
    targets: int
    """Targets in the whole run, all parts together."""
    plan: str
    """A digest of every target name of the whole run: parts of one run share it."""


@dataclass(frozen=True)
class RuleInfo:
    """A rule that ran, with its severity under the configuration; its summary and
    explanation are this jxinspect's (for the renderers that describe rules, SARIF), not
    written."""

    code: Code
    severity: Severity
    """Its severity under the configuration."""
    summary: str = field(default="", compare=False, metadata={"written": False})
    explanation: str = field(default="", compare=False, metadata={"written": False})


@dataclass(frozen=True)
class LintCounts:
    """The run at a glance, for readers of the JSON (derived from the targets)."""

    targets: int = 0
    """Targets judged (this part's, for one part of a sharded run)."""
    failed: int = 0
    """Targets that did not report (import, trace, crash, timeout…)."""
    interrupted: bool = False
    """Ctrl-C stopped the run."""
    new: dict[Severity, int] = field(default_factory=dict)
    """New (not baselined) findings per severity, every severity named."""
    baselined: int = 0
    """Findings the baseline accepted."""
    gone: int = 0
    """Baseline entries' findings that no finding matched."""


@dataclass(frozen=True, kw_only=True, repr=False)
class LintResult(Displayed):
    """Every target of one lint run, in name order."""

    product = "lint"

    schema: Literal["jxinspect.lint/1"] = field(init=False, default_factory=lambda: LINT_SCHEMA)
    """The format's name and version."""
    version: str = ""
    """The jxinspect that ran."""
    config: str | None = None
    """The configuration file used, relative to the working folder (``jxinspect.yaml``,
    ``../jxinspect.yaml``), if any."""
    baseline: str | None = None
    """The baseline file used (relative to the root), if any."""
    fail_on: FailOn = "error"
    """The gate: new findings at or above this severity fail the run."""
    summary: LintCounts = field(init=False, default_factory=LintCounts, compare=False)
    """The counts (derived)."""
    targets: tuple[TargetResult, ...]
    gone: tuple[GoneEntry, ...] = ()
    baseline_size: int = 0
    """Findings the baseline holds (after ``--write-baseline``: what was written)."""
    baseline_costs: int = 0
    """Compiled targets whose cost the baseline holds (JX304, JX305)."""
    rules: tuple[RuleInfo, ...]
    shard: ShardInfo | None = None
    """Set when this is one part of a run split with ``--shard``."""
    interrupted: bool = field(default=False, metadata={"written": False})
    """Ctrl-C stopped the run: the targets it had not finished are failed (written in
    ``summary``; read back from it)."""
    notes: tuple[str, ...] = field(default=(), compare=False, metadata={"written": False})
    """What the run says on stderr, not in the result, one ``warning:`` line each: a cache
    entry it did not trust (its file, why, and that it was staged again), or why it did
    not use the cache at all."""

    def __post_init__(self) -> None:
        if self.summary.interrupted and not self.interrupted:  # read back
            object.__setattr__(self, "interrupted", True)
        counts = self.new_counts()
        summary = LintCounts(
            targets=len(self.targets),
            failed=sum(t.failed for t in self.targets),
            interrupted=self.interrupted,
            new={sev: counts.get(sev, 0) for sev in SEVERITIES},
            baselined=sum(f.baselined for _, f in self.findings()),
            gone=sum(entry.count for entry in self.gone),
        )
        object.__setattr__(self, "summary", summary)

    def fails(self, finding: LintFinding) -> bool:
        """A new finding at or above ``fail_on``, about the user's code."""
        return not finding.baselined and gate((finding,), self.fail_on)

    def findings(self) -> Iterator[tuple[TargetResult, LintFinding]]:
        for target in self.targets:
            for finding in target.findings:
                yield target, finding

    def new_counts(self) -> dict[str, int]:
        """New (not baselined) findings per severity."""
        counts: dict[str, int] = {}
        for _, finding in self.findings():
            if not finding.baselined:
                counts[finding.severity] = counts.get(finding.severity, 0) + 1
        return counts

    def exit_code(self, exit_zero: bool = False) -> int:
        """130 interrupted, 4 a target hit an internal error, 3 a target failed (import,
        trace, exit, crash, timeout), 1 failing findings, else 0. ``exit_zero`` turns 1
        into 0: it covers findings, never targets that did not report."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        if any(t.error_kind == INTERNAL for t in self.targets):
            return EXIT_INTERNAL
        if any(t.failed for t in self.targets):
            return EXIT_USER_CODE
        if not exit_zero and any(self.fails(f) for _, f in self.findings()):
            return EXIT_FINDINGS
        return EXIT_OK

    def summary_line(self) -> str:
        """``5 targets (1 failed); 2 new findings: 1 error, 1 warning; 3 baselined``."""
        counts, shard = self.summary, self.shard
        parts = [
            (f"shard {shard.index}/{shard.count}, " if shard is not None else "")
            + f"{counts.targets} target{'s' if counts.targets != 1 else ''}"
            + (f" of {shard.targets}" if shard is not None else "")
            + (f" ({counts.failed} failed)" if counts.failed else "")
            + (" (interrupted)" if self.interrupted else "")
        ]
        total = sum(counts.new.values())
        if total:
            by = ", ".join(
                f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in counts.new.items() if n
            )
            parts.append(f"{total} new finding{'s' if total != 1 else ''}: {by}")
        else:
            parts.append("no new findings")
        if counts.baselined:
            parts.append(f"{counts.baselined} baselined")
        if counts.gone:
            parts.append(f"{counts.gone} gone from the baseline")
        return "; ".join(parts)


@dataclass(frozen=True)
class BaselineEntry:
    """Accepted findings of one target, code and leaf (never a line: an edit above a
    function does not churn the file)."""

    target: str
    code: Code
    path: str | None
    """The leaf the findings are about, if any."""
    count: Annotated[int, Meta(ge=1)] = 1
    """How many findings share the key (several nested jaxprs, say)."""


@dataclass(frozen=True)
class Baseline:
    """The lint baseline file: the findings a project has accepted, and the compiled cost
    of each compiled target (JX304, JX305), sorted."""

    schema: Literal["jxinspect.baseline/1"]
    """The format's name and version."""
    findings: tuple[BaselineEntry, ...] = ()
    costs: tuple[AcceptedCost, ...] = ()
    """One per target that was compiled (``compile: true``) when the baseline was written;
    a baseline written before costs were kept has none, and judges no cost."""
