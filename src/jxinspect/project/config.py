"""The lint configuration: ``jxinspect.yaml`` or ``[tool.jxinspect]`` in ``pyproject.toml``.

Both hold one schema, declared once in :data:`CONFIG_KEYS`: each key's name, kind, help,
default, an example and where it may stand (the top level, a target entry, or both); a
target entry also takes every staging option of
:data:`~jxinspect.project.options.OPTIONS`. The reader, its errors and the README's
configuration reference (:func:`config_reference`) derive from the table.

Everything is checked when read: an unknown key, a wrong type or a bad value is a
:class:`~jxinspect.core.errors.UsageError` naming the file, the line (YAML) or the key
path (TOML), the key and the nearest valid key. How the files are parsed, and how hostile
ones are bounded: :mod:`jxinspect.project.config_files`. Imports no JAX.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeVar, cast

from jxinspect.core import artifacts
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.model import Finding, Severity
from jxinspect.core.settings import (
    BUDGET_KEYS,
    DEFAULT_SETTINGS,
    BudgetValue,
    Settings,
    parse_budget,
)
from jxinspect.core.vocabulary import FAIL_ON, SEVERITIES, FailOn
from jxinspect.project import spec as specs
from jxinspect.project.config_files import KeyPath, Located, read_toml, read_yaml
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
from jxinspect.rules import EXPLAINED

F = TypeVar("F", bound=Finding)

YAML_NAMES = ("jxinspect.yaml", "jxinspect.yml")
PYPROJECT = "pyproject.toml"

# ---- the table of keys ---------------------------------------------------------------------

ConfigKind = Literal[
    "defaults", "targets", "target", "strings", "text", "bool", "choice", "codes",
    "severities", "budgets", "seconds", "idle",
]  # fmt: skip
"""How a key is written: staging options every target starts from, a list of target
entries, one target, a string or a list of strings, one string, true or false, one of
``choices``, rule code prefixes, a mapping of code prefixes to severities, a mapping of
budget names to sizes, seconds (0: no limit), true/false or idle seconds."""

Place = Literal["top", "entry"]
"""Where a key may stand: the top level, or an item of ``targets:`` (and a module's
``JXINSPECT`` entry, which takes an entry's keys but ``target``)."""
Choice = TypeVar("Choice", bound=str)
"""A member of a closed set a key's value is checked against (a severity, a choice)."""

_BOTH: tuple[Place, ...] = ("top", "entry")


@dataclass(frozen=True)
class ConfigKey:
    """One configuration key, as the reader and the README know it."""

    name: str
    kind: ConfigKind
    help: str
    """What it is for (the README's comment)."""
    example: str
    """A value, as the README's example writes it."""
    default: str = ""
    """What holds where it is not given, in words (empty: nothing)."""
    places: tuple[Place, ...] = ("top",)
    choices: tuple[str, ...] = ()
    """The values a ``choice`` takes."""


CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("defaults", "defaults", ", ".join(DEFAULT_KEYS), "{devices: 8}"),
    ConfigKey("paths", "strings", "modules here that declare JXINSPECT are targets too",
              "[models]"),
    ConfigKey("exclude", "strings", "glob patterns of files to leave out of that search",
              '["models/experimental/*"]'),
    ConfigKey("select", "codes", "code prefixes to run", "[JX1, JX2, JX3]", "every rule",
              _BOTH),
    ConfigKey("ignore", "codes", "code prefixes not to run", "[JX110]", places=_BOTH),
    ConfigKey("severity", "severities", "per code or prefix: " + ", ".join(SEVERITIES),
              "{JX201: error}", places=_BOTH),
    ConfigKey("budgets", "budgets", "thresholds of JX201, JX302, JX303 (per device), JX402, "
              "and JX305's and diff-debug --compile's memory_growth",
              "{replicated_bytes: 4MiB, bytes_per_device: 16GiB, max_compiles: 2, "
              "forbid_collectives: [all-to-all]}",
              places=_BOTH),
    ConfigKey("compile", "bool", "also compile (XLA's shardings, aliasing, memory)", "true",
              "false", _BOTH),
    ConfigKey("why", "bool", "also read where each sharding came from (Shardy's record, a "
              "second compile in a child; JX204)", "true", "false", _BOTH),
    ConfigKey("baseline", "text", "the accepted findings", "ci/baseline.json",
              "jxinspect-baseline.json"),
    ConfigKey("fail_on", "choice", "the severity that fails the run: " + ", ".join(FAIL_ON),
              "warning", "error", choices=FAIL_ON),
    ConfigKey("timeout", "seconds", "seconds one target may take to stage (0: no limit)",
              "600", "300"),
    ConfigKey("cache", "bool", "reuse the reports of unchanged targets (.jxinspect_cache/)",
              "false", "true"),
    ConfigKey("keep_workers", "idle", "true, or idle seconds: workers wait for the next run",
              "600", "false"),
    ConfigKey("targets", "targets", "each entry: a target, its options and its own policy", ""),
    ConfigKey("target", "target", "a file (every function it declares) or a function",
              "models/mlp.py:loss", places=("entry",)),
)  # fmt: skip
"""Every configuration key, in the README's order."""

CONFIG_KEYS_BY_NAME: dict[str, ConfigKey] = {key.name: key for key in CONFIG_KEYS}
TOP_KEYS: tuple[str, ...] = tuple(key.name for key in CONFIG_KEYS if "top" in key.places)
POLICY_KEYS: tuple[str, ...] = tuple(key.name for key in CONFIG_KEYS if key.places == _BOTH)
"""The keys both levels take: which rules run on a target, their severities, budgets."""
ENTRY_KEYS: tuple[str, ...] = (
    *(key.name for key in CONFIG_KEYS if "entry" in key.places),
    *OPTION_NAMES,
)
"""What an item of ``targets:`` may hold."""


DEFAULT_FAIL_ON: FailOn = "error"
"""The severity that fails a run where neither its command line nor ``fail_on:`` says:
``lint``'s, and the compile budget's of ``record --max-compiles`` and
``jxinspect.testing.assert_max_compiles``."""


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
    """A target's own ``select``/``ignore``/``severity``/``budgets``/``compile``/``why``.

    ``select`` replaces the global one; the others add to or override it."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    budgets: tuple[tuple[str, BudgetValue], ...] = ()
    compile: bool | None = None
    why: bool | None = None

    def apply(self, base: Policy) -> Policy:
        return Policy(
            select=self.select if self.select is not None else base.select,
            ignore=base.ignore + self.ignore,
            severity=tuple(dict((*base.severity, *self.severity)).items()),
            settings=replace(base.settings, **cast(dict[str, Any], dict(self.budgets))),
            compile=self.compile if self.compile is not None else base.compile,
            why=self.why if self.why is not None else base.why,
        )


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
    """One item of ``targets:``."""

    target: str
    """As written; a file path is relative to the configuration's folder."""
    options: TargetOptions
    override: PolicyOverride
    line: int | None = None
    """Its line in a YAML file (``tomllib`` keeps none)."""


@dataclass(frozen=True)
class Config:
    """A read configuration; paths in it are relative to ``root``. One field a top-level
    key of :data:`CONFIG_KEYS`, in its order, those of :data:`POLICY_KEYS` read into
    ``policy`` (a test checks it)."""

    path: Path | None
    root: Path
    refused: str | None = None
    """A configuration the search found and did not use (another user could have written
    it), in one line: what, why, how to fix."""
    defaults: TargetOptions = field(default_factory=TargetOptions)
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
    targets: tuple[TargetEntry, ...] = ()


ROOT_MARKERS = (".git", ".hg")
"""A repository's root: the search for a configuration goes no higher."""


def find_config(start: Path) -> Path | None:
    """The configuration :func:`search_config` finds from ``start``, or ``None``."""
    return search_config(start)[0]


def search_config(start: Path) -> tuple[Path | None, str | None]:
    """``jxinspect.yaml``, or a ``pyproject.toml`` with ``[tool.jxinspect]``, in ``start``
    or the nearest folder above it, up to the project's root (as ruff and mypy find
    theirs): the first folder holding a ``jxinspect.yaml`` or a ``pyproject.toml`` (one
    without ``[tool.jxinspect]`` ends the search: that project has none), a repository
    root (``.git``, ``.hg``), or the user's home; never above home.

    A configuration names code that lint imports and runs, so, as git's
    ``safe.directory`` reasons, a folder that another user could have written (not this
    user's or root's, or writable by a group or by everyone) is never taken: the search
    stops there, and a configuration in it is the second value, a line saying why it was
    not used. (The file itself is checked when it is opened: :func:`project_config`.)"""
    home = _home()
    start = start.resolve()
    for folder in (start, *start.parents):
        try:
            why = unsafe(folder.stat())
        except OSError:
            return None, None
        found = _candidate(folder)
        if why is not None:
            return None, (refusal(found, f"its folder {folder}", folder, why) if found else None)
        if found is not None or _has_pyproject(folder):
            return found, None
        if folder == home or any((folder / marker).exists() for marker in ROOT_MARKERS):
            return None, None
    return None, None


def _candidate(folder: Path) -> Path | None:
    """The configuration file of ``folder``, if it holds one."""
    for name in YAML_NAMES:
        if (folder / name).is_file():
            return folder / name
    pyproject = folder / PYPROJECT
    return pyproject if pyproject.is_file() and _has_table(pyproject) else None


def _has_pyproject(folder: Path) -> bool:
    return (folder / PYPROJECT).is_file()


def unsafe(found: os.stat_result) -> tuple[str, str] | None:
    """Why a configuration's file or folder (``found``, its status) could have been
    written by another user than this one, in words, and the command that fixes it
    (``chown``, ``chmod go-w``); ``None`` when it could not: it is
    this user's or root's, and writable by no group (but this user's own, of which it is
    the only member) and not by everyone. No owners here (not POSIX): ``None``."""
    if not hasattr(os, "getuid"):
        return None
    if found.st_uid not in (os.getuid(), 0):
        return f"belongs to another user (uid {found.st_uid})", "chown"
    if found.st_mode & stat.S_IWOTH:
        return "can be written by everyone", "chmod go-w"
    if found.st_mode & stat.S_IWGRP and not _own_group(found.st_gid):
        return f"can be written by the group {_group_name(found.st_gid)}", "chmod go-w"
    return None


def _own_group(gid: int) -> bool:
    """Whether ``gid`` is this user's own group (a user-private group: this user's
    primary group, named as the user, with no other member)."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(os.getuid())
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return (
        gid == user.pw_gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
    )


def _group_name(gid: int) -> str:
    import grp

    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def refusal(path: Path, what: str, where: Path, why: tuple[str, str]) -> str:
    """The line that says a configuration was not used: ``what`` (``it``, ``its
    folder …``) at ``where`` is ``why``, and how to fix it."""
    return (
        f"{used(path)} is not used: {what} {why[0]}, so another user could have written the "
        f"code it runs ({why[1]} {where}, or give --config)"
    )


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):  # no home known (no HOME, no passwd entry)
        return None


def _has_table(pyproject: Path) -> bool:
    """Whether ``pyproject.toml`` has a ``[tool.jxinspect]`` table (read as text: a
    broken file is reported when it is loaded; one that is not a regular file has none)."""
    try:
        text = artifacts.read_bytes(pyproject, limit=artifacts.JSON_LIMIT).decode(
            "utf-8", errors="replace"
        )
    except (OSError, UsageError):
        return False
    return re.search(r"^\s*\[+\s*tool\.jxinspect\b", text, re.MULTILINE) is not None


def shown(path: Path) -> str:
    """``path`` relative to the working folder where it lies inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def used(path: Path) -> str:
    """A configuration as the run that used it names it: relative to the working folder
    where it lies in it or in a folder above it (``jxinspect.yaml``,
    ``../jxinspect.yaml``), else in full."""
    full = path.resolve()
    try:
        relative = Path(os.path.relpath(full, Path.cwd().resolve()))
    except ValueError:  # another drive
        return str(full)
    up = relative.parts[:-1]
    inside = not up or up[0] != ".."
    return str(relative) if inside or set(up) == {".."} else str(full)


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
_ENTRY_EXAMPLE = (
    ("args", '"{w: f32[784,512]}, f32[32,784], i32[32]"', "any staging option (see the flags)"),
    ("ignore", "[JX105]", "and its own " + ", ".join(POLICY_KEYS)),
)
"""The README's target entry, after its ``target``: a staging option, a per-target key."""


def config_reference() -> str:
    """The README's example ``jxinspect.yaml``: a line a key of :data:`CONFIG_KEYS`, with
    its help and default, and one target entry."""
    lines = []
    for key in CONFIG_KEYS:
        if "top" in key.places:
            value = f" {key.example}" if key.example else ""
            lines.append(_commented(f"{key.name}:{value}", key.help, key.default))
    target = CONFIG_KEYS_BY_NAME["target"]
    lines.append(_commented(f"  - target: {target.example}", target.help, target.default))
    lines += [_commented(f"    {name}: {value}", help, "") for name, value, help in _ENTRY_EXAMPLE]
    return "\n".join(lines) + "\n"


def _commented(text: str, help: str, default: str) -> str:
    comment = f"{help}; default: {default}" if default else help
    return f"{text.ljust(_COMMENT_AT - 2)}  # {comment}"


# ---- reading -------------------------------------------------------------------------------


class _ConfigReader:
    """Checks plain data against :data:`CONFIG_KEYS`, naming file, line and key in each error."""

    def __init__(self, located: Located, root: Path) -> None:
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
            self.fail(path, f"must be a mapping, got {_kind(value)}")
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
        as ``null``), each read by its kind."""
        return {
            key.name: _READERS[key.kind](self, key, data[key.name], path + (key.name,))
            for key in CONFIG_KEYS
            if place in key.places and data.get(key.name) is not None
        }

    def config(self, path: Path) -> Config:
        top = self.mapping(self.located.data, ())
        self.keys(top, (), TOP_KEYS)
        read = self.values(top, (), "top")
        override = PolicyOverride(**{name: read.pop(name) for name in POLICY_KEYS if name in read})
        return Config(path=path, root=self.root, policy=override.apply(Policy()), **read)

    def entry(self, value: Any, path: KeyPath) -> TargetEntry:
        data = self.mapping(value, path)
        self.keys(data, path, ENTRY_KEYS)
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

    # -- one reader a kind: (key, value, path) -> the value as Config holds it

    def defaults(self, key: ConfigKey, value: Any, path: KeyPath) -> TargetOptions:
        data = self.mapping(value, path)
        self.keys(data, path, DEFAULT_KEYS)
        return self.options(data, path)

    def targets(self, key: ConfigKey, value: Any, path: KeyPath) -> tuple[TargetEntry, ...]:
        if not isinstance(value, list):
            self.fail(path, f"must be a list of mappings, got {_kind(value)}")
        return tuple(self.entry(item, path + (index,)) for index, item in enumerate(value))

    def target(self, key: ConfigKey, value: Any, path: KeyPath) -> str:
        text = self.text(key, value, path)
        try:
            target = parse_target(text)
        except UsageError as err:
            self.fail(path, str(err))
        if target.is_file and not (self.root / target.module).is_file():
            where = f"the folder of {self.located.name}"
            self.fail(path, str(no_such_file(target.module, where)))
        return text

    def strings(self, key: ConfigKey, value: Any, path: KeyPath) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            self.fail(path, f"must be a string or a list of strings, got {_kind(value)}")
        return tuple(items)

    def text(self, key: ConfigKey, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str):
            self.fail(path, f"must be a string, got {_kind(value)}")
        return value

    def boolean(self, key: ConfigKey, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"must be true or false, got {_kind(value)}")
        return value

    def choice(self, key: ConfigKey, value: Any, path: KeyPath) -> str:
        return self.one_of(value, path, key.choices)

    def one_of(self, value: Any, path: KeyPath, choices: tuple[Choice, ...]) -> Choice:
        """The member of ``choices`` that ``value`` is; refused, with the nearest, if none."""
        for choice in choices:
            if isinstance(value, str) and value == choice:
                return choice
        hint = nearest(value, choices) if isinstance(value, str) else ""
        self.fail(path, f"must be one of {', '.join(choices)}, got {value!r}{hint}")

    def seconds(self, key: ConfigKey, value: Any, path: KeyPath) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            self.fail(path, f"must be seconds (0 for no limit), got {_kind(value)}")
        return float(value)

    def idle(self, key: ConfigKey, value: Any, path: KeyPath) -> bool | float:
        if isinstance(value, bool):
            return value
        if not isinstance(value, (int, float)) or value <= 0:
            self.fail(path, f"must be true, false or idle seconds, got {_kind(value)}")
        return float(value)

    def codes(self, key: ConfigKey, value: Any, path: KeyPath) -> tuple[str, ...]:
        items = self.strings(key, value, path)
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

    def severities(
        self, key: ConfigKey, value: Any, path: KeyPath
    ) -> tuple[tuple[str, Severity], ...]:
        result = []
        for code, severity in self.mapping(value, path).items():
            self.code_prefix(code, path + (code,))
            result.append((code.upper(), self.one_of(severity, path + (code,), SEVERITIES)))
        return tuple(result)

    def budgets(
        self, key: ConfigKey, value: Any, path: KeyPath
    ) -> tuple[tuple[str, BudgetValue], ...]:
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
_READERS: dict[ConfigKind, Callable[[_ConfigReader, ConfigKey, Any, KeyPath], Any]] = {
    "defaults": _R.defaults, "targets": _R.targets, "target": _R.target,
    "strings": _R.strings, "text": _R.text, "bool": _R.boolean,
    "choice": _R.choice, "codes": _R.codes, "severities": _R.severities,
    "budgets": _R.budgets, "seconds": _R.seconds, "idle": _R.idle,
}  # fmt: skip
"""How each kind of key is read (a test checks every kind has one)."""


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (str, int, float, bool)):
        return f"{type(value).__name__} {value!r}"
    return {"dict": "a mapping", "list": "a list"}.get(type(value).__name__, type(value).__name__)
