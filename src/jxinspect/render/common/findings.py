"""Findings as people read them: repeats of one code and message shape become one entry
(the first message, how many, a few examples), most severe first.

A ResNet under pmap gives hundreds of ``JX102 argument ... carries the fallback name
'flat_args[i]'``; text and HTML show that as one line, and the findings about JAX's own
code (the bodies of ``jnp`` functions) as one more. A text line stays within
:data:`LINE_MAX` characters: a group names as many examples as fit there. JSON, SARIF and
JUnit keep every finding (they do not use this module).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jxinspect.core.model import Finding
from jxinspect.core.vocabulary import SEVERITY_RANK

GROUP_FROM = 3
"""Findings of one code and shape shown one by one below this count."""
EXAMPLES = 3
"""Leaves (or places) a group names besides its first finding."""
LINE_MAX = 250
"""The longest finding line the text formats print: a group names fewer examples (the
rest counted in ``and K more``), and a message longer than that alone is wrapped."""

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

    def text(self, room: int | None = None, shown: Callable[[str], str] = str) -> str:
        """The first message, and for a group: how many more, a few of them, how to see all;
        with ``room``, those of them that fit in that many characters as ``shown`` prints
        them (the rest counted)."""
        if len(self.findings) == 1:
            return shown(self.first.message)
        others = [_label(f) for f in self.findings[1:]]
        for count in range(min(EXAMPLES, len(others)), -1, -1):
            said = shown(self._folded(others, count))
            if room is None or len(said) <= room:
                break
        return said

    def _folded(self, others: list[str], count: int) -> str:
        """The group's line naming its first ``count`` other leaves."""
        head = f"{self.first.message}; {len(others)} more like it"
        if not count:
            return f"{head} (--format json lists every one)"
        rest = len(others) - count
        tail = f" and {rest} more (--format json lists every one)" if rest > 0 else ""
        return f"{head}: {', '.join(others[:count])}{tail}"


def finding_lines(head: str, group: FindingGroup, shown: Callable[[str], str]) -> list[str]:
    """A group as a text view prints it after ``head`` (``  JX201 warning ``), within
    :data:`LINE_MAX` characters a line: the examples that fit, and a message longer than
    that alone goes on on lines of its own, under its start."""
    return wrapped(head, group.text(LINE_MAX - len(head), shown))


def wrapped(head: str, said: str) -> list[str]:
    """``head`` and ``said`` as the text views print a finding: within :data:`LINE_MAX`
    characters a line, what is longer going on under its start."""
    indent = " " * len(head)
    return textwrap.wrap(said, LINE_MAX, initial_indent=head, subsequent_indent=indent,
                         break_on_hyphens=False) or [head.rstrip()]  # fmt: skip


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
    """The findings about the user's code, most severe first, then by code; repeats of a
    code and shape folded together (those inside JAX's own code: :func:`inside_jax`)."""
    buckets: dict[tuple[str, str, str], list[int]] = {}
    for i, finding in enumerate(findings):
        if finding.inside_jax:
            continue
        buckets.setdefault((finding.code, finding.severity, _shape(finding)), []).append(i)
    groups: list[FindingGroup] = []
    for indices in buckets.values():
        chunks = [indices] if len(indices) >= GROUP_FROM else [[i] for i in indices]
        groups += [FindingGroup(tuple(findings[i] for i in c), tuple(c)) for c in chunks]
    return sorted(
        groups, key=lambda g: (-SEVERITY_RANK[g.first.severity], g.first.code, g.indices[0])
    )


def inside_jax(findings: Sequence[Finding]) -> tuple[int, ...]:
    """Positions of the findings about JAX's own code, which text and HTML fold into one
    line (:func:`inside_jax_line`)."""
    return tuple(i for i, finding in enumerate(findings) if finding.inside_jax)


def inside_jax_line(findings: Sequence[Finding]) -> str | None:
    """``4 more inside JAX's own code (JX110 ×4), not yours to change: --format json
    lists them``; ``None`` where there are none."""
    codes: dict[str, int] = {}
    for finding in findings:
        if finding.inside_jax:
            codes[finding.code] = codes.get(finding.code, 0) + 1
    if not codes:
        return None
    count = sum(codes.values())
    said = ", ".join(f"{code} ×{n}" for code, n in sorted(codes.items()))
    more = "more " if count < len(findings) else ""
    return (
        f"{count} {more}inside JAX's own code ({said}), not yours to change: "
        "--format json lists them"
    )
