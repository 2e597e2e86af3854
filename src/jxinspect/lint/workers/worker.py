"""Inside a lint worker process: import JAX once, then stage the jobs a run sends.

A worker keeps the modules it imported while it stages targets of one module; before a
target of another module, the user's own modules (everything outside the installed
packages and the standard library) are forgotten and ``sys.path`` and JAX's
configuration are put back, so sibling folders that each hold a ``models.py`` never see
each other's. A module of ours that holds what a forgotten one defined (the Flax NNX
adapter, built against a Flax checkout in the project) is forgotten too, so it is built
again against the next target's own. ``SystemExit``, ``KeyboardInterrupt``, recursion
and memory errors raised by user code are caught here and are that target's failure.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import sysconfig
import traceback
import types
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from jxinspect.core.errors import JxError, TooFewDevices, error_kind, internal_error
from jxinspect.core.vocabulary import INTERNAL, USAGE, USER_CODE
from jxinspect.lint.workers.protocol import Job, Outcome, sent


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix}
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots)


def _forget_user_modules(before: set[str], roots: tuple[str, ...]) -> None:
    """Drop the modules imported since ``before`` that are the user's own, and each of
    ours that holds what one of them defined (an adapter's classes of a Flax checkout in
    the project): imported again, it holds the next target's own."""
    forgotten: set[str] = set()
    for name in [n for n in sys.modules if n not in before]:
        if name == "jxinspect" or name.startswith("jxinspect."):
            continue
        if _is_users(sys.modules[name], roots):
            _forget(name)
            forgotten.add(name)
    while forgotten:
        holding = [
            name
            for name, module in list(sys.modules.items())
            if (name == "jxinspect" or name.startswith("jxinspect."))
            and _holds(module, name, forgotten)
        ]
        for name in holding:
            _forget(name)
        forgotten = set(holding)


def _is_users(module: Any, roots: tuple[str, ...]) -> bool:
    """A module of the user's: its file, or a namespace package's folders, outside the
    installed packages and the standard library (one with neither, made by an extension
    module, is not)."""
    file = getattr(module, "__file__", None)
    places = [file] if isinstance(file, str) else list(getattr(module, "__path__", None) or ())
    return any(not os.path.realpath(place).startswith(roots) for place in places)


def _forget(name: str) -> None:
    """Drop a module, and its parent package's attribute for it (``from package import
    module`` takes the attribute, when there is one, over importing it again)."""
    module = sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    if parent and getattr(sys.modules.get(parent), child, None) is module:
        with contextlib.suppress(AttributeError, TypeError):
            delattr(sys.modules[parent], child)


def _holds(module: Any, name: str, forgotten: set[str]) -> bool:
    """Whether a module's globals hold a forgotten module (not a submodule of its own) or
    an object one defined."""
    for value in list(getattr(module, "__dict__", {}).values()):
        if isinstance(value, types.ModuleType):
            if value.__name__ in forgotten and value.__name__.rpartition(".")[0] != name:
                return True
        else:
            owner = getattr(value, "__module__", None)
            if isinstance(owner, str) and owner in forgotten:
                return True
    return False


def prepare(root: Path) -> None:
    """Before any user module: make the root importable and import JAX (its backend, and
    so the device count, starts with the first target).

    JAX's modules then move to the collector's permanent generation (``gc.freeze``): they
    live as long as the process, and tracing 50 targets otherwise spends a tenth of its
    time rescanning them. The collector is off while they load: importing JAX makes
    hundreds of thousands of objects that all stay, and collecting while it does costs
    an eighth of the import (every run waits for it).
    """
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    load_jax()


def load_jax() -> None:
    """Import JAX with the collector off, then freeze what it made (:func:`prepare`
    says why); the supervisor does it too, once, before it forks workers."""
    gc.disable()
    try:
        from jxinspect.tracer import seam

        seam.import_jax()  # what every target needs, loaded before the freeze
    finally:
        gc.freeze()
        gc.enable()


def stage(job: Job, show_traceback: bool = False) -> Outcome:
    """Stage one target, unjudged (the run judges what it receives: one judge); never
    raises: whatever the user's code does (exit, interrupt, recursion, memory) is this
    target's outcome."""
    from jxinspect.pipeline import inspect_target
    from jxinspect.project.targets import describe_exception, user_prints_to_stderr

    try:
        with user_prints_to_stderr():
            report = inspect_target(
                job.resolved, compile=job.compile, memory=job.memory, freeze=False,
                judged=False, why=job.why,
            )  # fmt: skip
        return sent(report)
    except TooFewDevices as err:
        return Outcome(None, str(err), USAGE, needs_devices=err.needed)
    except JxError as err:
        if show_traceback:
            traceback.print_exc()
        return Outcome(None, str(err), error_kind(err))
    except Exception as err:
        if show_traceback:
            traceback.print_exc()
        return Outcome(None, internal_error(err), INTERNAL)
    except BaseException as err:  # SystemExit, KeyboardInterrupt... raised by the user's code
        return Outcome(None, f"the target {describe_exception(err)}", USER_CODE)


def _simulate(devices: int | None) -> Outcome | None:
    """Simulate the run's devices before the first target; an outcome if that fails."""
    from jxinspect.tracer.devices import prepare_devices

    try:
        if devices is not None and devices > 1:
            prepare_devices(None, devices)
    except JxError as err:
        return Outcome(None, str(err), error_kind(err))
    return None


class WorkerState:
    """What a worker keeps from target to target, and how it stages the jobs of a run."""

    def __init__(self, show_traceback: bool) -> None:
        self.show_traceback = show_traceback
        self.simulated = self.warmed = False
        self.devices: int | None = None
        """The CPU devices its backend simulates (fixed by the first job)."""
        self.roots = _installed_roots()
        self.path, self.modules = list(sys.path), set(sys.modules)
        self.group: str | None = None
        self.config: dict[str, Any] | None = None

    def reset(self) -> None:
        """Before another module's targets: forget the user's own modules and put back
        ``sys.path`` and JAX's configuration as they were before any target."""
        from jxinspect.tracer import seam

        sys.path[:] = self.path
        _forget_user_modules(self.modules, self.roots)
        if self.config is not None:
            seam.restore_config(self.config)
        self.group = None

    def session(self, conn: Connection) -> None:
        """Stage the jobs ``conn`` sends until it ends (``None``, or closed)."""
        from jxinspect.tracer import seam

        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message is None:
                return
            job, devices = message
            if not self.simulated:
                failed = _simulate(devices)
                if failed is not None:
                    if job is not None:
                        conn.send(failed)
                    continue
                self.simulated, self.devices = True, devices
                self.config = seam.config_values()
            if job is None:  # warm up for the next run (a kept worker): nothing to send
                if not self.warmed:
                    seam.warm_up()
                    gc.freeze()
                    self.warmed = True
                continue
            if self.group is not None and job.group != self.group:
                self.reset()
            self.group = job.group
            conn.send(stage(job, self.show_traceback))
            if not self.warmed:
                # what JAX set up for its first program lives as long as the worker: out
                # of the collector's way (only this first target's own objects stay with it)
                gc.freeze()
                self.warmed = True


def worker_main(conn: Connection, root: str, show_traceback: bool, supervisor: int) -> None:
    """A worker of one run: import JAX once, then stage jobs until told to stop. It ends
    with the ``supervisor`` process however that ends (a SIGKILL included); Ctrl-C is
    the supervisor's to handle, which stops it."""
    from jxinspect.core import interrupts

    interrupts.die_with_parent(supervisor)
    interrupts.leave_to_parent()
    os.dup2(2, 1)  # the user's prints never reach the supervisor's payload
    prepare(Path(root))
    state = WorkerState(show_traceback)
    conn.send("ready")
    state.session(conn)
