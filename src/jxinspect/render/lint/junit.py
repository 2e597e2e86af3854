"""A lint result as JUnit XML: one test case per target.

A target fails when it has a new finding at or above ``fail_on``; one that could not be
staged is an error. Other findings go to ``system-out``. No timestamps or durations, so
the file is the same from run to run. Text from the user is escaped
(:func:`escape.xml`), so the file is well-formed XML 1.0 whatever a name holds.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from jxinspect.core.lint import LintResult, TargetResult
from jxinspect.render.common.escape import xml as _clean


def _line(
    target: TargetResult, code: str, severity: str, message: str, file: str | None, line: int | None
) -> str:
    where = f"{file}:{line}: " if file and line else f"{file}: " if file else ""
    return _clean(f"{where}{code} {severity} {message}")


def render(result: LintResult) -> str:
    failures = errors = 0
    cases = []
    for target in result.targets:
        case = ET.Element(
            "testcase", {"classname": "jxinspect.lint", "name": _clean(target.target)}
        )
        if target.file:
            case.set("file", _clean(target.file))
        if target.line:
            case.set("line", str(target.line))
        failing = [f for f in target.findings if result.fails(f)]
        other = [f for f in target.findings if not result.fails(f)]
        if target.failed:
            errors += 1
            error = ET.SubElement(
                case,
                "error",
                {"message": _clean(target.error or ""), "type": target.error_kind or "error"},
            )
            error.text = _clean(target.error or "")
        elif failing:
            failures += 1
            codes = sorted({f.code for f in failing})
            count = f"{len(failing)} new finding{'s' if len(failing) != 1 else ''}"
            failure = ET.SubElement(
                case,
                "failure",
                {
                    "message": f"{count} at or above {result.fail_on}: {', '.join(codes)}",
                    "type": codes[0],
                },
            )
            failure.text = "\n".join(
                _line(target, f.code, f.severity, f.message, f.file, f.line) for f in failing
            )
        if other:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(
                _line(target, f.code, f.severity, f.message, f.file, f.line)
                + (" (baselined)" if f.baselined else "")
                for f in other
            )
        cases.append(case)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors)}
    suites = ET.Element("testsuites", {"name": "jxinspect lint", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "jxinspect lint", **counts, "skipped": "0"})
    suite.extend(cases)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, "unicode") + "\n"
