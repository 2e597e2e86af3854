"""``lint``'s incremental cache: a target is staged again only when something that can
change its report changed.

The key of a target hashes everything its report depends on that can be known without
running it: the jxinspect, Python and installed package versions (JAX, jaxlib, flax…),
the ``JAX_*`` and ``XLA_FLAGS`` environment, the resolved options (entry, declaration,
defaults), the rule settings and ``compile``, the devices the workers simulate, and the
sources of the target's module and of every module of the project it imports (found by
reading ``import`` statements, transitively; installed packages are covered by their
versions). What a module reads at import besides Python sources (a data file, a config
server) is not in the key: use ``--no-cache`` when that changes.

Entries live in ``.jxinspect_cache/`` at the project root (with its own ``.gitignore``),
one file per key (a JSON line of what the entry is, with the SHA-256 of the report, then
the report's JSON line), written atomically; an entry that is corrupt, of another
format, or whose key or digest does not check out is ignored, never trusted. The last staging
time of each target is kept too, for balancing ``--shard``.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jxinspect._version import __version__
from jxinspect.core import codec
from jxinspect.core.errors import JxError
from jxinspect.core.files import write_atomically
from jxinspect.core.model import Report
from jxinspect.project.sourcefile import parse_source, statements

if TYPE_CHECKING:
    from jxinspect.lint.workers.protocol import Job

FOLDER = ".jxinspect_cache"
FORMAT = 3
"""The entries' format: 3 holds the codec's JSON line of the report."""
_ENV_PREFIXES = ("JAX_", "XLA_", "TF_CPP_")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def installed_packages() -> str:
    """A digest of every installed distribution on the import path: the name of its
    metadata folder (``jax-0.10.2.dist-info`` holds name and version) and when that
    folder was written, so a reinstall of the same version counts as a change too.
    (Reading each distribution's metadata instead costs a run tens of milliseconds.)"""
    found = []
    for folder in sys.path:
        try:
            with os.scandir(folder or ".") as entries:
                for entry in entries:
                    if entry.name.endswith((".dist-info", ".egg-info")):
                        found.append(f"{folder}\0{entry.name}\0{entry.stat().st_mtime_ns}")
        except OSError:
            continue
    return _digest("\n".join(sorted(found)).encode())


def _module_files(name: str, level: int, here: Path, folders: list[Path]) -> list[Path]:
    """Files an import of ``name`` (``level`` dots) from a module in ``here`` may load."""
    if level:
        base = here
        for _ in range(level - 1):
            base = base.parent
        roots = [base]
    else:
        roots = folders
    parts = [p for p in name.split(".") if p]
    found = []
    for root in roots:
        folder = root
        for i, part in enumerate(parts):
            package = folder / part / "__init__.py"
            module = folder / f"{part}.py"
            if package.is_file():
                found.append(package)
                folder = folder / part
            elif module.is_file() and i == len(parts) - 1:
                found.append(module)
                break
            else:
                break
        if found:
            return found
    return found


def _imports(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """``(name, level)`` of every import statement, at any depth."""
    for node in statements(tree.body):
        if isinstance(node, ast.Import):
            yield from ((alias.name, 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            yield module, node.level
            for alias in node.names:
                yield (f"{module}.{alias.name}" if module else alias.name), node.level


def project_sources(
    start: Path, root: Path, parse: Callable[[Path], ast.Module] = parse_source
) -> list[Path]:
    """``start`` and the project's own modules it imports, transitively (files under
    ``root``, a resolved path, only), in a stable order; ``parse`` reads a module (one
    the caller has parsed already is not parsed again)."""
    seen: dict[Path, None] = {}
    queue = [start.resolve()]
    while queue:
        path = queue.pop()
        if path in seen or not path.is_file():
            continue
        seen[path] = None
        try:
            tree = parse(path)
        except (SyntaxError, ValueError, OSError, JxError):
            continue  # the digest of its bytes still covers it
        folders = [path.parent, root]
        for name, level in _imports(tree):
            for file in _module_files(name, level, path.parent, folders):
                resolved = file.resolve()
                if resolved.is_relative_to(root) and resolved not in seen:
                    queue.append(resolved)
    return sorted(seen)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """Dataclasses as dicts, as ``dataclasses.asdict`` makes them but without copying
    every leaf (a tenth of a run with 50 targets cached)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        kind = type(value)
        if kind not in _FIELDS:
            _FIELDS[kind] = tuple(f.name for f in fields(value))
        return {name: _plain(getattr(value, name)) for name in _FIELDS[kind]}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


PACKAGE = Path(__file__).resolve().parents[1]
"""The installed jxinspect package (the source folder of an editable checkout)."""


@functools.cache
def tool_digest(package: Path = PACKAGE) -> str:
    """A digest of jxinspect's own code and data (every file of the package, by
    content): an edited rule in an editable checkout changes it, as a new version does.
    About a megabyte of files, read once per run."""
    files = sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(_digest(path.read_bytes()).encode())
    return digest.hexdigest()


def environment() -> dict[str, Any]:
    """The versions (jxinspect, Python, installed distributions), jxinspect's own code
    (:func:`tool_digest`) and the ``JAX_*`` and ``XLA_*`` environment of this process:
    what every target's report depends on."""
    env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)}
    return {
        "format": FORMAT,
        "jxinspect": __version__,
        "tool": tool_digest(),
        "python": sys.version,
        "packages": installed_packages(),
        "env": dict(sorted(env.items())),
    }


def prepare_folder(root: Path) -> Path:
    """The cache folder at ``root``, made with its ``.gitignore`` and ``CACHEDIR.TAG``
    when missing; raises ``OSError``."""
    folder = root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.is_file():
        write_atomically(ignore, "# made by jxinspect lint\n*\n")
    tag = folder / "CACHEDIR.TAG"
    if not tag.is_file():
        write_atomically(
            tag,
            "Signature: 8a477f597d28d172789f06886806bc55\n"
            "# the jxinspect lint cache; see https://bford.info/cachedir/\n",
        )
    return folder


@dataclass(frozen=True)
class _Format:
    """What every format's entry header says first."""

    format: int


@dataclass(frozen=True)
class EntryHeader:
    """The first line of a cache entry."""

    format: int
    """:data:`FORMAT`: an entry of another one is a miss."""
    key: str
    """The key it is stored under."""
    name: str
    """The target's name, for a person reading the folder."""
    seconds: float
    """How long staging took."""
    digest: str
    """The SHA-256 of the report's line."""


class Cache:
    """Reports of earlier runs, by key; ``None`` folder: caching is off."""

    def __init__(
        self, root: Path, enabled: bool, parse: Callable[[Path], ast.Module] = parse_source
    ) -> None:
        self.root, self.parse = root.resolve(), parse
        self.folder = self.root / FOLDER if enabled else None
        self._context: dict[str, Any] | None = None
        self._sources: dict[Path, str] = {}
        self._modules: dict[Path, list[tuple[str, str]]] = {}
        self._costs: dict[str, float] | None = None
        self.ignored: list[str] = []
        """An entry that was not trusted, each: its file and why (then staged again)."""

    def _file_digest(self, path: Path) -> str:
        if path not in self._sources:
            try:
                self._sources[path] = _digest(path.read_bytes())
            except OSError:
                self._sources[path] = "unreadable"
        return self._sources[path]

    def context(self) -> dict[str, Any]:
        """What every key shares: versions and the environment."""
        if self._context is None:
            self._context = environment()
        return self._context

    def _module_sources(self, start: Path) -> list[tuple[str, str]]:
        """The module's and its project imports' digests, found once per module (its
        targets share them)."""
        if start not in self._modules:
            sources = project_sources(start, self.root, self.parse) if start.is_file() else []
            self._modules[start] = [(self._display(p), self._file_digest(p)) for p in sources]
        return self._modules[start]

    def key(self, job: Job, devices: int | None) -> str:
        """The key of one target: everything its report depends on."""
        material = {
            **self.context(),
            "target": job.name,
            "resolved": _plain(job.resolved),
            "settings": _plain(job.settings),
            "compile": job.compile,
            "devices": devices,
            "sources": self._module_sources(Path(job.group)),
        }
        return _digest(json.dumps(material, sort_keys=True, default=str).encode())

    def _display(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _entry(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.jsonl"

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (:meth:`get` reads and checks it)."""
        return self.folder is not None and self._entry(key).is_file()

    def get(self, key: str) -> Report | None:
        """The report stored under ``key``; ``None`` when absent or not trustworthy (one
        of another format is a miss; why any other was not trusted is kept in
        :attr:`ignored`).

        An entry is two lines of JSON: its format, key, name, seconds and the SHA-256 of
        the second line, then the report. One changed after it was written (truncated,
        edited, a flipped bit that still reads as JSON) does not hash the same."""
        if self.folder is None:
            return None
        path = self._entry(key)
        try:
            return self._read(path, key)
        except OSError as err:
            problem = err.strerror or str(err)
        except codec.DecodeError as err:
            problem = err.problem
        self.ignored.append(f"{self._display(path)}: {problem}")
        return None

    def _read(self, path: Path, key: str) -> Report | None:
        """The entry's report (``DecodeError`` saying why it is not one)."""
        name = self._display(path)
        head, _, text = path.read_bytes().partition(b"\n")
        with contextlib.suppress(codec.DecodeError):
            if codec.decode(head, _Format, source=name).format != FORMAT:
                return None  # another version's entry: a miss
        header = codec.decode(head, EntryHeader, source=name)
        if header.key != key:
            raise codec.DecodeError(name, "at $.key: expected the key it is stored under")
        if header.digest != _digest(text):
            raise codec.DecodeError(name, "the report does not match its digest (edited or cut)")
        return codec.decode(text, Report, source=name)

    def put(self, key: str, name: str, text: str, seconds: float) -> None:
        """Store a report (its JSON line, as the worker sent it); a cache that cannot be
        written is skipped, never fatal."""
        if self.folder is None:
            return
        header = EntryHeader(FORMAT, key, name, seconds, _digest(text.encode()))
        with contextlib.suppress(OSError):
            self._prepare()
            path = self._entry(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, codec.line(header) + "\n" + text)

    def _prepare(self) -> None:
        prepare_folder(self.root)

    # ---- costs, for --shard ----

    def costs(self) -> dict[str, float]:
        """Seconds each target took when last staged (by target name)."""
        if self._costs is None:
            self._costs = {}
            if self.folder is not None:
                try:
                    data = json.loads((self.folder / "costs.json").read_text(encoding="utf-8"))
                except (OSError, ValueError, RecursionError):
                    data = None
                if isinstance(data, dict):
                    self._costs = {
                        str(k): float(v)
                        for k, v in data.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                    }
        return self._costs

    def record_costs(self, seconds: dict[str, float]) -> None:
        if self.folder is None or not seconds:
            return
        costs = {**self.costs(), **seconds}
        with contextlib.suppress(OSError):
            self._prepare()
            text = json.dumps(dict(sorted(costs.items())), indent=0)
            write_atomically(self.folder / "costs.json", text + "\n")
        self._costs = costs
