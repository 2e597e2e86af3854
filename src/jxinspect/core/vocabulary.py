"""The words every part of jxinspect shares, in one place: the staging APIs, platforms,
partitioners, severities, how far staging got, a leaf's name status, whose fault a
failure is, a report's views, and how releases are ordered.

The command line's choices (typer reads the ``Literal`` types), the configuration's
checks, the data model's types, the rules and the HTML filters all read them from here.
Imports nothing of jxinspect and no JAX.
"""

from __future__ import annotations

import enum
import re
from typing import Literal, get_args

Stage = Literal["jit", "pjit", "pmap", "shard_map"]
"""The staging API a target goes through."""
STAGES: tuple[Stage, ...] = get_args(Stage)

Platform = Literal["cpu", "gpu", "cuda", "rocm", "tpu"]
"""The platform a program is lowered for."""
PLATFORMS: tuple[Platform, ...] = get_args(Platform)

Partitioner = Literal["shardy", "gspmd"]
"""Who reads the shardings: Shardy (``sdy.sharding``) or GSPMD (``mhlo.sharding``)."""
PARTITIONERS: tuple[Partitioner, ...] = get_args(Partitioner)

Severity = Literal["error", "warning", "info"]
"""How bad a finding is, most severe first."""
SEVERITIES: tuple[Severity, ...] = get_args(Severity)

CollectiveKind = Literal[
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
    "collective-broadcast",
]  # fmt: skip
"""A collective, as the optimized HLO spells it (an asynchronous one adds
``-start``/``-done``)."""
COLLECTIVE_KINDS: tuple[CollectiveKind, ...] = get_args(CollectiveKind)

FailOn = Literal["error", "warning", "info", "never"]
"""The gate: fail on findings at or above a severity, or never."""
FAIL_ON: tuple[FailOn, ...] = get_args(FailOn)

Reached = Literal["failed", "traced", "lowered", "compiled"]
"""How far staging got."""
REACHED: tuple[Reached, ...] = get_args(Reached)

Status = Literal["ok", "synthetic", "missing", "mismatch", "pruned", "renamed"]
"""What a leaf's name is: the user's path (``ok``), JAX's fallback (``synthetic``), none
(``missing``), another leaf's (``mismatch``), the argument was dropped (``pruned``), or
the name a library's wrapper gave it (``renamed``: ``model.states[0][3]`` for
``model.linear1.kernel.value``)."""
STATUSES: tuple[Status, ...] = get_args(Status)

ErrorKind = Literal["usage", "user-code", "internal", "timeout", "interrupted"]
"""Whose fault a target's failure is: the command line's or configuration's (exit 2), the
user's code (exit 3), jxinspect's (exit 4), the time limit's, or Ctrl-C's."""
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)
USAGE, USER_CODE, INTERNAL, TIMEOUT, INTERRUPTED = ERROR_KINDS
"""Each error kind by name, for the code that gives one (never its string again)."""

ReasonKind = Literal[
    "shape", "dtype", "weak_type", "sharding", "static", "structure", "function",
    "constants", "context",
]  # fmt: skip
"""Why a function compiled again: a leaf's shape, dtype, weak type (a Python scalar
where an array was) or sharding; a static argument's value; the pytree's structure; a
new function object for the same code (a ``jit`` or ``lambda`` made per call); the same
inputs making another program (closed-over values); JAX's tracing context (the
configuration, the mesh)."""
REASON_KINDS: tuple[ReasonKind, ...] = get_args(ReasonKind)

View = Literal["jaxpr", "mlir", "sharding", "collectives", "memory", "why"]
"""What a report draws after its text (``lower --show``, ``Report.show``): the annotated
jaxpr, the annotated module, the sharding pictures, the compiled program's collectives,
the buffers live at its peak, why each collective is there. The command line's choice, the renderers
(``render.report.views``) and the README's list of views follow :data:`VIEWS`."""
VIEWS: tuple[View, ...] = get_args(View)
COMPILED_VIEWS: tuple[View, ...] = ("collectives", "memory", "why")
"""The views of what compiling made: asking for one compiles."""


def view_named(name: str) -> View:
    """The view called ``name``; a ``ValueError`` that lists the views for any other."""
    for view in VIEWS:
        if view == name:
            return view
    raise ValueError(f"unknown view {name!r}: use {either(VIEWS)}")


def either(names: tuple[str, ...]) -> str:
    """``jaxpr, mlir or sharding``: names of a closed set as a sentence offers them."""
    return " or ".join(filter(None, (", ".join(names[:-1]), *names[-1:])))


def choice(name: str, names: tuple[str, ...]) -> type[enum.Enum]:
    """``name``: a ``str`` enum of ``names``, in order, for a command-line choice typer
    takes no ``Literal`` for (a repeated option's, a product's formats)."""
    return enum.Enum(name, {each: each for each in names}, type=str)  # type: ignore[return-value]


SEVERITY_RANK: dict[str, int] = {s: len(SEVERITIES) - i for i, s in enumerate(SEVERITIES)}
"""``error`` ranks highest."""


def release_key(version: str) -> tuple[int, int, int, int]:
    """``0.4.35`` → ``(0, 4, 35, 0)``, ``0.12.0.1`` → ``(0, 12, 0, 1)``, for ordering JAX
    releases: what follows a part's digits (``0.4.36rc1``) is dropped, a missing or
    unreadable part (``0.5.0.dev1``'s fourth) is 0."""
    parts = [int((re.findall(r"^\d+", part) or ["0"])[0]) for part in version.split(".")[:4]]
    major, minor, patch, post = (*parts, 0, 0, 0, 0)[:4]
    return major, minor, patch, post
