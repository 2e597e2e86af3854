"""``lint``'s incremental cache: a target is staged again only when something that can
change its report changed.

The key of a target hashes everything its report depends on that can be known without
running it: the jxinspect, Python and installed package versions (JAX, jaxlib, flax…),
the ``JAX_*`` and ``XLA_FLAGS`` environment, the resolved options (entry, declaration,
defaults) and ``compile`` (not the rule settings: an entry holds the report unjudged,
which the run judges), the devices the workers simulate, and the
sources of the target's module and of every module of the project it imports (found by
reading ``import`` statements, transitively; installed packages are covered by their
versions). What a module reads at import besides Python sources (a data file, a config
server) is not in the key: use ``--no-cache`` when that changes.

Entries live in ``.jxinspect_cache/`` at the project root (with its own ``.gitignore``),
one file per key (a JSON line of what the entry is, then the report's JSON line), written
atomically. The cache is data that may come from elsewhere (a CI cache, a shared folder),
so an entry is trusted only when its HMAC-SHA256 (of its key and report) verifies under a
secret that is not in the cache: ``JXINSPECT_CACHE_SECRET`` when set (CI sets it from its
secrets), else a key file of the user's, made on first use (:func:`secret`). An entry
that is corrupt, of another format, stored under another key or not written with this
secret is ignored and staged again; one that is not a regular file is ignored and left.
A link in the cache (the folder, a subfolder, an entry) turns the cache off for the run:
nothing is read or written through it. The last staging time of each target is kept too,
for balancing ``--shard`` only (never the verdict: ``lint-merge`` checks the parts).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import hmac
import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jxinspect._version import __version__
from jxinspect.core import codec
from jxinspect.core.artifacts import (
    JSON_LIMIT,
    SMALL_LIMIT,
    is_real_folder,
    kind_of,
    open_entry,
    open_folder,
    read_bytes,
    read_text,
)
from jxinspect.core.errors import JxError, UsageError
from jxinspect.core.files import write_in
from jxinspect.core.model import Report
from jxinspect.project.sourcefile import parse_source, statements

if TYPE_CHECKING:
    from jxinspect.lint.workers.protocol import Job

FOLDER = ".jxinspect_cache"
FORMAT = 5
"""The entries' format: 5 holds the codec's JSON line of the unjudged report and an HMAC
of it (4 held it judged with the rule settings)."""
SECRET_VARIABLE = "JXINSPECT_CACHE_SECRET"
"""The environment variable whose value is the cache's secret, when set."""
KEY_FILE = "cache.key"
"""The user's secret, in :func:`key_folder`, when :data:`SECRET_VARIABLE` is not set."""
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
    """A digest of jxinspect's own code and data: every file of the package by its path,
    size and modification time (an edited rule in an editable checkout changes it, as a
    new version does), stat only: nothing is read."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        stat = path.stat()
        digest.update(f"{path.relative_to(package).as_posix()}\0{stat.st_size}\0"
                      f"{stat.st_mtime_ns}\0".encode())  # fmt: skip
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


class Untrusted(Exception):
    """The cache cannot be used in this run (a link in it, no secret): why, in words."""


def key_folder() -> Path:
    """Where the user's cache secret is kept: ``$XDG_CACHE_HOME/jxinspect`` (default
    ``~/.cache/jxinspect``)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "jxinspect"


def secret() -> bytes:
    """The secret that authenticates the cache's entries: :data:`SECRET_VARIABLE`'s value
    when set, else the user's key file (:func:`key_folder`), made on first use with 32
    random bytes, readable by the user alone. Raises :class:`Untrusted` when it can be
    neither read nor made, or when others can read or change it.

    The folder is opened and its owner and mode read from the open folder; the key is
    opened from it without following a link and checked as opened (owner, mode, one
    name, size): nothing can be swapped in between the check and the read."""
    given = os.environ.get(SECRET_VARIABLE)
    if given:
        return given.encode()
    folder = key_folder()
    path = folder / KEY_FILE
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError as err:
        raise _unusable(path, err.strerror or str(err)) from None
    try:
        _check_owned(os.fstat(handle), folder, "folder", others=0o022, fix="chmod 700 it")
        try:
            key = open_entry(handle, KEY_FILE, shown=str(path))
        except FileNotFoundError:
            _make_key(handle)
            key = open_entry(handle, KEY_FILE, shown=str(path))
        with key:
            found = os.fstat(key.fileno())
            _check_owned(found, path, "key", others=0o077,
                         fix="chmod 600 it, or remove it to make a new one")  # fmt: skip
            if found.st_nlink > 1:  # 0: replaced since it was opened, still ours
                raise Untrusted(
                    f"the cache's key {path} has other names (hard links); the cache is not "
                    "used (remove it to make a new one)"
                )
            text = key.read(SMALL_LIMIT).decode("ascii", errors="replace").strip()
    except (OSError, UsageError) as err:
        why = (err.strerror or str(err)) if isinstance(err, OSError) else str(err)
        raise _unusable(path, why) from None
    finally:
        os.close(handle)
    if len(text) != 64 or text.strip("0123456789abcdef"):
        raise Untrusted(
            f"the cache's key {path} is not one jxinspect made; the cache is not used "
            "(remove it to make a new one)"
        )
    return bytes.fromhex(text)


def _unusable(path: Path, why: str) -> Untrusted:
    return Untrusted(
        f"the cache's key {path} cannot be read or made ({why}); the cache is not used "
        f"(set {SECRET_VARIABLE}, or fix that folder)"
    )


def _check_owned(found: os.stat_result, path: Path, what: str, *, others: int, fix: str) -> None:
    """Raise :class:`Untrusted` unless the opened ``found`` is this user's and its mode
    gives ``others`` (the group's and everyone's bits that matter) nothing. Elsewhere than
    POSIX there are no owners or mode bits: the folder's access rules hold."""
    if os.name != "posix":
        return
    if found.st_uid != os.getuid():
        raise Untrusted(
            f"the cache's {what} {path} belongs to another user; the cache is not used (remove it)"
        )
    if found.st_mode & others:
        can = "read" if what == "key" else "changed"
        raise Untrusted(
            f"the cache's {what} {path} can be {can} by other users; the cache is not used ({fix})"
        )


def _make_key(folder: int) -> None:
    """Write a new random key in the open ``folder`` (mode 600), whole or not at all; a
    key another run made first is kept."""
    temporary = f".{KEY_FILE}.{os.urandom(8).hex()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(temporary, flags, 0o600, dir_fd=folder)
    try:
        with os.fdopen(handle, "w", encoding="ascii") as file:
            file.write(os.urandom(32).hex() + "\n")
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temporary, KEY_FILE, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.unlink(temporary, dir_fd=folder)


def _mac(secret: bytes, key: str, text: bytes) -> str:
    """An entry's HMAC-SHA256: of the key it is stored under and its report's line."""
    return hmac.new(secret, key.encode() + b"\n" + text, hashlib.sha256).hexdigest()


def _check_link(path: Path, root: Path) -> None:
    """Raise :class:`Untrusted` when ``path`` is a link (the cache is never followed out)."""
    if os.path.islink(path):
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        raise Untrusted(f"{shown} is a link; the cache is not used (remove the link)")


def real_subfolder(folder: Path, name: str) -> Path:
    """``folder/name``, made when missing; ``OSError`` when it is a link or not a folder
    (the cache writes only in folders of its own)."""
    path = folder / name
    with contextlib.suppress(FileExistsError):
        path.mkdir()
    if not is_real_folder(path):
        raise NotADirectoryError(20, "a link or not a folder", str(path))
    return path


def prepare_folder(root: Path) -> Path:
    """The cache folder at ``root``, made with its ``.gitignore`` and ``CACHEDIR.TAG``
    when missing (either, when there, is left as it is); raises ``OSError``, also when
    the folder is a link or not a folder: nothing is written through a link (each file
    is written in the folder held open, :func:`~jxinspect.core.files.write_in`)."""
    folder = real_subfolder(root, FOLDER)
    handle = open_folder(folder, below=root)
    try:
        for name, text in _MARKS.items():
            with contextlib.suppress(FileNotFoundError):
                os.stat(name, dir_fd=handle, follow_symlinks=False)
                continue
            write_in(handle, name, text)
    finally:
        os.close(handle)
    return folder


_MARKS = {
    ".gitignore": "# made by jxinspect lint\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# the jxinspect lint cache; see https://bford.info/cachedir/\n",
}
"""The files that mark the cache folder: kept out of git, and a cache to backup tools."""


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
    mac: str
    """The HMAC-SHA256 of the key and the report's line, under the cache's secret."""


class Cache:
    """Reports of earlier runs, by key; ``None`` folder: caching is off (asked so, or
    the cache cannot be trusted in this run: :attr:`ignored` says why)."""

    def __init__(
        self, root: Path, enabled: bool, parse: Callable[[Path], ast.Module] = parse_source
    ) -> None:
        self.root, self.parse = root.resolve(), parse
        self.folder: Path | None = None
        self._secret = b""
        self._context: dict[str, Any] | None = None
        self._sources: dict[Path, str] = {}
        self._modules: dict[Path, list[tuple[str, str]]] = {}
        self._costs: dict[str, float] | None = None
        self.ignored: list[str] = []
        """What the run did not trust, each a line: an entry (its file, why, and that it
        was staged again), or the whole cache (why it is not used)."""
        if enabled:
            with self._trusted():
                _check_link(self.root / FOLDER, self.root)
                self._secret = secret()
                self.folder = self.root / FOLDER

    @contextlib.contextmanager
    def _trusted(self) -> Iterator[None]:
        """Turn the cache off for the rest of the run, saying why, on :class:`Untrusted`."""
        try:
            yield
        except Untrusted as err:
            self.folder = None
            self._note(str(err))

    def _note(self, line: str) -> None:
        if line not in self.ignored:
            self.ignored.append(line)

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
            "compile": job.compile,
            "memory": job.memory,
            "why": job.why,
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

    def _regular(self, path: Path) -> bool:
        """Whether ``path`` in the cache is a regular file; a link turns the cache off
        (:class:`Untrusted`), anything else that is not a file is noted and left."""
        _check_link(path.parent, self.root)
        _check_link(path, self.root)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return False
        if not stat.S_ISREG(mode):
            self._note(
                f"{self._display(path)} is not a regular file ({kind_of(mode)}); the cache "
                "ignores it (remove it)"
            )
        return stat.S_ISREG(mode)

    def has(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (:meth:`get` reads and checks it)."""
        if self.folder is None:
            return False
        with self._trusted():
            return self._regular(self._entry(key))
        return False

    def get(self, key: str) -> Report | None:
        """The report stored under ``key``; ``None`` when absent or not trustworthy (one
        of another format is a miss; why any other was not trusted is kept in
        :attr:`ignored`).

        An entry is two lines of JSON: its format, key, name, seconds and the HMAC of the
        key and the second line, then the report. One written without this cache's
        secret, or changed after it was written (truncated, edited, a flipped bit that
        still reads as JSON), does not verify."""
        if not self.has(key):  # nor a link: a cache that holds one is off
            return None
        path = self._entry(key)
        try:
            return self._read(path, key)
        except OSError as err:
            problem = f"{self._display(path)}: {err.strerror or err}"
        except UsageError as err:
            problem = str(err)
        except codec.DecodeError as err:
            problem = f"{self._display(path)}: {err.problem}"
        self._note(f"{problem}; staged again")
        return None

    def _read(self, path: Path, key: str) -> Report | None:
        """The entry's report (``DecodeError`` saying why it is not one)."""
        name = self._display(path)
        data = read_bytes(path, limit=JSON_LIMIT, inside=self.root, shown=name)
        head, _, text = data.partition(b"\n")
        with contextlib.suppress(codec.DecodeError):
            if codec.decode(head, _Format, source=name).format != FORMAT:
                return None  # another version's entry: a miss
        header = codec.decode(head, EntryHeader, source=name)
        if header.key != key:
            raise codec.DecodeError(name, "at $.key: expected the key it is stored under")
        expected = _mac(self._secret, key, text).encode()
        if not hmac.compare_digest(header.mac.encode(), expected):  # any text, never a crash
            raise codec.DecodeError(name, "written without this cache's secret, or edited")
        return codec.decode(text, Report, source=name)

    def _writable(self, path: Path) -> bool:
        """Whether ``path`` may be written: in a real subfolder of the cache, and new or a
        regular file (never a link, never replacing what is not a file)."""
        with self._trusted():
            return self._regular(path) or not os.path.lexists(path)
        return False

    def put(self, key: str, name: str, text: str, seconds: float) -> None:
        """Store a report (its JSON line, as the worker sent it); a cache that cannot be
        written is skipped, never fatal."""
        if self.folder is None:
            return
        data = text.encode()
        header = EntryHeader(FORMAT, key, name, seconds, _mac(self._secret, key, data))
        with contextlib.suppress(OSError, ValueError):
            self._prepare()
            path = self._entry(key)
            real_subfolder(path.parent.parent, path.parent.name)
            if self._writable(path):
                self._write(path, codec.line(header) + "\n" + text)

    def _write(self, path: Path, text: str) -> None:
        """Replace ``path`` in the cache, written in its folder held open from the root
        with no link at any level (:func:`~jxinspect.core.files.write_in`)."""
        folder = open_folder(path.parent, below=self.root)
        try:
            write_in(folder, path.name, text)
        finally:
            os.close(folder)

    def _prepare(self) -> None:
        prepare_folder(self.root)

    # ---- costs, for --shard ----

    def costs(self) -> dict[str, float]:
        """Seconds each target took when last staged (by target name): they balance the
        parts of ``--shard`` and nothing else, so they are read as they are; whatever is
        not a map of names to seconds is ignored."""
        if self._costs is None:
            self._costs = {}
            if self.folder is not None and self.has_costs():
                try:
                    data = json.loads(
                        read_text(self._costs_file(), limit=JSON_LIMIT, inside=self.root)
                    )
                except (OSError, UsageError, ValueError, RecursionError):
                    data = None
                if isinstance(data, dict):
                    self._costs = {
                        str(k): float(v)
                        for k, v in data.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                    }
        return self._costs

    def _costs_file(self) -> Path:
        assert self.folder is not None
        return self.folder / "costs.json"

    def has_costs(self) -> bool:
        """Whether the costs file is there to read (a link turns the cache off)."""
        with self._trusted():
            return self._regular(self._costs_file())
        return False

    def record_costs(self, seconds: dict[str, float]) -> None:
        if self.folder is None or not seconds:
            return
        costs = {**self.costs(), **seconds}
        if self.folder is None or not self._writable(self._costs_file()):
            return
        with contextlib.suppress(OSError, ValueError):
            self._prepare()
            text = json.dumps(dict(sorted(costs.items())), indent=0)
            self._write(self._costs_file(), text + "\n")
        self._costs = costs
