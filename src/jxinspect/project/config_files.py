"""Reading a configuration file into plain data, and where each key stands in it.

YAML is read as ``yaml.safe_load`` reads it (the same types and tags), by a loader that
first composes the nodes, whose marks give each key's line, and refuses, before anything
is expanded, a document nested too deeply, aliases that stand for too many values
("billion laughs") and an alias inside the collection it names; each is one error naming
the line. TOML is read by ``tomllib``, which keeps no positions: its errors name the key
path from ``tool.jxinspect`` instead of a line. TOML cannot alias; its nesting is bounded
the same way, and a document too deep for ``tomllib`` to read is one error too.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import Any

from jxinspect.core.errors import UsageError

KeyPath = tuple[str | int, ...]
"""Keys and list positions from the top of the configuration."""

MAX_DEPTH = 64
"""The deepest a configuration may nest (the schema itself needs four levels)."""
MAX_VALUES = 100_000
"""The most values a configuration may hold, every alias counted as the values it stands for."""
_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep; a configuration needs a few"
TOML_TABLE: KeyPath = ("tool", "jxinspect")
"""Where ``pyproject.toml`` holds the configuration."""


@dataclass
class Located:
    """A configuration's plain data and what its errors say of where a key stands."""

    name: str
    """The file, as errors name it."""
    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)
    """Each key's (and list item's) line, where the parser kept it (YAML)."""
    prefix: KeyPath = ()
    """Where the configuration lies in the file (``tool.jxinspect`` in TOML)."""

    def where(self, path: KeyPath) -> str:
        """``file:line`` of ``path``, or of the nearest key above it that has a line."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return f"{self.name}:{self.lines[path[:end]]}"
        return self.name

    def dotted(self, path: KeyPath) -> str:
        """``targets[0].static_argnums`` (in TOML, from ``tool.jxinspect``)."""
        return dotted(self.prefix + path)


def dotted(path: KeyPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "<top level>"


# ---- YAML --------------------------------------------------------------------------------


def read_yaml(text: str, name: str) -> Located:
    """The document and its keys' lines, or one error naming the line."""
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
        raise UsageError(_yaml_syntax_error(err, name)) from None
    except yaml.YAMLError as err:
        raise UsageError(f"{name}: YAML error: {err}") from None
    finally:
        loader.dispose()
    return Located(name, data, lines)


def _yaml_syntax_error(err: Any, name: str) -> str:
    mark = err.problem_mark or err.context_mark
    where = f"{name}:{mark.line + 1}" if mark is not None else name
    column = f" (column {mark.column + 1})" if mark is not None else ""
    problem = err.problem or err.context or "unreadable YAML"
    context = ""
    if err.context and err.problem and err.context_mark is not None:
        context = f", {err.context} started on line {err.context_mark.line + 1}"
    return f"{where}: YAML syntax error: {problem}{column}{context}"


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
                raise _Refused(event.start_mark, _TOO_DEEP)
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
            self.sizes[id(node)] = self.size(node, event.start_mark)
            return node

        def size(self, node: Any, mark: Any) -> int:
            size = 1
            if isinstance(node, yaml.SequenceNode):
                size += sum(self.sizes[id(item)] for item in node.value)
            elif isinstance(node, yaml.MappingNode):
                size += sum(self.sizes[id(k)] + self.sizes[id(v)] for k, v in node.value)
            if size > MAX_VALUES:
                raise _Refused(
                    mark,
                    f"this value's aliases expand to more than {MAX_VALUES:,} values; "
                    "write the values out or use fewer aliases",
                )
            return size

    return BoundedLoader


def _yaml_lines(node: Any, path: KeyPath, lines: dict[KeyPath, int], name: str) -> None:
    """Each key's and list item's line, from the composed nodes' marks; a key given twice
    in one mapping is an error naming both lines."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = path + (str(key_node.value),)
            line = key_node.start_mark.line + 1
            if key in lines:
                raise UsageError(
                    f"{name}:{line}: {dotted(key)}: duplicate key (first on line {lines[key]})"
                )
            lines[key] = line
            _yaml_lines(value_node, key, lines, name)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            _yaml_lines(item, path + (index,), lines, name)


# ---- TOML --------------------------------------------------------------------------------


def read_toml(text: str, name: str) -> Located:
    """``[tool.jxinspect]`` of a TOML document, or one error naming the key path."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise UsageError(f"{name}: TOML syntax error: {err}") from None
    except RecursionError:  # arrays or inline tables nested hundreds of levels deep
        raise UsageError(f"{name}: {_TOO_DEEP}") from None
    tool = document.get("tool", {})
    if not isinstance(tool, dict) or "jxinspect" not in tool:
        raise UsageError(f"{name}: no [tool.jxinspect] table; add one or use jxinspect.yaml")
    located = Located(name, tool["jxinspect"], prefix=TOML_TABLE)
    deep = _too_deep(located.data, ())
    if deep is not None:
        raise UsageError(f"{name}: {located.dotted(deep)}: {_TOO_DEEP}")
    return located


def _too_deep(value: Any, path: KeyPath) -> KeyPath | None:
    """The first value nested more than :data:`MAX_DEPTH` levels deep."""
    items: list[tuple[str | int, Any]]
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return None
    if len(path) >= MAX_DEPTH:
        return path
    for key, item in items:
        deep = _too_deep(item, path + (key,))
        if deep is not None:
            return deep
    return None
