"""A lint result as SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

Rules carry their summary and explanation; results point at the user's function
(``file``/``startLine`` relative to the repository root, ``%SRCROOT%``) and carry a
``partialFingerprints`` entry built from target, code and leaf path (not the line), so
alerts survive edits above the function. Baselined findings are ``unchanged`` and
suppressed; new ones are ``new``. Targets that failed are tool notifications.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any
from urllib.parse import quote

from jxinspect.core import codec
from jxinspect.core.lint import LintResult

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT = "jxinspect/v1"


def _location(file: str | None, line: int | None, target: str) -> dict[str, Any]:
    location: dict[str, Any] = {}
    if file is not None:
        uri = quote(file) if not file.startswith("/") else "file://" + quote(file)
        artifact: dict[str, Any] = {"uri": uri}
        if not file.startswith("/"):
            artifact["uriBaseId"] = "%SRCROOT%"
        physical: dict[str, Any] = {"artifactLocation": artifact}
        if line:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    location["logicalLocations"] = [{"fullyQualifiedName": target, "kind": "function"}]
    return location


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:32]


def to_sarif(result: LintResult) -> dict[str, Any]:
    """The SARIF log as plain data."""
    notifications = _notifications(result)
    invocation: dict[str, Any] = {
        "executionSuccessful": not any(t.failed for t in result.targets),
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    driver = {"name": "jxinspect", "version": result.version, "rules": _rules(result)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": _results(result),
            }
        ],
    }


def _rules(result: LintResult) -> list[dict[str, Any]]:
    return [
        {
            "id": rule.code,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.explanation.split("\n\n")[0].replace("\n", " ")},
            "help": {"text": rule.explanation},
            "defaultConfiguration": {"level": LEVELS[rule.severity]},
        }
        for rule in result.rules
    ]


def _results(result: LintResult) -> list[dict[str, Any]]:
    """One result per finding; its fingerprint counts repeats of one key."""
    index = {rule.code: i for i, rule in enumerate(result.rules)}
    results = []
    seen: Counter[tuple[str, str, str]] = Counter()
    for target, finding in result.findings():
        key = (target.target, finding.code, finding.path or "")
        occurrence = seen[key]
        seen[key] += 1
        item: dict[str, Any] = {
            "ruleId": finding.code,
            "level": LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [_location(finding.file, finding.line, target.target)],
            "partialFingerprints": {FINGERPRINT: _fingerprint(*key, occurrence)},
            "baselineState": "unchanged" if finding.baselined else "new",
            "properties": {"target": target.target, "leafPath": finding.path},
        }
        if finding.code in index:
            item["ruleIndex"] = index[finding.code]
        if finding.baselined:
            item["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": "recorded in the jxinspect baseline",
                }
            ]
        results.append(item)
    return results


def _notifications(result: LintResult) -> list[dict[str, Any]]:
    """Targets that failed to stage, and baseline entries no finding matches any more."""
    failed = [
        {
            "level": "error",
            "message": {"text": f"{target.target}: {target.error}"},
            "locations": [_location(target.file, target.line, target.target)],
            "properties": {"target": target.target, "kind": target.error_kind},
        }
        for target in result.targets
        if target.failed
    ]
    return failed + [
        {
            "level": "note",
            "message": {
                "text": f"baseline entry gone: {entry.target} {entry.code} "
                f"{entry.path or '-'} (x{entry.count})"
            },
        }
        for entry in result.gone
    ]


def render(result: LintResult) -> str:
    """The SARIF log as indented JSON."""
    return codec.dumps(to_sarif(result))
