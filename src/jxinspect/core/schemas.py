"""The shipped JSON Schemas (``jxinspect/schemas/*.json``), generated from the result types.

The codec writes every field of a result type, so each object's schema requires all its
properties and allows no others; each field's docstring is its description. A test fails
when a shipped file and the types disagree; ``python -m jxinspect.core.schemas`` writes
them again.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect

from jxinspect.core import codec
from jxinspect.core.diff import DIFF_SCHEMA, DiffReport
from jxinspect.core.history import TREND_SCHEMA, Trend
from jxinspect.core.lint import LINT_SCHEMA, LintResult
from jxinspect.core.model import SCHEMA as REPORT_SCHEMA
from jxinspect.core.model import Report
from jxinspect.core.processes import SCHEMA as PROCESSES_SCHEMA
from jxinspect.core.processes import ProcessesSummary
from jxinspect.core.recompiles import SCHEMA as COMPILES_SCHEMA
from jxinspect.core.recompiles import Compiles
from jxinspect.core.recording import SCHEMA as RECORD_SCHEMA
from jxinspect.core.recording import SHOWN_SCHEMA, Index, ShownRecording
from jxinspect.core.survey import HISTORY_SCHEMA, History, Survey
from jxinspect.core.survey import SCHEMA as SURVEY_SCHEMA
from jxinspect.core.survey_diff import SCHEMA as SURVEY_DIFF_SCHEMA
from jxinspect.core.survey_diff import SurveyDiff

DRAFT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Shipped:
    """One schema file: its name, the type it describes, its ``$id`` and title."""

    file: str
    kind: type
    id: str
    title: str
    description: str


def shipped() -> tuple[Shipped, ...]:
    """Every schema file the package ships."""
    return (
        Shipped("report.schema.json", Report, REPORT_SCHEMA, "jxinspect report",
                "What one staged JAX function became, as `jxinspect lower --format json` "
                "writes it."),
        Shipped("diff.schema.json", DiffReport, DIFF_SCHEMA, "jxinspect diff",
                "What changed between two reports of the same functions, as "
                "`jxinspect diff-debug --format json` writes it."),
        Shipped("lint.schema.json", LintResult, LINT_SCHEMA, "jxinspect lint result",
                "Every target of one lint run, as `jxinspect lint --format json` writes it "
                "(and `lint-merge` reads the parts of a sharded run)."),
        Shipped("survey.schema.json", Survey, SURVEY_SCHEMA, "jxinspect survey",
                "What one JAX release keeps of the debug info of every program of "
                "jxinspect's corpus, as `jxinspect survey --format json` writes it (and "
                "the surveys shipped in `jxinspect/surveys`)."),
        Shipped("survey-history.schema.json", History, HISTORY_SCHEMA,
                "jxinspect survey history",
                "The surveys shipped with jxinspect side by side, a matrix of program × "
                "release per level, as `jxinspect survey --history --format json` writes it."),
        Shipped("survey-diff.schema.json", SurveyDiff, SURVEY_DIFF_SCHEMA,
                "jxinspect survey diff",
                "Two surveys compared cell by cell, as `jxinspect diff-debug A.json B.json "
                "--format json` writes it for two survey files."),
        Shipped("record.schema.json", Index, RECORD_SCHEMA, "jxinspect record index",
                "A record folder's `index.json`, as `jxinspect record` writes it: the "
                "command, how the run ended, and one entry per recorded function."),
        Shipped("record-summary.schema.json", ShownRecording, SHOWN_SCHEMA,
                "jxinspect record summary",
                "A record folder as `jxinspect show FOLDER --format json` writes it: the "
                "index, each function with its replay and leaf counts, what the run did not "
                "record, and what compiled again."),
        Shipped("processes.schema.json", ProcessesSummary, PROCESSES_SCHEMA,
                "jxinspect processes summary",
                "A recording of several JAX processes as `jxinspect show FOLDER --format "
                "json` writes it: each function's programs on every process, and the first "
                "real difference where they differ."),
        Shipped("compiles.schema.json", Compiles, COMPILES_SCHEMA, "jxinspect compiles",
                "A record folder's `compiles.json`, as `jxinspect record` writes it: every "
                "compile of the user's functions, with its reasons and seconds."),
        Shipped("trend.schema.json", Trend, TREND_SCHEMA, "jxinspect trend",
                "Each target's rows of a history database (`lint --history FILE`) and "
                "where a measure changed, as `jxinspect trend --format json` writes it."),
    )  # fmt: skip


@cache
def _docstrings(kind: type) -> dict[str, str]:
    """Each field's docstring (the string just below it), the base classes' included."""
    found: dict[str, str] = {}
    for cls in reversed(kind.__mro__):
        if not dataclasses.is_dataclass(cls) and not issubclass(cls, msgspec.Struct):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, following in zip(body, body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[node.target.id] = " ".join(following.value.value.split())
    return found


def _classes(kind: type) -> dict[str, Any]:
    """Every dataclass and struct reachable from ``kind``'s fields, by name (as msgspec
    names them): msgspec's description of each."""
    seen: dict[str, Any] = {}

    def walk(node: Any) -> None:
        if isinstance(node, (msgspec.inspect.DataclassType, msgspec.inspect.StructType)):
            if node.cls.__name__ in seen:
                return
            seen[node.cls.__name__] = node
            for f in node.fields:
                walk(f.type)
        elif isinstance(node, msgspec.inspect.Type):
            for value in vars(node).values() if hasattr(node, "__dict__") else ():
                walk(value)
            for slot in getattr(type(node), "__struct_fields__", ()):
                walk(getattr(node, slot))
        elif isinstance(node, (tuple, list)):
            for item in node:
                walk(item)

    walk(msgspec.inspect.type_info(kind))
    return seen


def _strict(definition: dict[str, Any], info: Any) -> None:
    """Every property required and described, no other property allowed."""
    cls = info.cls
    unwritten = codec.unwritten(cls)
    names = {f.encode_name: f.name for f in info.fields if f.name not in unwritten}
    written = list(names)
    properties = definition.get("properties", {})
    for name in list(properties):
        if name not in written:
            del properties[name]
    docs = _docstrings(cls)
    for name, prop in properties.items():
        prop.pop("default", None)
        if names[name] in docs:
            prop["description"] = docs[names[name]]
    definition["properties"] = {name: properties[name] for name in written if name in properties}
    definition["required"] = list(definition["properties"])
    definition["additionalProperties"] = False
    if cls.__doc__:
        definition["description"] = " ".join(cls.__doc__.split())


def generate(entry: Shipped) -> dict[str, Any]:
    """The schema of one shipped file, as the types say today."""
    found = codec.schema(entry.kind)
    defs: dict[str, Any] = found.pop("$defs", {})
    classes = _classes(entry.kind)
    for name, definition in defs.items():
        if name in classes:
            _strict(definition, classes[name])
    root_ref = found.get("$ref", "").rpartition("/")[2]
    root = defs.pop(root_ref, found)
    root.pop("title", None)
    head = {"$schema": DRAFT, "$id": entry.id, "title": entry.title,
            "description": entry.description}  # fmt: skip
    body = {k: v for k, v in root.items() if k != "description"}
    used = _referenced(body, defs)
    return {**head, **body, "$defs": {name: defs[name] for name in sorted(used)}}


def _referenced(root: Any, defs: dict[str, Any]) -> set[str]:
    """The definitions ``root`` reaches through ``$ref``s, once the unwritten fields are
    gone (a type only they held is not part of the file)."""
    found: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.rpartition("/")[2]
                if name not in found and name in defs:
                    found.add(name)
                    stack.append(defs[name])
            stack.extend(v for k, v in node.items() if k != "$ref")
        elif isinstance(node, list):
            stack.extend(node)
    return found


def text(entry: Shipped) -> str:
    """The file's text: indented JSON, as the codec writes."""
    return json.dumps(generate(entry), indent=2, ensure_ascii=False) + "\n"


def folder() -> Path:
    return Path(__file__).resolve().parent.parent / "schemas"


def main() -> None:
    """Write every shipped schema from the types."""
    for entry in shipped():
        (folder() / entry.file).write_text(text(entry), encoding="utf-8")
        print(f"wrote {folder() / entry.file}")


if __name__ == "__main__":
    main()
