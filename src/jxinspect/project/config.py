"""The lint configuration: ``jxinspect.yaml`` or ``[tool.jxinspect]`` in ``pyproject.toml``.

Both hold one schema::

    defaults: {devices: 8, mesh: "data=8", partitioner: shardy, platform: cpu}
    paths: [src/models]          # folders searched for modules that declare JXINSPECT
    exclude: ["*/legacy/*"]      # glob patterns of files to leave out of that search
    select: [JX1, JX2]           # code prefixes to run (default: every rule)
    ignore: [JX105]
    severity: {JX102: error}     # per code or prefix
    budgets: {replicated_bytes: 4MiB, bytes_per_device: 16GiB}
    compile: false               # also compile (XLA's shardings, aliasing and memory)
    baseline: jxinspect-baseline.json
    fail_on: error
    timeout: 300                 # seconds one target may take to stage (0: no limit)
    cache: true                  # reuse reports of unchanged targets (.jxinspect_cache/)
    keep_workers: false          # true, or idle seconds: workers wait for the next run
    targets:
      - target: models/mlp.py:predict       # same keys as the CLI flags and JXINSPECT
        args: "{w: f32[784,512]}, f32[32,784]"
        ignore: [JX105]                     # per-target select/ignore/severity/budgets/compile

Everything is checked when read: an unknown key, a wrong type or a bad value is a
:class:`~jxinspect.core.errors.UsageError` naming the file, the line, the key and the nearest
valid key. YAML is read as ``yaml.safe_load`` reads it (the same types and tags), by a
loader that first composes the nodes (their line numbers) and refuses, before anything is
expanded, a document nested too deeply, aliases that stand for too many values ("billion
laughs") and an alias inside the collection it names; each is one error naming the line.
TOML cannot alias, but its nesting is bounded the same way. Imports no JAX.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.model import Severity
from jxinspect.core.settings import BUDGET_KEYS, DEFAULT_SETTINGS, Settings, parse_bytes
from jxinspect.core.vocabulary import FAIL_ON, SEVERITIES, FailOn
from jxinspect.project import spec as specs
from jxinspect.project.options import (
    DEFAULT_KEYS,
    OPTION_NAMES,
    OPTIONS_BY_NAME,
    TargetOptions,
    nearest,
    options_from_mapping,
)
from jxinspect.project.sourcefile import undecodable
from jxinspect.project.targets import parse_target
from jxinspect.rules import RULES

_Choice = TypeVar("_Choice", bound=str)
"""One of a closed set of words (a ``Literal`` of :mod:`jxinspect.core.vocabulary`)."""

YAML_NAMES = ("jxinspect.yaml", "jxinspect.yml")
PYPROJECT = "pyproject.toml"
POLICY_KEYS = ("select", "ignore", "severity", "budgets", "compile")
TOP_KEYS = (
    "defaults", "targets", "paths", "exclude", "baseline", "fail_on", "timeout", "cache",
    "keep_workers", *POLICY_KEYS,
)  # fmt: skip
ENTRY_KEYS = ("target", *POLICY_KEYS, *OPTION_NAMES)

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Policy:
    """Which rules run on a target, how severe their findings are, their thresholds."""

    select: tuple[str, ...] | None = None
    """Code prefixes to run; ``None``: every rule."""
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    """(code prefix, severity) pairs; the longest matching prefix wins."""
    settings: Settings = DEFAULT_SETTINGS
    compile: bool = False

    def enabled(self, code: str) -> bool:
        selected = self.select is None or any(code.startswith(p) for p in self.select)
        return selected and not any(code.startswith(p) for p in self.ignore)

    def severity_of(self, code: str, default: Severity) -> Severity:
        matches = [(len(prefix), sev) for prefix, sev in self.severity if code.startswith(prefix)]
        return max(matches)[1] if matches else default


@dataclass(frozen=True)
class PolicyOverride:
    """A target's own ``select``/``ignore``/``severity``/``budgets``/``compile``.

    ``select`` replaces the global one; the others add to or override it."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    budgets: tuple[tuple[str, int | None], ...] = ()
    compile: bool | None = None

    def apply(self, base: Policy) -> Policy:
        return Policy(
            select=self.select if self.select is not None else base.select,
            ignore=base.ignore + self.ignore,
            severity=tuple(dict((*base.severity, *self.severity)).items()),
            settings=replace(base.settings, **cast(dict[str, Any], dict(self.budgets))),
            compile=self.compile if self.compile is not None else base.compile,
        )


def declared_override(data: dict[str, Any], where: str) -> tuple[dict[str, Any], PolicyOverride]:
    """A ``JXINSPECT`` entry split into its staging options and its per-target keys
    (``select``, ``ignore``, ``severity``, ``budgets``, ``compile``), which a declaration
    takes as a configuration's target entry does; the latter read and checked."""
    if not isinstance(data, dict):
        return data, PolicyOverride()
    policy = {k: v for k, v in data.items() if str(k).replace("-", "_") in POLICY_KEYS}
    options = {k: v for k, v in data.items() if k not in policy}
    if not policy:
        return options, PolicyOverride()
    reader = _Reader(where, {}, Path("."))
    return options, reader.override({str(k).replace("-", "_"): v for k, v in policy.items()}, ())


@dataclass(frozen=True)
class TargetEntry:
    """One item of ``targets:``."""

    target: str
    """As written; a file path is relative to the configuration's folder."""
    options: TargetOptions
    override: PolicyOverride
    line: int | None = None


@dataclass(frozen=True)
class Config:
    """A read configuration; paths in it are relative to ``root``."""

    path: Path | None
    root: Path
    defaults: TargetOptions = field(default_factory=TargetOptions)
    targets: tuple[TargetEntry, ...] = ()
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    policy: Policy = field(default_factory=Policy)
    baseline: str | None = None
    fail_on: FailOn | None = None
    timeout: float | None = None
    """Seconds one target may take to stage (0: no limit); ``None``: not configured."""
    cache: bool = True
    """Reuse the reports of targets whose inputs did not change (``.jxinspect_cache/``)."""
    keep_workers: bool | float = False
    """Keep the workers for the next run: ``True`` (for the default idle time) or the
    seconds they wait."""


def find_config(start: Path) -> Path | None:
    """``jxinspect.yaml``, or a ``pyproject.toml`` with ``[tool.jxinspect]``, in ``start``
    or the nearest folder above it (stopping at a repository root)."""
    for folder in (start, *start.parents):
        for name in YAML_NAMES:
            if (folder / name).is_file():
                return folder / name
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and re.search(
            r"^\s*\[+\s*tool\.jxinspect\b",
            pyproject.read_text(encoding="utf-8", errors="replace"),
            re.MULTILINE,
        ):
            return pyproject
        if (folder / ".git").exists():
            return None
    return None


def shown(path: Path) -> str:
    """``path`` relative to the working folder where it lies inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def project_config(path: Path | None = None) -> Config:
    """The configuration at ``path``, or the ``jxinspect.yaml`` / ``[tool.jxinspect]``
    found from the working folder, or an empty one rooted there."""
    if path is not None and not path.is_file():
        raise UsageError(f"no such configuration file: {path}")
    found = path or find_config(Path.cwd())
    return load_config(found) if found is not None else Config(None, Path.cwd().resolve())


def load_config(path: Path) -> Config:
    """Read and validate a configuration file."""
    name = shown(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UsageError(f"cannot read {name}: {err.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line, byte = undecodable(data, err)
        raise UsageError(
            f"{name}:{line}: not UTF-8 text (byte {byte}); save the configuration as UTF-8"
        ) from None
    if path.name == PYPROJECT or path.suffix == ".toml":
        data, lines = _read_toml(text, name)
    else:
        data, lines = _read_yaml(text, name)
    return _Reader(name, lines, path.resolve().parent).config(data, path)


# ---- reading ----------------------------------------------------------------------------


MAX_DEPTH = 64
"""The deepest a configuration may nest (the schema itself needs four levels)."""
MAX_VALUES = 100_000
"""The most values a configuration may hold, every alias counted as the values it stands for."""


def _read_yaml(text: str, name: str) -> tuple[Any, dict[KeyPath, int]]:
    import yaml

    loader = _bounded_loader()(text)
    lines: dict[KeyPath, int] = {}
    try:
        node = loader.get_single_node()  # composed once: aliases checked before expansion
        if node is not None:  # lines first: constructing merges `<<` keys into the nodes
            _yaml_lines(node, (), lines, name)
        data = loader.construct_document(node) if node is not None else None
    except _Refused as err:
        raise UsageError(f"{name}:{err.mark.line + 1}: {err.message}") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        column = f" (column {mark.column + 1})" if mark is not None else ""
        problem = err.problem or err.context or "unreadable YAML"
        context = ""
        if err.context and err.problem and err.context_mark is not None:
            context = f", {err.context} started on line {err.context_mark.line + 1}"
        raise UsageError(f"{where}: YAML syntax error: {problem}{column}{context}") from None
    except yaml.YAMLError as err:
        raise UsageError(f"{name}: YAML error: {err}") from None
    finally:
        loader.dispose()
    return data, lines


class _Refused(Exception):
    """A YAML document refused before it is built: too deep, too big once its aliases
    are expanded, or an alias inside the collection it names."""

    def __init__(self, mark: Any, message: str) -> None:
        super().__init__(message)
        self.mark, self.message = mark, message


@functools.cache
def _bounded_loader() -> type[Any]:
    """``yaml.SafeLoader`` (the same types, tags and merge keys as ``yaml.safe_load``)
    whose composer refuses, before anything is expanded, a document nested deeper than
    :data:`MAX_DEPTH`, one whose aliases stand for more than :data:`MAX_VALUES` values
    ("billion laughs"), and an alias that refers to a collection that holds it."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # yaml has no stubs here
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = 0
            self.open_anchors: set[str] = set()
            self.sizes: dict[int, int] = {}
            """id(node) → values it stands for, its aliases expanded."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                if event.anchor in self.open_anchors:
                    raise _Refused(
                        event.start_mark,
                        f"the alias *{event.anchor} refers to the collection &{event.anchor} "
                        "that contains it; a configuration cannot contain itself "
                        "(write the values out)",
                    )
                return super().compose_node(parent, index)
            if self.depth >= MAX_DEPTH:
                raise _Refused(
                    event.start_mark,
                    f"nested more than {MAX_DEPTH} levels deep; a configuration needs a few",
                )
            anchor = event.anchor
            collection = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
            if anchor is not None and collection:
                self.open_anchors.add(anchor)
            self.depth += 1
            try:
                node = super().compose_node(parent, index)
            finally:
                self.depth -= 1
                self.open_anchors.discard(anchor)
            size = 1
            if isinstance(node, yaml.SequenceNode):
                size += sum(self.sizes[id(item)] for item in node.value)
            elif isinstance(node, yaml.MappingNode):
                size += sum(self.sizes[id(k)] + self.sizes[id(v)] for k, v in node.value)
            if size > MAX_VALUES:
                raise _Refused(
                    event.start_mark,
                    f"this value's aliases expand to more than {MAX_VALUES:,} values; "
                    "write the values out or use fewer aliases",
                )
            self.sizes[id(node)] = size
            return node

    return BoundedLoader


def _yaml_lines(node: Any, path: KeyPath, lines: dict[KeyPath, int], name: str) -> None:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if path + (key,) in lines:
                dotted = _dotted(path + (key,))
                raise UsageError(
                    f"{name}:{line}: {dotted}: duplicate key (first on line {lines[path + (key,)]})"
                )
            lines[path + (key,)] = line
            _yaml_lines(value_node, path + (key,), lines, name)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            _yaml_lines(item, path + (index,), lines, name)


def _read_toml(text: str, name: str) -> tuple[Any, dict[KeyPath, int]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    deep = _too_deep_line(text)
    if deep is not None:
        raise UsageError(
            f"{name}:{deep}: nested more than {MAX_DEPTH} levels deep; a configuration needs a few"
        )
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{name}: TOML syntax error: {err}") from None
    except RecursionError:  # pragma: no cover - _too_deep_line finds it first
        raise UsageError(f"{name}: nested too deeply to read") from None
    tool = document.get("tool", {})
    if not isinstance(tool, dict) or "jxinspect" not in tool:
        raise UsageError(f"{name}: no [tool.jxinspect] table; add one or use jxinspect.yaml")
    return tool["jxinspect"], _toml_lines(text)


def _too_deep_line(text: str) -> int | None:
    """The first line where TOML arrays and inline tables nest deeper than
    :data:`MAX_DEPTH` (brackets in strings and comments do not count), before a parser
    recurses into them."""
    depth, quote, line = 0, "", 1
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if char == "\n":
            line += 1
            if quote in ('"', "'"):
                quote = ""  # a one-line string ends with its line (or is a syntax error)
        elif quote:
            if text.startswith(quote, index):
                index += len(quote)
                quote = ""
                continue
            if char == "\\" and quote[0] == '"':
                index += 1
        elif char == "#":
            newline = text.find("\n", index)
            index = end if newline < 0 else newline
            continue
        elif char in "\"'":
            quote = char * 3 if text.startswith(char * 3, index) else char
            index += len(quote)
            continue
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif char in "]}":
            depth = max(depth - 1, 0)
        index += 1
    return None


def _toml_lines(text: str) -> dict[KeyPath, int]:
    """Best-effort line numbers of ``[tool.jxinspect]`` keys (tables, arrays of tables and
    ``key = value`` lines; keys inside inline tables get their table's line)."""
    lines: dict[KeyPath, int] = {}
    table: KeyPath = ()
    arrays: dict[KeyPath, int] = {}

    def split(dotted: str) -> KeyPath:
        return tuple(part.strip().strip("\"'") for part in dotted.split("."))

    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped.startswith("[["):
            name = split(stripped[2 : stripped.find("]]")])
            arrays[name] = arrays.get(name, -1) + 1
            table = name + (arrays[name],)
        elif stripped.startswith("["):
            table = split(stripped[1 : stripped.find("]")])
        elif "=" in stripped and not stripped.startswith("#"):
            key = split(stripped.split("=", 1)[0])
            lines.setdefault(table[2:] + key, number)
            continue
        else:
            continue
        if table[:2] == ("tool", "jxinspect"):
            lines.setdefault(table[2:], number)
            if len(table) > 3 and isinstance(table[-1], int):
                lines.setdefault(table[2:-1], number)
    return lines


def _dotted(path: KeyPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "<top level>"


# ---- validating -------------------------------------------------------------------------


class _Reader:
    """Validates plain data against the schema, naming file, line and key in each error."""

    def __init__(self, name: str, lines: dict[KeyPath, int], root: Path) -> None:
        self.name, self.lines, self.root = name, lines, root
        self.codes = tuple(rule.code for rule in RULES)

    def where(self, path: KeyPath) -> str:
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return f"{self.name}:{self.lines[path[:end]]}"
        return self.name

    def fail(self, path: KeyPath, message: str) -> NoReturn:
        raise UsageError(f"{self.where(path)}: {_dotted(path)}: {message}")

    def keys(self, data: dict[Any, Any], path: KeyPath, allowed: tuple[str, ...]) -> None:
        for key in data:
            if str(key).replace("-", "_") not in allowed:
                self.fail(path + (str(key),), f"unknown key{nearest(str(key), allowed)}")

    def mapping(self, value: Any, path: KeyPath) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, f"must be a mapping, got {_kind(value)}")
        result = {}
        for raw, item in value.items():
            key = str(raw).replace("-", "_")
            if key != str(raw) and path + (str(raw),) in self.lines:
                self.lines[path + (key,)] = self.lines[path + (str(raw),)]
            result[key] = item
        return result

    def strings(self, value: Any, path: KeyPath) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            self.fail(path, f"must be a string or a list of strings, got {_kind(value)}")
        return tuple(items)

    def string(self, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str):
            self.fail(path, f"must be a string, got {_kind(value)}")
        return value

    def boolean(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"must be true or false, got {_kind(value)}")
        return value

    def choice(self, value: Any, path: KeyPath, choices: tuple[_Choice, ...]) -> _Choice:
        if not isinstance(value, str) or value not in choices:
            hint = nearest(value, choices) if isinstance(value, str) else ""
            self.fail(path, f"must be one of {', '.join(choices)}, got {value!r}{hint}")
        return value

    def code_prefixes(self, value: Any, path: KeyPath) -> tuple[str, ...]:
        items = self.strings(value, path)
        for index, item in enumerate(items):
            self.code_prefix(item, path + (index,) if not isinstance(value, str) else path)
        return tuple(item.upper() for item in items)

    def code_prefix(self, item: str, path: KeyPath) -> None:
        code = item.upper()
        if not re.fullmatch(r"JX\d{0,3}", code) or not any(c.startswith(code) for c in self.codes):
            self.fail(
                path,
                f"unknown code `{item}`{nearest(code, self.codes)}; known: {', '.join(self.codes)}",
            )

    def options(self, data: dict[str, Any], path: KeyPath) -> TargetOptions:
        """Target options, each key checked on its own line, spec strings parsed."""
        for key, value in data.items():
            read = options_from_mapping(
                {key: value}, f"{self.where(path + (key,))}: {_dotted(path)}"
            )
            parse = OPTIONS_BY_NAME[key].parse
            if parse is not None:
                try:
                    parse(getattr(read, key.replace("-", "_")))  # as read: dims may be a mapping
                except specs.SpecError as err:
                    self.fail(path + (key,), str(err))
        return options_from_mapping(data, self.where(path))

    def override(self, data: dict[str, Any], path: KeyPath) -> PolicyOverride:
        select = data.get("select")
        budgets = self.budgets(data.get("budgets"), path + ("budgets",))
        return PolicyOverride(
            select=self.code_prefixes(select, path + ("select",)) if select is not None else None,
            ignore=self.code_prefixes(data.get("ignore", []), path + ("ignore",)),
            severity=self.severities(data.get("severity"), path + ("severity",)),
            budgets=tuple(budgets.items()),
            compile=self.boolean(data["compile"], path + ("compile",))
            if "compile" in data
            else None,
        )

    def severities(self, value: Any, path: KeyPath) -> tuple[tuple[str, Severity], ...]:
        result = []
        for code, severity in self.mapping(value, path).items():
            self.code_prefix(code, path + (code,))
            chosen = self.choice(severity, path + (code,), SEVERITIES)
            result.append((code.upper(), chosen))
        return tuple(result)

    def budgets(self, value: Any, path: KeyPath) -> dict[str, int | None]:
        data = self.mapping(value, path)
        self.keys(data, path, BUDGET_KEYS)
        result: dict[str, int | None] = {}
        for key, size in data.items():
            if size is None and key == "bytes_per_device":
                result[key] = None
                continue
            try:
                result[key] = parse_bytes(size)
            except ValueError as err:
                self.fail(path + (key,), f"{err}, got {size!r}")
        return result

    def target(self, value: Any, index: int) -> TargetEntry:
        path: KeyPath = ("targets", index)
        data = self.mapping(value, path)
        self.keys(data, path, ENTRY_KEYS)
        if "target" not in data:
            self.fail(path, "missing `target` (e.g. target: models/mlp.py:predict)")
        text = self.string(data["target"], path + ("target",))
        try:
            target = parse_target(text)
        except UsageError as err:
            self.fail(path + ("target",), str(err))
        if target.is_file and not (self.root / target.module).is_file():
            self.fail(
                path + ("target",),
                str(no_such_file(target.module, f"the folder of {self.name}")),
            )
        options = {k: v for k, v in data.items() if k in OPTION_NAMES}
        return TargetEntry(
            target=text,
            options=self.options(options, path),
            override=self.override(data, path),
            line=self.lines.get(path),
        )

    def config(self, data: Any, path: Path) -> Config:
        top = self.mapping(data, ())
        self.keys(top, (), TOP_KEYS)
        defaults = self.mapping(top.get("defaults"), ("defaults",))
        self.keys(defaults, ("defaults",), DEFAULT_KEYS)
        targets = top.get("targets", [])
        if not isinstance(targets, list):
            self.fail(("targets",), f"must be a list of mappings, got {_kind(targets)}")
        base = self.override(top, ())
        policy = base.apply(Policy())
        fail_on = top.get("fail_on")
        baseline = top.get("baseline")
        timeout = top.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0
        ):
            self.fail(("timeout",), f"must be seconds (0 for no limit), got {_kind(timeout)}")
        keep = top.get("keep_workers", False)
        if not isinstance(keep, (bool, int, float)) or (not isinstance(keep, bool) and keep <= 0):
            self.fail(("keep_workers",), f"must be true, false or idle seconds, got {_kind(keep)}")
        return Config(
            path=path,
            root=self.root,
            defaults=self.options(defaults, ("defaults",)),
            targets=tuple(self.target(item, i) for i, item in enumerate(targets)),
            paths=self.strings(top.get("paths", []), ("paths",)),
            exclude=self.strings(top.get("exclude", []), ("exclude",)),
            policy=policy,
            baseline=self.string(baseline, ("baseline",)) if baseline is not None else None,
            fail_on=self.choice(fail_on, ("fail_on",), FAIL_ON) if fail_on is not None else None,
            timeout=float(timeout) if timeout is not None else None,
            cache=self.boolean(top.get("cache", True), ("cache",)),
            keep_workers=keep if isinstance(keep, bool) else float(keep),
        )


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (str, int, float, bool)):
        return f"{type(value).__name__} {value!r}"
    return {"dict": "a mapping", "list": "a list"}.get(type(value).__name__, type(value).__name__)
