"""Rule-code prefixes as ``--select``/``--ignore`` and :mod:`jxinspect.testing` take them."""

from __future__ import annotations

from jxinspect.core.errors import UsageError
from jxinspect.project.options import nearest


def codes(flag: str, text: str | None) -> tuple[str, ...] | None:
    """``"JX102,JX2"`` → code prefixes, each checked against the known rules."""
    if text is None:
        return None
    from jxinspect.rules import RULES

    known = tuple(rule.code for rule in RULES)
    result = []
    for item in filter(None, (part.strip().upper() for part in text.split(","))):
        if not item.startswith("JX") or not any(code.startswith(item) for code in known):
            raise UsageError(
                f"--{flag}: unknown code {item!r}{nearest(item, known)}; known: " + ", ".join(known)
            )
        result.append(item)
    return tuple(result)
