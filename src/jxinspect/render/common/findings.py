"""Findings as people read them: repeats of one code and message shape become one entry
(the first message, how many, a few examples), most severe first.

A ResNet under pmap gives hundreds of ``JX102 argument ... carries the fallback name
'flat_args[i]'``; text and HTML show that as one line. JSON, SARIF and JUnit keep every
finding (they do not use this module).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from jxinspect.core.model import Finding
from jxinspect.core.vocabulary import SEVERITY_RANK

GROUP_FROM = 3
"""Findings of one code and shape shown one by one below this count."""
EXAMPLES = 3
"""Leaves (or places) a group names besides its first finding."""

_NUMBERS = re.compile(r"\d+")


@dataclass(frozen=True)
class FindingGroup:
    """One finding, or several of one code whose messages differ only in the leaf."""

    findings: tuple[Finding, ...]
    indices: tuple[int, ...]
    """Positions in ``report.findings`` (the HTML anchors)."""

    @property
    def first(self) -> Finding:
        return self.findings[0]

    def text(self) -> str:
        """The first message, and for a group: how many more, a few of them, how to see all."""
        if len(self.findings) == 1:
            return self.first.message
        others = [_label(f) for f in self.findings[1:]]
        shown = ", ".join(others[:EXAMPLES])
        rest = len(others) - EXAMPLES
        tail = f" and {rest} more (--format json lists every one)" if rest > 0 else ""
        return f"{self.first.message}; {len(others)} more like it: {shown}{tail}"


def _label(finding: Finding) -> str:
    if finding.path is not None:
        return finding.path
    words = finding.message.split()
    return words[2] if len(words) > 2 and words[:2] == ["nested", "jaxpr"] else finding.message


def _shape(finding: Finding) -> str:
    """The message with its leaf and numbers taken out: what repeats share."""
    message = finding.message.replace(finding.path, "") if finding.path else finding.message
    return _NUMBERS.sub("N", message)


def grouped(findings: Sequence[Finding]) -> list[FindingGroup]:
    """Most severe first, then by code; repeats of a code and shape folded together."""
    buckets: dict[tuple[str, str, str], list[int]] = {}
    for i, finding in enumerate(findings):
        buckets.setdefault((finding.code, finding.severity, _shape(finding)), []).append(i)
    groups: list[FindingGroup] = []
    for indices in buckets.values():
        chunks = [indices] if len(indices) >= GROUP_FROM else [[i] for i in indices]
        groups += [FindingGroup(tuple(findings[i] for i in c), tuple(c)) for c in chunks]
    return sorted(
        groups, key=lambda g: (-SEVERITY_RANK[g.first.severity], g.first.code, g.indices[0])
    )
