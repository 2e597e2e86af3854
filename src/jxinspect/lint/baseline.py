"""The lint baseline: findings a project has accepted, so only new ones fail the build.

Entries are keyed by target, code and leaf path, never by line number, so an edit above
a function does not churn the file; a count covers findings that share a key (several
nested jaxprs, say). Each compiled target's cost (temporaries per device, and its
collectives by kind, mesh axes and paths moved: never a line either) is kept beside them
for JX304 and JX305. The file is sorted JSON, read and written by the codec from
:class:`~jxinspect.core.lint.Baseline`::

    {"schema": "jxinspect.baseline/1",
     "findings": [{"target": "models/mlp.py:predict", "code": "JX102",
                   "path": "params['w']", "count": 1}],
     "costs": [{"target": "models/mlp.py:predict", "temporaries": 4096,
                "collectives": [{"kind": "all-gather", "axes": "fsdp",
                                 "paths": ["params['w']"], "bytes_per_step": 32768}]}]}
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jxinspect.core import codec
from jxinspect.core.artifacts import JSON_LIMIT, read_bytes
from jxinspect.core.errors import UsageError
from jxinspect.core.lint import BASELINE_SCHEMA, Baseline, BaselineEntry
from jxinspect.core.model import AcceptedCost
from jxinspect.project.sourcefile import undecodable

Key = tuple[str, str, str]
"""(target, code, leaf path or ``""``)."""


def make_key(target: str, code: str, path: str | None) -> Key:
    return (target, code, path or "")


@dataclass
class Accepted:
    """What a baseline file accepts: finding counts by key, and costs by target."""

    counts: Counter[Key] = field(default_factory=Counter)
    costs: dict[str, AcceptedCost] = field(default_factory=dict)


REWRITE = "rerun the same `jxinspect lint` command with --write-baseline to replace it"
"""What fixes an unreadable baseline: ``--write-baseline`` does not read the old file
when it cannot (see :func:`read_baseline`), so this works for every error below."""


def read_baseline(path: Path, name: str, replacing: bool = False) -> Accepted:
    """The entries and costs of a baseline file (``name`` is how errors show its path).

    Anything but a baseline this version wrote is a :class:`UsageError` (exit 2) of one
    line saying what is wrong. With ``replacing`` (``--write-baseline``), a file that
    cannot be read as a baseline is no error: it is about to be replaced, so it holds
    nothing to keep; one that is not a regular file (a FIFO, a device) is an error
    still, and is never written over."""
    try:
        return _read(path, name)
    except UsageError:
        if replacing and path.is_file():
            return Accepted()
        raise


def _read(path: Path, name: str) -> Accepted:
    data = _load_json(path, name)
    _check_header(data, name)
    try:
        baseline = codec.convert(data, Baseline, source=name)
    except codec.DecodeError as err:
        raise UsageError(f"{err}; {REWRITE}") from None
    counts: Counter[Key] = Counter()
    for entry in baseline.findings:
        counts[make_key(entry.target, entry.code, entry.path)] += entry.count
    return Accepted(counts, {cost.target: cost for cost in baseline.costs})


def _load_json(path: Path, name: str) -> Any:
    """The file's JSON value, or one line saying why it has none."""
    try:
        raw = read_bytes(path, limit=JSON_LIMIT, shown=name)
    except OSError as err:
        raise UsageError(f"cannot read the baseline {name}: {err.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line, byte = undecodable(raw, err)
        raise UsageError(
            f"{name}:{line}: the baseline is not JSON text (byte {byte} is not UTF-8); {REWRITE}"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(
            f"{name}:{err.lineno}: the baseline is not JSON: {err.msg}; {REWRITE}"
        ) from None
    except ValueError:  # an integer of more than 4,300 digits
        raise UsageError(
            f"{name}: the baseline holds a number too long to read; {REWRITE}"
        ) from None
    except RecursionError:
        raise UsageError(
            f"{name}: the baseline is nested too deeply to be one; {REWRITE}"
        ) from None


def _check_header(data: Any, name: str) -> None:
    """An object with this version's schema, or one line saying what it is instead."""
    if not isinstance(data, dict):
        raise UsageError(
            f"{name}: not a jxinspect baseline (the file holds {_json_kind(data)}, expected an "
            f'object with "schema": "{BASELINE_SCHEMA}"); {REWRITE}'
        )
    schema, expected = data.get("schema"), BASELINE_SCHEMA
    if schema != expected:
        found = f"its schema is {_short(schema)}" if "schema" in data else "it has no schema"
        newer = isinstance(schema, str) and schema.startswith(expected.rpartition("/")[0] + "/")
        hint = "; another version of jxinspect wrote it: use that one, or " if newer else "; "
        raise UsageError(
            f'{name}: not a jxinspect baseline this version reads ({found}, expected "{expected}")'
            f"{hint}{REWRITE}"
        )


def _json_kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true or false"}
    return "null" if value is None else names.get(type(value), "a number")


def _short(value: Any) -> str:
    kind = _json_kind(value)
    text = {"an object": "{...}", "a list": "[...]"}.get(kind) or json.dumps(
        value, ensure_ascii=False
    )
    return text if len(text) <= 40 else text[:37] + "..."


def render_baseline(accepted: Accepted) -> str:
    """The baseline file's text: entries and costs sorted by target, no timestamps, so
    it diffs cleanly."""
    findings = tuple(
        BaselineEntry(target, code, path or None, count)
        for (target, code, path), count in sorted(accepted.counts.items())
        if count > 0
    )
    costs = tuple(accepted.costs[target] for target in sorted(accepted.costs))
    return codec.dumps(Baseline(BASELINE_SCHEMA, findings, costs))
