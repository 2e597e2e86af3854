"""One resolver: a target → its options and device plan, for ``lower``, ``diff-debug``,
``lint``, ``record``'s replay and the API alike.

Options come in four layers, weakest first: the project configuration's ``defaults``
(``jxinspect.yaml`` or ``[tool.jxinspect]``, found from the working folder unless a
command passes its own), the module's ``JXINSPECT`` entry for the function, the
configuration's entry for the target, then the flags. The declaration is read from the
source when it is plain data, so the devices it asks for are simulated before the
module is imported; a declaration only the imported module can tell (built at import
time, wholly or in part) is applied by :meth:`Resolved.imported`, and its devices then
too. Nothing here imports JAX or the user's module.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Final, Literal

from jxinspect.core.errors import UsageError
from jxinspect.project import spec as specs
from jxinspect.project.config import (
    POLICY_KEYS,
    Config,
    PolicyOverride,
    declared_override,
    project_config,
)
from jxinspect.project.declarations import Declaration, OpaqueDeclaration, static_declaration
from jxinspect.project.options import NO_OPTIONS, TargetOptions, options_from_mapping
from jxinspect.project.targets import DECLARATION, Target, load_module, parse_target

DeclarationReader = Callable[[Path], "Declaration | None"]
"""Reads a module's declaration from its source (``lint`` passes one that caches)."""


@dataclass(frozen=True)
class Resolved:
    """A target with its options, resolved without importing its module; plain data,
    so ``lint`` can send it to a worker process."""

    target: Target
    given: TargetOptions = NO_OPTIONS
    """The command line's flags: these win."""
    entry: TargetOptions = NO_OPTIONS
    """The configuration's entry for this target: over the declaration."""
    defaults: TargetOptions = NO_OPTIONS
    """The configuration's ``defaults``: the declaration wins over them."""
    declared: TargetOptions | None = None
    """The module's ``JXINSPECT`` entry for the function, when there is one."""
    declared_at_import: bool = False
    """The declaration is not plain data: :meth:`imported` reads it from the module."""
    declared_policy: PolicyOverride = PolicyOverride()
    """The declaration's per-target keys (``compile``, ``budgets``, ``select``...), under
    the configuration entry's."""

    @property
    def options(self) -> TargetOptions:
        """The layers merged: flags over entry over declared over defaults."""
        base = self.declared.merged_over(self.defaults) if self.declared else self.defaults
        return self.given.merged_over(self.entry.merged_over(base))

    @property
    def options_before_import(self) -> TargetOptions:
        """The options known before the module is imported (its devices are simulated
        then): all of them, or, when the declaration is read at import and may override
        the configuration's defaults, only the layers over it."""
        if not self.declared_at_import:
            return self.options
        return self.given.merged_over(self.entry)

    def imported(self, module: ModuleType) -> Resolved:
        """Apply a declaration that only the imported module can tell."""
        if not self.declared_at_import:
            return self
        entries = getattr(module, DECLARATION, None)
        entry = entries.get(self.target.attribute) if isinstance(entries, dict) else None
        where = f"{self.target.module}: {self.target.attribute!r} in {DECLARATION}"
        if entry is None:
            return replace(self, declared=None, declared_at_import=False)
        options, policy = declared_override(entry, where)
        return replace(self, declared=options_from_mapping(options, where, also=POLICY_KEYS),
                       declared_policy=policy, declared_at_import=False)  # fmt: skip

    @property
    def devices_needed(self) -> int:
        """CPU devices the target asks for: ``devices``, or a concrete mesh's size; 0 for
        none."""
        options = self.options
        if options.devices:
            return options.devices
        if options.mesh and not options.abstract:
            return math.prod(size for _, size in mesh_axes(options.mesh))
        return 0


def mesh_axes(text: str) -> tuple[tuple[str, int], ...]:
    """``data=2,model=4`` → its axes; a bad spec is the user's (exit 2)."""
    try:
        return tuple(specs.parse_mesh(text))
    except specs.SpecError as err:
        raise UsageError(f"--mesh: {err}") from None


FIND_CONFIG: Final = "find"
"""Read the configuration found from the working folder (``lint`` passes its own)."""


def resolve(
    target: Target | str,
    given: TargetOptions = NO_OPTIONS,
    config: Config | None | Literal["find"] = FIND_CONFIG,
    read: DeclarationReader = static_declaration,
) -> Resolved:
    """Resolve one function: its declaration read from the module's source (never by
    importing it), under the configuration's entry for it and ``given``, over the
    configuration's ``defaults``."""
    if isinstance(target, str):
        target = parse_target(target)
    if target.attribute is None:
        raise UsageError(f"name the function: {target.text}:FUNCTION")
    if config == FIND_CONFIG:
        config = project_config()
    layers = Resolved(target, given)
    if isinstance(config, Config):
        layers = replace(layers, entry=config_entry(config, target), defaults=config.defaults)
    path = target.source_path
    if path is None or not path.is_file():
        # a module found only once imported (or a missing file: the import says so)
        return replace(layers, declared_at_import=True)
    try:
        declaration = read(path)
    except OpaqueDeclaration:
        return replace(layers, declared_at_import=True)
    if declaration is None or target.attribute not in declaration.entries:
        return layers
    entry = declaration.entries[target.attribute]
    if entry is None:  # computed when the module is imported
        return replace(layers, declared_at_import=True)
    where = f"{path}:{declaration.line}: {target.attribute!r} in {DECLARATION}"
    options, policy = declared_override(entry, where)
    return replace(
        layers,
        declared=options_from_mapping(options, where, also=POLICY_KEYS),
        declared_policy=policy,
    )


def config_entry(config: Config, target: Target) -> TargetOptions:
    """The options of the configuration's last entry naming ``target`` (its file, or its
    module, and its function or none)."""
    found = NO_OPTIONS
    for entry in config.targets:
        named = parse_target(entry.target)
        if named.attribute not in (None, target.attribute):
            continue
        if named.is_file != target.is_file:
            continue
        if named.is_file:
            same = (config.root / named.module).resolve() == Path(target.module).resolve()
        else:
            same = named.module == target.module
        if same:
            found = entry.options
    return found


def declared_functions(
    target: Target, read: DeclarationReader = static_declaration
) -> tuple[str, ...]:
    """The functions a module's ``JXINSPECT`` declares, in order: read from its source, or
    from the imported module when only the import can tell; ``()`` for none."""
    path = target.source_path
    if path is not None and path.is_file():
        try:
            declaration = read(path)
        except OpaqueDeclaration:
            pass  # built at import time
        else:
            return declaration.functions if declaration is not None else ()
    entries = getattr(load_module(target), DECLARATION, None)
    return tuple(str(key) for key in entries) if isinstance(entries, dict) else ()
