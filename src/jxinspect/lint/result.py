"""What ``jxinspect lint`` found: plain frozen dataclasses, drawn by the ``render/lint_*``
renderers, ``render/sarif``, ``render/github`` and ``render/junit``. No JAX.

Paths and messages are relative to the lint root (the configuration's folder), and
everything is sorted, so two runs give byte-identical output.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jxinspect.core.display import Displayed
from jxinspect.core.errors import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USER_CODE,
)
from jxinspect.core.model import Severity, at_or_above
from jxinspect.core.vocabulary import SEVERITIES, ErrorKind, FailOn, Reached

LINT_SCHEMA = "jxinspect.lint/1"


@dataclass(frozen=True)
class LintFinding:
    """One finding on one target, with the severity the configuration gives it."""

    code: str
    severity: Severity
    message: str
    path: str | None
    """The leaf it is about, if any."""
    file: str | None
    line: int | None
    baselined: bool = False
    """Recorded in the baseline: reported, but never fails the run."""
    inside_jax: bool = False
    """About JAX's own code (:attr:`jxinspect.core.model.Finding.inside_jax`): reported,
    but never fails the run."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "file": self.file,
            "line": self.line,
            "baselined": self.baselined,
            "inside_jax": self.inside_jax,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LintFinding:
        return cls(
            code=data["code"],
            severity=data["severity"],
            message=data["message"],
            path=data["path"],
            file=data["file"],
            line=data["line"],
            baselined=bool(data["baselined"]),
            inside_jax=bool(data.get("inside_jax")),
        )


@dataclass(frozen=True)
class TargetResult:
    """One target: its findings, or why it could not be staged."""

    name: str
    """``models/mlp.py:predict`` (relative to the root) or ``pkg.module:function``."""
    file: str | None
    line: int | None
    """Where the function is defined (its ``def`` line), when known."""
    function: str | None = None
    reached: Reached | None = None
    """``traced``, ``lowered`` or ``compiled``; ``None`` when it failed."""
    findings: tuple[LintFinding, ...] = ()
    error: str | None = None
    """Why it could not be staged (import, trace, inputs); ``None`` when it was."""
    error_kind: ErrorKind | None = None
    """``user-code``, ``usage``, ``internal``, ``timeout`` or ``interrupted``."""
    cached: bool = field(default=False, compare=False)
    """Its report came from the cache (not in the JSON: runs give identical output)."""
    seconds: float | None = field(default=None, compare=False)
    """How long staging took, when it was staged (not in the JSON)."""

    @property
    def failed(self) -> bool:
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.name,
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "reached": self.reached,
            "error": self.error,
            "error_kind": self.error_kind,
            "findings": [finding.to_dict() for finding in self.findings],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TargetResult:
        return cls(
            name=data["target"],
            file=data["file"],
            line=data["line"],
            function=data["function"],
            reached=data["reached"],
            findings=tuple(LintFinding.from_dict(f) for f in data["findings"]),
            error=data["error"],
            error_kind=data["error_kind"],
        )


@dataclass(frozen=True)
class GoneEntry:
    """A baseline entry no finding matched: fixed (or moved); drop it with --write-baseline."""

    target: str
    code: str
    path: str | None
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "code": self.code, "path": self.path, "count": self.count}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GoneEntry:
        return cls(data["target"], data["code"], data["path"], int(data["count"]))


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

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count, "targets": self.targets,
                "plan": self.plan}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ShardInfo:
        return cls(int(data["index"]), int(data["count"]), int(data["targets"]), str(data["plan"]))


@dataclass(frozen=True)
class RuleInfo:
    """A rule that ran, for the renderers that describe rules (SARIF)."""

    code: str
    severity: Severity
    """Its severity under the configuration."""
    summary: str
    explanation: str


@dataclass(frozen=True, repr=False)
class LintResult(Displayed):
    """Every target of one lint run, in name order."""

    product = "lint"

    targets: tuple[TargetResult, ...]
    rules: tuple[RuleInfo, ...]
    fail_on: FailOn = "error"
    gone: tuple[GoneEntry, ...] = ()
    baseline: str | None = None
    """The baseline file used (relative to the root), if any."""
    baseline_size: int = 0
    """Findings the baseline holds (after ``--write-baseline``: what was written)."""
    config: str | None = None
    version: str = ""
    interrupted: bool = False
    """Ctrl-C stopped the run: the targets it had not finished are failed."""
    shard: ShardInfo | None = None
    """Set when this is one part of a run split with ``--shard``."""

    def fails(self, finding: LintFinding) -> bool:
        """A new finding at or above ``fail_on``, about the user's code."""
        return (
            not finding.baselined
            and not finding.inside_jax
            and at_or_above(finding.severity, self.fail_on)
        )

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
        if any(t.error_kind == "internal" for t in self.targets):
            return EXIT_INTERNAL
        if any(t.failed for t in self.targets):
            return EXIT_USER_CODE
        if not exit_zero and any(self.fails(f) for _, f in self.findings()):
            return EXIT_FINDINGS
        return EXIT_OK

    def summary(self) -> str:
        """``5 targets (1 failed); 2 new findings: 1 error, 1 warning; 3 baselined``."""
        failed = sum(t.failed for t in self.targets)
        shard = self.shard
        parts = [
            (f"shard {shard.index}/{shard.count}, " if shard is not None else "")
            + f"{len(self.targets)} target{'s' if len(self.targets) != 1 else ''}"
            + (f" of {shard.targets}" if shard is not None else "")
            + (f" ({failed} failed)" if failed else "")
            + (" (interrupted)" if self.interrupted else "")
        ]
        counts = self.new_counts()
        total = sum(counts.values())
        if total:
            by = ", ".join(
                f"{n} {sev}{'s' if n != 1 else ''}" for sev in SEVERITIES if (n := counts.get(sev))
            )
            parts.append(f"{total} new finding{'s' if total != 1 else ''}: {by}")
        else:
            parts.append("no new findings")
        baselined = sum(f.baselined for _, f in self.findings())
        if baselined:
            parts.append(f"{baselined} baselined")
        gone = sum(entry.count for entry in self.gone)
        if gone:
            parts.append(f"{gone} gone from the baseline")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        counts = self.new_counts()
        return {
            "schema": LINT_SCHEMA,
            "version": self.version,
            "config": self.config,
            "baseline": self.baseline,
            "fail_on": self.fail_on,
            "summary": {
                "targets": len(self.targets),
                "failed": sum(t.failed for t in self.targets),
                "interrupted": self.interrupted,
                "new": {sev: counts.get(sev, 0) for sev in SEVERITIES},
                "baselined": sum(f.baselined for _, f in self.findings()),
                "gone": sum(entry.count for entry in self.gone),
            },
            "targets": [target.to_dict() for target in self.targets],
            "gone": [entry.to_dict() for entry in self.gone],
            "baseline_size": self.baseline_size,
            "rules": [{"code": r.code, "severity": r.severity} for r in self.rules],
            **({"shard": self.shard.to_dict()} if self.shard is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LintResult:
        """Read back :meth:`to_dict`'s output (``KeyError``/``TypeError``/``ValueError`` if
        it is not one); rule summaries and explanations come from this jxinspect."""
        from jxinspect.rules import RULES_BY_CODE

        rules = []
        for rule in data["rules"]:
            known = RULES_BY_CODE[rule["code"]]
            rules.append(RuleInfo(known.code, rule["severity"], known.summary, known.explanation))
        shard = data.get("shard")
        return cls(
            targets=tuple(TargetResult.from_dict(t) for t in data["targets"]),
            rules=tuple(rules),
            fail_on=data["fail_on"],
            gone=tuple(GoneEntry.from_dict(g) for g in data["gone"]),
            baseline=data["baseline"],
            baseline_size=int(data.get("baseline_size", 0)),
            config=data["config"],
            version=data["version"],
            interrupted=bool(data["summary"].get("interrupted", False)),
            shard=ShardInfo.from_dict(shard) if shard is not None else None,
        )
