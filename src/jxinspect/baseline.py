"""The lint baseline: findings a project has accepted, so only new ones fail the build.

Entries are keyed by target, code and leaf path, never by line number, so an edit above
a function does not churn the file; a count covers findings that share a key (several
nested jaxprs, say). The file is sorted JSON::

    {"schema": "jxinspect.baseline/1",
     "findings": [{"target": "models/mlp.py:predict", "code": "JX102",
                   "path": "params['w']", "count": 1}]}
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from jxinspect.errors import UsageError

SCHEMA = "jxinspect.baseline/1"

Key = tuple[str, str, str]
"""(target, code, leaf path or ``""``)."""


def make_key(target: str, code: str, path: str | None) -> Key:
    return (target, code, path or "")


def read_baseline(path: Path, name: str) -> Counter[Key]:
    """The entries of a baseline file (``name`` is how errors show its path)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"cannot read the baseline {name}: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{name}:{err.lineno}: the baseline is not JSON: {err.msg}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UsageError(
            f'{name}: not a jxinspect baseline (expected "schema": "{SCHEMA}"); '
            "rewrite it with --write-baseline"
        )
    counts: Counter[Key] = Counter()
    for index, entry in enumerate(data.get("findings", [])):
        try:
            key = make_key(str(entry["target"]), str(entry["code"]), entry.get("path"))
            count = int(entry.get("count", 1))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise UsageError(
                f"{name}: findings[{index}] needs target, code, path and count; "
                "rewrite the file with --write-baseline"
            ) from None
        counts[key] += count
    return counts


def render_baseline(counts: Counter[Key]) -> str:
    """The baseline file's text: entries sorted, no timestamps, so it diffs cleanly."""
    findings = [
        {"target": target, "code": code, "path": path or None, "count": count}
        for (target, code, path), count in sorted(counts.items())
        if count > 0
    ]
    return json.dumps({"schema": SCHEMA, "findings": findings}, indent=2, ensure_ascii=False) + "\n"
