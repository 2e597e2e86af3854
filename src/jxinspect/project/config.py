"""The lint configuration: ``jxinspect.yaml`` or ``[tool.jxinspect]`` in ``pyproject.toml``.

Both hold one schema, declared once as typed fields: :class:`Config`'s are the top-level
keys, :class:`TargetEntry`'s an item of ``targets:`` (which also takes every staging
option of :data:`~jxinspect.project.options.OPTIONS`), and :class:`PolicyOverride`'s the
keys both take (``select``, ``ignore``, ``severity``, ``budgets``, ``compile``, ``why``).
A key's type says how it is written and which reader checks it (:data:`_READERS`), its
Python default what holds where it is not given, and its ``msgspec.Meta`` its help and an
example. The table of keys (:data:`CONFIG_KEYS`), the reader's errors and the README's
configuration reference (:func:`config_reference`) derive from them.

Everything is checked when read: an unknown key, a wrong type or a bad value is a
:class:`~jxinspect.core.errors.UsageError` naming the file, the line (YAML) or the key
path (TOML), the key and the nearest valid key. How the files are parsed, and how hostile
ones are bounded: :mod:`jxinspect.project.config_files`. Imports no JAX.
"""

from __future__ import annotations

import os
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import Field, dataclass, field, fields, replace
from itertools import groupby
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn, TypeVar, Union, cast, get_args, get_origin
from typing import get_type_hints as type_hints

from msgspec import Meta

from jxinspect.core import artifacts
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.model import Finding, Severity
from jxinspect.core.settings import (
    BUDGET_KEYS,
    DEFAULT_SETTINGS,
    JUDGED_BY,
    BudgetValue,
    Settings,
    parse_budget,
)
from jxinspect.core.vocabulary import FAIL_ON, SEVERITIES, FailOn
from jxinspect.project import spec as specs
from jxinspect.project.config_files import KeyPath, Located, read_toml, read_yaml
from jxinspect.project.config_search import PYPROJECT, refusal, search_config, shown, unsafe
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

F = TypeVar("F", bound=Finding)


DEFAULT_FAIL_ON: FailOn = "error"
"""The severity that fails a run where neither its command line nor ``fail_on:`` says:
``lint``'s, and the compile budget's of ``record --max-compiles`` and
``jxinspect.testing.assert_max_compiles``."""

# ---- how a key is written: a type each, read by its reader (_READERS) ----------------------
# Besides these: ``str`` (one string), ``bool``, and a ``Literal`` (one of its members).

Strings = Annotated[tuple[str, ...], Meta(description="a string or a list of strings")]
CodePrefixes = Annotated[tuple[str, ...], Meta(description="rule code prefixes (JX1, JX201)")]
Severities = Annotated[
    tuple[tuple[str, Severity], ...],
    Meta(description="code prefixes and their severities; the longest matching prefix wins"),
]
Budgets = Annotated[
    tuple[tuple[str, BudgetValue], ...],
    Meta(description="budget names and their values, as core.settings reads them"),
]
Seconds = Annotated[float, Meta(description="seconds, at least 0 (0: no limit)")]
IdleSeconds = Annotated[bool | float, Meta(description="true, false or idle seconds (over 0)")]
TargetText = Annotated[str, Meta(description="a file (its declared functions) or a function")]
Defaults = Annotated[TargetOptions, Meta(description="staging options every target starts from")]

Place = Literal["top", "entry"]
"""Where a key may stand: the top level, or an item of ``targets:`` (and a module's
``JXINSPECT`` entry, which takes an entry's keys but ``target``)."""
Choice = TypeVar("Choice", bound=str)
"""A member of a closed set a key's value is checked against (a severity, a choice)."""


def _key(help: str, example: str, default: str = "") -> Meta:
    """A key's declaration, beside its type: what it is for (the README's comment), a
    value as the README's example writes it, and what holds where it is not given, in
    words, where its Python default does not say (``None``: the run decides)."""
    return Meta(description=help, examples=[example], extra={"default": default})


def _budgets_help() -> str:
    """Every budget of :class:`~jxinspect.core.settings.Settings`, by what judges by it."""
    judged = groupby(BUDGET_KEYS, key=JUDGED_BY.__getitem__)
    named = (f"{', '.join(names)} ({by.replace('``', '')})" for by, names in judged)
    return "thresholds: " + ", ".join(named)


# ---- the keys ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """Which rules run on a target, how severe their findings are, their thresholds:
    the policy keys (:class:`PolicyOverride`) of the top level over the defaults, and a
    target's over those."""

    select: tuple[str, ...] | None = None
    """Code prefixes to run; ``None``: every rule."""
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    """(code prefix, severity) pairs; the longest matching prefix wins."""
    settings: Settings = DEFAULT_SETTINGS
    compile: bool = False
    why: bool = False
    """Also the partitioner's record of where each sharding came from (compiled, with a
    second compile in a child: ``lower --why``)."""

    def enabled(self, code: str) -> bool:
        selected = self.select is None or any(code.startswith(p) for p in self.select)
        return selected and not any(code.startswith(p) for p in self.ignore)

    def severity_of(self, code: str, default: Severity) -> Severity:
        matches = [(len(prefix), sev) for prefix, sev in self.severity if code.startswith(prefix)]
        return max(matches)[1] if matches else default

    def apply(self, findings: Iterable[F]) -> tuple[F, ...]:
        """The findings of the rules it runs, each with the severity it gives them: once,
        where a report is judged (``pipeline.judge``) after every rule ran."""
        return tuple(
            replace(f, severity=self.severity_of(f.code, f.severity))
            for f in findings
            if self.enabled(f.code)
        )


@dataclass(frozen=True)
class PolicyOverride:
    """The policy keys, which the top level, a target entry and a ``JXINSPECT`` entry
    take: as one level gives them (``None``: not given). ``select`` replaces the level's
    below; the others add to or override it."""

    select: Annotated[
        CodePrefixes | None, _key("code prefixes to run", "[JX1, JX2, JX3]", "every rule")
    ] = None
    ignore: Annotated[CodePrefixes, _key("code prefixes not to run", "[JX110]")] = ()
    severity: Annotated[
        Severities, _key("per code or prefix: " + ", ".join(SEVERITIES), "{JX201: error}")
    ] = ()
    budgets: Annotated[
        Budgets,
        _key(
            _budgets_help(),
            "{replicated_bytes: 4MiB, bytes_per_device: 16GiB, max_compiles: 2, "
            "forbid_collectives: [all-to-all]}",
        ),
    ] = ()
    compile: Annotated[
        bool | None, _key("also compile (XLA's shardings, aliasing, memory)", "true", "false")
    ] = None
    why: Annotated[
        bool | None,
        _key(
            "also read where each sharding came from (Shardy's record, a second compile in a "
            "child; JX204)",
            "true",
            "false",
        ),
    ] = None

    def apply(self, base: Policy) -> Policy:
        return Policy(
            select=self.select if self.select is not None else base.select,
            ignore=base.ignore + self.ignore,
            severity=tuple(dict((*base.severity, *self.severity)).items()),
            settings=replace(base.settings, **cast(dict[str, Any], dict(self.budgets))),
            compile=self.compile if self.compile is not None else base.compile,
            why=self.why if self.why is not None else base.why,
        )


POLICY_KEYS: tuple[str, ...] = tuple(f.name for f in fields(PolicyOverride))
"""The keys both levels take: which rules run on a target, their severities, budgets."""


def declared_override(data: dict[str, Any], where: str) -> tuple[dict[str, Any], PolicyOverride]:
    """A ``JXINSPECT`` entry split into its staging options and its per-target keys
    (``select``, ``ignore``, ``severity``, ``budgets``, ``compile``, ``why``), which a declaration
    takes as a configuration's target entry does; the latter read and checked."""
    if not isinstance(data, dict):
        return data, PolicyOverride()
    policy = {k: v for k, v in data.items() if str(k).replace("-", "_") in POLICY_KEYS}
    options = {k: v for k, v in data.items() if k not in policy}
    if not policy:
        return options, PolicyOverride()
    reader = _ConfigReader(Located(where, None), Path("."))
    read = reader.values({str(k).replace("-", "_"): v for k, v in policy.items()}, (), "entry")
    return options, PolicyOverride(**read)


@dataclass(frozen=True)
class TargetEntry:
    """One item of ``targets:``: its own key ``target``, staging options and policy keys
    (the latter two's ``Meta``: the README's example of them)."""

    target: Annotated[
        TargetText, _key("a file (every function it declares) or a function", "models/mlp.py:loss")
    ]
    """As written; a file path is relative to the configuration's folder."""
    options: Annotated[
        TargetOptions,
        Meta(
            description="any staging option (see the flags)",
            examples=[{"args": '"{w: f32[784,512]}, f32[32,784], i32[32]"'}],
        ),
    ]
    override: Annotated[
        PolicyOverride,
        Meta(description="and its own " + ", ".join(POLICY_KEYS), examples=[{"ignore": "[JX105]"}]),
    ]
    line: int | None = None
    """Its line in a YAML file (``tomllib`` keeps none)."""


@dataclass(frozen=True)
class Config:
    """A read configuration; paths in it are relative to ``root``. A field a top-level
    key, but ``path``, ``root`` and ``refused``; ``policy`` holds the policy keys'
    (:class:`PolicyOverride`) over the defaults."""

    path: Path | None
    root: Path
    refused: str | None = None
    """A configuration the search found and did not use (another user could have written
    it), in one line: what, why, how to fix."""
    defaults: Annotated[Defaults, _key(", ".join(DEFAULT_KEYS), "{devices: 8}")] = field(
        default_factory=TargetOptions
    )
    paths: Annotated[
        Strings, _key("modules here that declare JXINSPECT are targets too", "[models]")
    ] = ()
    exclude: Annotated[
        Strings,
        _key("glob patterns of files to leave out of that search", '["models/experimental/*"]'),
    ] = ()
    policy: Policy = field(default_factory=Policy)
    baseline: Annotated[
        str | None, _key("the accepted findings", "ci/baseline.json", "jxinspect-baseline.json")
    ] = None
    fail_on: Annotated[
        FailOn | None,
        _key("the severity that fails the run: " + ", ".join(FAIL_ON), "warning", DEFAULT_FAIL_ON),
    ] = None
    timeout: Annotated[
        Seconds | None,
        _key("seconds one target may take to stage (0: no limit)", "600", "300"),
    ] = None
    """``None``: not configured."""
    cache: Annotated[
        bool, _key("reuse the reports of unchanged targets (.jxinspect_cache/)", "false")
    ] = True
    """Reuse the reports of targets whose inputs did not change (``.jxinspect_cache/``)."""
    keep_workers: Annotated[
        IdleSeconds, _key("true, or idle seconds: workers wait for the next run", "600")
    ] = False
    """Keep the workers for the next run: ``True`` (for the default idle time) or the
    seconds they wait."""
    targets: Annotated[
        tuple[TargetEntry, ...], _key("each entry: a target, its options and its own policy", "")
    ] = ()
    """Its example: its entry's fields' (:func:`config_reference`)."""


# ---- the table of keys, from the declarations -----------------------------------------------


@dataclass(frozen=True)
class ConfigKey:
    """One configuration key, as its declaration gives it."""

    name: str
    kind: Any
    """Its type, ``None`` dropped: how it is written, and which reader checks it."""
    help: str
    """What it is for (the README's comment)."""
    example: str
    """A value, as the README's example writes it."""
    default: str = ""
    """What holds where it is not given, in words (empty: nothing)."""
    places: tuple[Place, ...] = ("top",)


_POLICY_GROUP = (Policy, PolicyOverride)
"""A field of these types stands for the policy keys (as ``TargetOptions`` does for the
staging options): a group of keys, not one."""
_GROUPS = (*_POLICY_GROUP, TargetOptions)


def _declared(hint: Any) -> tuple[Any, Meta | None]:
    """A field's type (``Annotated[type, Meta(...)]``), ``None`` dropped (it stands for
    "not given"), and its key's ``Meta`` (the last metadata), if it has one."""
    meta = None
    if get_origin(hint) is Annotated and isinstance(hint.__metadata__[-1], Meta):
        *kept, meta = hint.__metadata__
        hint = cast(Any, Annotated)[(hint.__origin__, *kept)] if kept else hint.__origin__
    if get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint):
        others = tuple(arg for arg in get_args(hint) if arg is not type(None))
        hint = others[0] if len(others) == 1 else cast(Any, Union)[others]
    return hint, meta


def _keys_of(cls: type, place: Place) -> list[ConfigKey]:
    """The keys ``cls``'s fields declare, the policy keys where a field stands for them."""
    hints = type_hints(cls, include_extras=True)
    keys: list[ConfigKey] = []
    for each in fields(cls):
        kind, meta = _declared(hints[each.name])
        if kind in _POLICY_GROUP:
            keys += _keys_of(PolicyOverride, place)
        elif meta is not None and kind not in _GROUPS:
            example = str(meta.examples[0]) if meta.examples else ""
            keys.append(ConfigKey(each.name, kind, meta.description or "", example,
                                  _shown_default(each, meta), (place,)))  # fmt: skip
    return keys


def _shown_default(each: Field[Any], meta: Meta) -> str:
    """A key's default as the README says it: its ``Meta``'s, else its Python default
    where that is a value to write (``true``, ``false``)."""
    if isinstance(each.default, bool):
        return str(each.default).lower()
    return str((meta.extra or {}).get("default", ""))


def _table() -> tuple[ConfigKey, ...]:
    """Every key, in the README's order: the top level's, then an entry's own."""
    top, entry = _keys_of(Config, "top"), _keys_of(TargetEntry, "entry")
    both = {key.name for key in top} & {key.name for key in entry}
    keys = [replace(key, places=("top", "entry")) if key.name in both else key for key in top]
    return (*keys, *(key for key in entry if key.name not in both))


# The table is worked out from the declarations' type hints when it is first asked for
# (a command that reads no configuration file never is): these four names are then set.
CONFIG_KEYS: tuple[ConfigKey, ...]
"""Every configuration key, in the README's order."""
CONFIG_KEYS_BY_NAME: dict[str, ConfigKey]
TOP_KEYS: tuple[str, ...]
ENTRY_KEYS: tuple[str, ...]
"""What an item of ``targets:`` may hold."""
_TABLE_NAMES = frozenset({"CONFIG_KEYS", "CONFIG_KEYS_BY_NAME", "TOP_KEYS", "ENTRY_KEYS"})


def __getattr__(name: str) -> Any:
    """The table's names, worked out on first use (:func:`_table`)."""
    if name not in _TABLE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    keys = _table()
    globals().update(
        CONFIG_KEYS=keys,
        CONFIG_KEYS_BY_NAME={key.name: key for key in keys},
        TOP_KEYS=tuple(key.name for key in keys if "top" in key.places),
        ENTRY_KEYS=(*(key.name for key in keys if "entry" in key.places), *OPTION_NAMES),
    )
    return globals()[name]


def _keys(name: str) -> Any:
    """One of the table's names as the module holds it now (a test may have replaced it)."""
    return globals()[name] if name in globals() else __getattr__(name)


def project_config(path: Path | None = None) -> Config:
    """The configuration at ``path``, or the ``jxinspect.yaml`` / ``[tool.jxinspect]``
    found from the working folder (:func:`search_config`), or an empty one rooted there
    (with :attr:`Config.refused` saying why one found was not used)."""
    if path is not None:
        if not path.is_file():
            raise UsageError(f"no such configuration file: {path}")
        return load_config(path)
    found, refused = search_config(Path.cwd())
    if found is not None:
        data, why = _read(found, owned=True)
        if why is None:
            return _parse(found, data)
        refused = refusal(found, "it", found, why)
    return Config(None, Path.cwd().resolve(), refused=refused)


def load_config(path: Path) -> Config:
    """Read and validate a configuration file."""
    return _parse(path, _read(path, owned=False)[0])


def _read(path: Path, *, owned: bool) -> tuple[bytes, tuple[str, str] | None]:
    """The bytes of a configuration file (a regular file, never waited on) and, where
    ``owned`` is asked, why another user could have written it (:func:`unsafe`, of the
    file that was opened), else ``None``."""
    name = shown(path)
    try:
        with artifacts.open_regular(path, shown=name) as file:
            why = unsafe(os.fstat(file.fileno())) if owned else None
            return (b"" if why else file.read()), why
    except OSError as err:
        raise UsageError(f"cannot read {name}: {err.strerror}") from None


def _parse(path: Path, data: bytes) -> Config:
    name = shown(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line, byte = undecodable(data, err)
        raise UsageError(
            f"{name}:{line}: not UTF-8 text (byte {byte}); save the configuration as UTF-8"
        ) from None
    toml = path.name == PYPROJECT or path.suffix == ".toml"
    located = read_toml(text, name) if toml else read_yaml(text, name)
    return _ConfigReader(located, path.resolve().parent).config(path)


# ---- the README's reference ------------------------------------------------------------------

_COMMENT_AT = 36


def config_reference() -> str:
    """The README's example ``jxinspect.yaml``: a line a top-level key of
    :data:`CONFIG_KEYS`, with its help and default, and one target entry (its fields'
    examples)."""
    lines = []
    for key in _keys("CONFIG_KEYS"):
        if "top" in key.places:
            value = f" {key.example}" if key.example else ""
            lines.append(_commented(f"{key.name}:{value}", key.help, key.default))
    target = _keys("CONFIG_KEYS_BY_NAME")["target"]
    lines.append(_commented(f"  - target: {target.example}", target.help, target.default))
    hints = type_hints(TargetEntry, include_extras=True)
    for each in fields(TargetEntry):
        kind, meta = _declared(hints[each.name])
        if kind in _GROUPS and meta is not None and meta.examples:
            for name, value in meta.examples[0].items():
                lines.append(_commented(f"    {name}: {value}", meta.description or "", ""))
    return "\n".join(lines) + "\n"


def _commented(text: str, help: str, default: str) -> str:
    comment = f"{help}; default: {default}" if default else help
    return f"{text.ljust(_COMMENT_AT - 2)}  # {comment}"


# ---- reading -------------------------------------------------------------------------------


class _ConfigReader:
    """Checks plain data against :data:`CONFIG_KEYS`, naming file, line and key in each error."""

    def __init__(self, located: Located, root: Path) -> None:
        from jxinspect.rules import EXPLAINED  # the rules load only for a file that is read

        self.located, self.root = located, root
        self.known = tuple(EXPLAINED)  # every code, the comparison rules (JX403, JX404) too

    def where(self, path: KeyPath) -> str:
        return self.located.where(path)

    def fail(self, path: KeyPath, message: str) -> NoReturn:
        raise UsageError(f"{self.where(path)}: {self.located.dotted(path)}: {message}")

    def keys(self, data: dict[str, Any], path: KeyPath, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                self.fail(path + (key,), f"unknown key{nearest(key, allowed)}")

    def mapping(self, value: Any, path: KeyPath) -> dict[str, Any]:
        """``value``'s keys with ``_`` for ``-`` (their lines kept); ``null``: empty."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, f"must be a mapping, got {_what(value)}")
        lines = self.located.lines
        result = {}
        for raw, item in value.items():
            key = str(raw).replace("-", "_")
            if key != str(raw) and path + (str(raw),) in lines:
                lines[path + (key,)] = lines[path + (str(raw),)]
            result[key] = item
        return result

    def values(self, data: dict[str, Any], path: KeyPath, place: Place) -> dict[str, Any]:
        """The keys of :data:`CONFIG_KEYS` that stand at ``place`` and ``data`` gives (not
        as ``null``), each read by its type's reader."""
        return {
            key.name: _reader(key.kind)(self, key.kind, data[key.name], path + (key.name,))
            for key in _keys("CONFIG_KEYS")
            if place in key.places and data.get(key.name) is not None
        }

    def config(self, path: Path) -> Config:
        top = self.mapping(self.located.data, ())
        self.keys(top, (), _keys("TOP_KEYS"))
        read = self.values(top, (), "top")
        override = PolicyOverride(**{name: read.pop(name) for name in POLICY_KEYS if name in read})
        return Config(path=path, root=self.root, policy=override.apply(Policy()), **read)

    def entry(self, value: Any, path: KeyPath) -> TargetEntry:
        data = self.mapping(value, path)
        self.keys(data, path, _keys("ENTRY_KEYS"))
        if data.get("target") is None:
            self.fail(path, "missing `target` (e.g. target: models/mlp.py:predict)")
        read = self.values(data, path, "entry")
        options = {k: v for k, v in data.items() if k in OPTIONS_BY_NAME}
        return TargetEntry(
            target=read.pop("target"),
            options=self.options(options, path),
            override=PolicyOverride(**read),
            line=self.located.lines.get(path),
        )

    def options(self, data: dict[str, Any], path: KeyPath) -> TargetOptions:
        """Staging options, each key checked on its own line, spec strings parsed."""
        for key, value in data.items():
            where = f"{self.where(path + (key,))}: {self.located.dotted(path)}"
            read = options_from_mapping({key: value}, where)
            parse = OPTIONS_BY_NAME[key].parse
            if parse is not None:
                try:
                    parse(getattr(read, key))  # as read: dims may be a mapping
                except specs.SpecError as err:
                    self.fail(path + (key,), str(err))
        options = options_from_mapping(data, self.where(path))
        if options.args_from is not None:
            options = replace(options, args_from=self.args_from(options.args_from, path))
        return options

    def args_from(self, text: str, path: KeyPath) -> str:
        """``args_from`` with the file it names (``inputs.py:make``) made a full path from
        the configuration's folder, as its targets are read: every step that imports it
        then finds the same file, wherever lint runs from."""
        if ":" not in text:  # a function of the target's own module
            return text
        try:
            named = parse_target(text)
        except UsageError as err:
            self.fail(path + ("args_from",), str(err))
        if not named.is_file:
            return text
        file = self.root / named.module
        if not file.is_file():
            where = f"the folder of {self.located.name}"
            self.fail(path + ("args_from",), str(no_such_file(named.module, where)))
        return f"{file}:{text.rpartition(':')[2]}"

    # -- one reader a type: (the key's type, value, path) -> the value as declared

    def defaults(self, kind: Any, value: Any, path: KeyPath) -> TargetOptions:
        data = self.mapping(value, path)
        self.keys(data, path, DEFAULT_KEYS)
        return self.options(data, path)

    def targets(self, kind: Any, value: Any, path: KeyPath) -> tuple[TargetEntry, ...]:
        if not isinstance(value, list):
            self.fail(path, f"must be a list of mappings, got {_what(value)}")
        return tuple(self.entry(item, path + (index,)) for index, item in enumerate(value))

    def target(self, kind: Any, value: Any, path: KeyPath) -> str:
        text = self.text(kind, value, path)
        try:
            target = parse_target(text)
        except UsageError as err:
            self.fail(path, str(err))
        if target.is_file and not (self.root / target.module).is_file():
            where = f"the folder of {self.located.name}"
            self.fail(path, str(no_such_file(target.module, where)))
        return text

    def strings(self, kind: Any, value: Any, path: KeyPath) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            self.fail(path, f"must be a string or a list of strings, got {_what(value)}")
        return tuple(items)

    def text(self, kind: Any, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str):
            self.fail(path, f"must be a string, got {_what(value)}")
        return value

    def boolean(self, kind: Any, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"must be true or false, got {_what(value)}")
        return value

    def choice(self, kind: Any, value: Any, path: KeyPath) -> str:
        members: tuple[str, ...] = get_args(kind)  # a Literal's
        return self.one_of(value, path, members)

    def one_of(self, value: Any, path: KeyPath, choices: tuple[Choice, ...]) -> Choice:
        """The member of ``choices`` that ``value`` is; refused, with the nearest, if none."""
        for choice in choices:
            if isinstance(value, str) and value == choice:
                return choice
        hint = nearest(value, choices) if isinstance(value, str) else ""
        self.fail(path, f"must be one of {', '.join(choices)}, got {value!r}{hint}")

    def seconds(self, kind: Any, value: Any, path: KeyPath) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            self.fail(path, f"must be seconds (0 for no limit), got {_what(value)}")
        return float(value)

    def idle(self, kind: Any, value: Any, path: KeyPath) -> bool | float:
        if isinstance(value, bool):
            return value
        if not isinstance(value, (int, float)) or value <= 0:
            self.fail(path, f"must be true, false or idle seconds, got {_what(value)}")
        return float(value)

    def codes(self, kind: Any, value: Any, path: KeyPath) -> tuple[str, ...]:
        items = self.strings(kind, value, path)
        for index, item in enumerate(items):
            self.code_prefix(item, path + (index,) if not isinstance(value, str) else path)
        return tuple(item.upper() for item in items)

    def code_prefix(self, item: str, path: KeyPath) -> None:
        code = item.upper()
        if not re.fullmatch(r"JX\d{0,3}", code) or not any(c.startswith(code) for c in self.known):
            self.fail(
                path,
                f"unknown code `{item}`{nearest(code, self.known)}; known: {', '.join(self.known)}",
            )

    def severities(self, kind: Any, value: Any, path: KeyPath) -> tuple[tuple[str, Severity], ...]:
        result = []
        for code, severity in self.mapping(value, path).items():
            self.code_prefix(code, path + (code,))
            result.append((code.upper(), self.one_of(severity, path + (code,), SEVERITIES)))
        return tuple(result)

    def budgets(self, kind: Any, value: Any, path: KeyPath) -> tuple[tuple[str, BudgetValue], ...]:
        data = self.mapping(value, path)
        self.keys(data, path, BUDGET_KEYS)
        result: dict[str, BudgetValue] = {}
        for name, given in data.items():
            try:
                result[name] = parse_budget(name, given)
            except ValueError as err:
                self.fail(path + (name,), f"{err}, got {given!r}")
        return tuple(result.items())


_R = _ConfigReader
_READERS: dict[Any, Callable[[_ConfigReader, Any, Any, KeyPath], Any]] = {
    Defaults: _R.defaults, tuple[TargetEntry, ...]: _R.targets, TargetText: _R.target,
    Strings: _R.strings, str: _R.text, bool: _R.boolean, CodePrefixes: _R.codes,
    Severities: _R.severities, Budgets: _R.budgets, Seconds: _R.seconds, IdleSeconds: _R.idle,
}  # fmt: skip
"""How a key of each type is read; a ``Literal`` is one of its members (a test checks that
every key's type has a reader)."""


def _reader(kind: Any) -> Callable[[_ConfigReader, Any, Any, KeyPath], Any]:
    return _R.choice if get_origin(kind) is Literal else _READERS[kind]


def _what(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (str, int, float, bool)):
        return f"{type(value).__name__} {value!r}"
    return {"dict": "a mapping", "list": "a list"}.get(type(value).__name__, type(value).__name__)
