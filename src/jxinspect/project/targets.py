"""Find the user's function: parse a target, import its module.

Targets are ``pkg.module:func``, ``path/to/file.py:func`` or dotted attributes
(``file.py:Model.apply``). Files are imported under a name unique to their absolute
path, so ``before/model.py`` and ``after/model.py`` load side by side in one process.
A module's ``JXINSPECT`` declaration is read from its source by
:mod:`jxinspect.project.declarations`, before the import, so its devices take effect in time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import math
import os
import re
import site
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from jxinspect.core.errors import JxError, UsageError, UserCodeError, no_such_file
from jxinspect.core.interrupts import reraise_if_stopping

DECLARATION = "JXINSPECT"


@dataclass(frozen=True)
class Target:
    """A parsed target string."""

    text: str
    module: str
    """A file path (``is_file``) or a dotted module name."""
    attribute: str | None
    """``func`` or ``Model.apply``; ``None`` for "every declared function"."""
    is_file: bool

    @property
    def source_path(self) -> Path | None:
        """The module's source file, found without importing it."""
        if self.is_file:
            return Path(self.module)
        try:
            spec = find_module_spec(self.module)
        except JxError:
            return None  # load_module says why
        return Path(spec.origin) if spec is not None and spec.origin else None

    def with_attribute(self, attribute: str) -> Target:
        return Target(f"{self.module}:{attribute}", self.module, attribute, self.is_file)


def parse_target(text: str) -> Target:
    """``file.py:f`` / ``pkg.mod:f`` / ``file.py`` → :class:`Target`."""
    module, sep, attribute = text.rpartition(":") if ":" in text else (text, "", "")
    if not sep:
        module, attribute = text, ""
    module = module.strip()
    if not module:
        raise UsageError(f"bad target {text!r}: expected `module:function` or `file.py:function`")
    is_file = module.endswith(".py") or "/" in module or "\\" in module
    if attribute and not all(part.isidentifier() for part in attribute.split(".")):
        raise UsageError(f"bad target {text!r}: {attribute!r} is not a dotted Python name")
    return Target(text, module, attribute or None, is_file)


def _unique_name(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"_jxinspect_{stem}_{digest}"


_KNOWN_AS: dict[str, str] = {}
"""Each file target's module's unique name → the name its user imports it by."""


def known_name(module: str) -> str:
    """The name the user knows a module by: a file target's import name (``train``,
    ``models.train``) for the unique name it was loaded under, else ``module``."""
    return _KNOWN_AS.get(module, module)


def _import_names(path: Path) -> list[str]:
    """The names ``import`` finds this file by: its stem (its folder goes first on
    ``sys.path``), and ``pkg.sub.stem`` up its packages when their root is on the path
    or is the working folder (where ``module:function`` targets are found).
    Names of the standard library are never taken."""
    if not path.stem.isidentifier() or path.stem in sys.stdlib_module_names:
        return []
    names, parts, folder = [path.stem], [path.stem], path.parent
    roots = {str(Path(p or ".").resolve()) for p in (*sys.path, ".")}  # module targets: cwd
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
        if str(folder) in roots:
            names.append(".".join(parts))
    return names


def load_module(target: Target) -> ModuleType:
    """Import the target's module; errors become one-line :class:`JxError`s."""
    if target.is_file:
        path = Path(target.module).resolve()
        if not path.is_file():
            raise no_such_file(target.module)
        name = _unique_name(path)
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"cannot import {target.module}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        # also under the names other code imports it by (`import train`, `models.train`),
        # so an --args-from module that imports it does not run it a second time
        names = [name, *(n for n in _import_names(path) if n not in sys.modules)]
        _KNOWN_AS[name] = (_import_names(path) or [path.stem])[-1]
        for alias in names:
            sys.modules[alias] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as err:
            for alias in names:
                sys.modules.pop(alias, None)
            raise _import_failure(target.module, err) from err
        return module
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    if find_module_spec(target.module) is None:
        raise UsageError(
            f"no such module: {target.module} (run from the folder that holds it, "
            "or give a file path such as path/to/file.py:function)"
        )
    try:
        return importlib.import_module(target.module)
    except BaseException as err:
        raise _import_failure(target.module, err) from err


def find_module_spec(name: str) -> Any:
    """``importlib.util.find_spec``, which imports the parent packages: ``None`` when a
    part of the dotted name does not exist, :class:`UserCodeError` when a parent raises."""
    if name in sys.modules:
        return getattr(sys.modules[name], "__spec__", None)
    try:
        return importlib.util.find_spec(name)
    except ModuleNotFoundError as err:
        parts = name.split(".")
        if err.name in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}:
            return None
        raise _import_failure(name, err) from err
    except BaseException as err:
        raise _import_failure(name, err) from err


def _import_failure(where: str, err: BaseException) -> UserCodeError:
    if isinstance(err, SyntaxError):
        return UserCodeError(
            f"syntax error in {err.filename}:{err.lineno}: {err.msg}; fix the file and run again"
        )
    reraise_if_stopping(err)
    return UserCodeError(f"importing {where} failed: {describe_exception(err)}{mesh_hint(err)}")


_TOO_FEW_FOR_MESH = re.compile(
    r"Number of devices \d+ must be >= the product of mesh_shape \(([\d, ]+)\)"
)
"""JAX's ``make_mesh`` error when the module builds a mesh larger than the devices."""


def mesh_hint(err: BaseException, builder: str = "", topology: str | None = None) -> str:
    """How to give code that builds a mesh of more devices than there are (JAX's
    ``make_mesh`` error) what it needs: the devices simulated, or under ``--topology``
    (whose devices are the topology's) the mesh jxinspect sets up. ``builder``: what
    builds it (``--args-from make``), else the module at import."""
    found = _TOO_FEW_FOR_MESH.search(str(err))
    if found is None:
        return ""
    if topology is not None:
        return (
            f"; under --topology the inputs lie on {topology}'s devices: build them on the "
            "mesh jxinspect sets up (jax.sharding.get_abstract_mesh(), the ambient mesh), "
            "not on a mesh of your own"
        )
    needed = math.prod(int(n) for n in found.group(1).replace(" ", "").split(",") if n)
    who = f"{builder} builds" if builder else "the module builds"
    return (
        f"; {who} a mesh of {needed} devices{'' if builder else ' at import'}: simulate "
        f"them with --devices {needed} (or `devices: {needed}` in its declaration or "
        "configuration)"
    )


_TYPECHECK_LINES = ("The problem arose whilst typechecking", "Actual value:", "Expected type:")
"""The lines of jaxtyping's ``TypeCheckError`` that say which parameter, and why."""


def describe_exception(err: BaseException) -> str:
    """``ValueError: msg (at file.py:12 in f)``, naming the innermost frame of user code;
    ``called sys.exit(0) (at ...)`` for an exit, which is a failure too, whatever its code."""
    lines = str(err).strip().splitlines()
    message = lines[0] if lines else ""
    # a type checker's (jaxtyping with beartype) first line names the function; the
    # parameter, its value and the type it wanted follow
    said = [line for line in lines[1:4] if line.startswith(_TYPECHECK_LINES)]
    if said:
        message = f"{message.rstrip('.')}: " + " ".join(line.rstrip(".") + ";" for line in said)
        message = message.rstrip(";")
    text = f"{type(err).__name__}: {message}" if message else type(err).__name__
    if isinstance(err, SystemExit):
        text = f"called sys.exit({err.code!r})"
    elif isinstance(err, KeyboardInterrupt):
        text = "raised KeyboardInterrupt"
    frame = user_frame(err)
    return f"{text} (at {frame})" if frame else text


def user_frame(err: BaseException) -> str | None:
    """The innermost traceback frame outside JAX, jaxlib, jxinspect and the standard
    library, each known by where its modules are (never by a word in a path: a user's
    ``jax/model.py``, or a clone named ``jxinspect``, is the user's)."""
    frames = traceback.extract_tb(err.__traceback__)
    outside = _not_users()
    for frame in reversed(frames):
        name = frame.filename
        if name.startswith("<frozen ") or os.path.abspath(name).startswith(outside):
            continue
        return f"{name}:{frame.lineno} in {frame.name}"
    return None


def is_users_file(path: str) -> bool:
    """Whether a source file is the user's: outside the folders of :func:`_not_users`."""
    return not (path.startswith("<") or os.path.abspath(path).startswith(_not_users()))


def _not_users() -> tuple[str, ...]:
    """The folders (each ending in a separator) whose frames are not the user's: the
    loaded packages of JAX, jaxlib and jxinspect, the standard library and the installed
    packages (an error inside Flax is located at the user's line that called it). Worked
    out once for each set of those packages loaded: every frame of a program asks."""
    loaded = tuple(
        tuple(getattr(sys.modules.get(name), "__path__", ()))
        for name in ("jax", "jaxlib", "jxinspect")
    )
    return _folders_not_users(loaded)


@functools.cache
def _folders_not_users(loaded: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    folders = [folder for paths in loaded for folder in paths]
    folders += [sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    folders += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    folders.append(os.path.dirname(contextlib.__file__))
    found = {os.path.abspath(f) for f in folders if f} | {os.path.realpath(f) for f in folders if f}
    return tuple(folder.rstrip(os.sep) + os.sep for folder in sorted(found))


def resolve_attribute(module: ModuleType, target: Target) -> Any:
    """Follow ``Model.apply`` from the module; check the result is callable."""
    assert target.attribute is not None
    obj: Any = module
    walked: list[str] = []
    for part in target.attribute.split("."):
        walked.append(part)
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            from jxinspect.project.options import nearest

            raise UsageError(
                f"{target.module} has no attribute `{'.'.join(walked)}`{nearest(part, names)}"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(
            f"{target.text} is {_article(type(obj).__name__)} {type(obj).__name__}, not a "
            "function; name a callable"
        )
    return obj


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def user_prints_to_stderr() -> contextlib.AbstractContextManager[object]:
    """While the user's code runs: its prints go to stderr, never into the payload."""
    return contextlib.redirect_stdout(sys.stderr)
