"""The staging plan: a staging API's keyword arguments, read once into the canonical
argument tuples every later step uses (which positions are static, which names, what
is donated), whatever the stage calls them.

Which option plays which part comes from the option table (:attr:`Option.role`), so
``jit``'s statics and ``pmap``'s (broadcast) statics are told apart in this one place.
Values the plan cannot read are left out of its tuples and handed to JAX as given: JAX
judges them. Imports no JAX.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from jxinspect.core.errors import UsageError
from jxinspect.core.vocabulary import Stage
from jxinspect.project import spec as specs
from jxinspect.project.options import (
    OPTIONS,
    Option,
    Role,
    TargetOptions,
    int_tuple,
    name_tuple,
)


def role_option(stage: Stage, role: Role) -> Option | None:
    """The option that plays ``role`` under ``stage``."""
    return next((o for o in OPTIONS if o.role == role and stage in o.stages), None)


def _key(stage: Stage, role: Role) -> str | None:
    """The staging API's keyword for the option that plays ``role`` under ``stage``."""
    option = role_option(stage, role)
    return option.keyword_for(stage) if option else None


@dataclass(frozen=True)
class StagingPlan:
    """How one call is staged."""

    stage: Stage
    keywords: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The staging API's keyword arguments, as given."""
    statics: tuple[int, ...] = ()
    """Static argument positions, as given (a negative one counts from the end)."""
    static_names: tuple[str, ...] = ()
    donated: tuple[int, ...] = ()
    donated_names: tuple[str, ...] = ()
    in_layout: Any = None
    """The input shardings (or shard_map specs) given, as given."""
    out_layout: Any = None
    mapped_axes: Any = 0
    """pmap's mapped axis per argument (one for all, or a tuple)."""
    axis: str | None = None
    """pmap's axis name, if given."""

    @classmethod
    def of(cls, stage: Stage, keywords: Mapping[str, Any] | None = None) -> StagingPlan:
        """The plan of ``keywords`` for ``stage``."""
        keywords = dict(keywords or {})

        def ints(role: Role) -> tuple[int, ...]:
            key = _key(stage, role)
            return (int_tuple(keywords.get(key)) or ()) if key else ()

        def names(role: Role) -> tuple[str, ...]:
            key = _key(stage, role)
            return (name_tuple(keywords.get(key)) or ()) if key else ()

        def given(role: Role, default: Any = None) -> Any:
            key = _key(stage, role)
            return keywords.get(key, default) if key else default

        return cls(
            stage,
            MappingProxyType(keywords),
            in_layout=given("in_layout"),
            out_layout=given("out_layout"),
            mapped_axes=given("mapped_axes", 0),
            axis=given("axis"),
            statics=ints("statics"),
            static_names=names("static_names"),
            donated=ints("donated"),
            donated_names=names("donated_names"),
        )

    @property
    def statics_key(self) -> str | None:
        """The keyword that names the static positions under this stage, for messages."""
        return _key(self.stage, "statics")

    def static_positions(self, count: int) -> frozenset[int]:
        """The static positions of a call with ``count`` positional arguments."""
        return positions(self.statics, count)


def positions(nums: tuple[int, ...], count: int) -> frozenset[int]:
    """Argument positions of a call with ``count`` positional arguments (a negative one
    counts from the end)."""
    return frozenset(n + count if n < 0 else n for n in nums)


def api_keywords(options: TargetOptions) -> dict[str, Any]:
    """The options the target's stage takes by their own name (:attr:`Option.keyword`),
    as the staging API's keyword arguments: those given (a flag only when set), specs
    parsed. Shardings and meshes need JAX objects: the pipeline builds those."""
    stage = options.stage_name
    result: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(options, option.name)
        if not option.keyword or stage not in option.stages or value is None:
            continue
        if option.parse is not None:
            try:
                result[option.name] = option.parse(value)
            except specs.SpecError as err:
                raise UsageError(f"{option.flag}: {err}") from None
        elif value:
            result[option.name] = value
    return result
