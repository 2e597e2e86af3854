""" "Fixed in" advice, read from the surveys shipped with jxinspect (``jxinspect/surveys``,
one ``jax-<release>.json`` per supported release, made by ``jxinspect survey``).

A finding that names a program shape (``nested:scan``) is advised when the shipped
surveys say which release keeps what it lost: the release of the report (or the newest
surveyed one before it) loses it, and a newer surveyed release and every one after keep
it. Nothing is guessed: no survey of the shape, no advice.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from importlib import resources

from jxinspect.core import codec
from jxinspect.core.model import Finding
from jxinspect.core.survey import Outcome, Survey, rank
from jxinspect.core.vocabulary import release_key
from jxinspect.rules.base import Surveyed

SHIPPED = "surveys"
"""The folder of the shipped surveys, in the ``jxinspect`` package."""


@functools.cache
def shipped() -> tuple[Survey, ...]:
    """The shipped surveys, oldest release first (read once)."""
    folder = resources.files("jxinspect").joinpath(SHIPPED)
    found = []
    for entry in folder.iterdir():
        if entry.name.startswith("jax-") and entry.name.endswith(".json"):
            found.append(codec.decode(entry.read_bytes(), Survey, source=f"{SHIPPED}/{entry.name}"))
    return tuple(sorted(found, key=lambda s: release_key(s.jax_version)))


def kept(survey: Survey, shape: str, fixed_when: Outcome = "kept") -> bool | None:
    """Whether every cell of ``shape`` in the survey is at worst ``fixed_when``; ``None``
    for no cell."""
    cells = survey.cells_of_shape(shape)
    return all(rank(c.verdict) <= rank(fixed_when) for _, c in cells) if cells else None


def fixed_in(shape: str, release: str | None, fixed_when: Outcome = "kept") -> str | None:
    """The first surveyed release newer than ``release`` from which ``shape`` is kept (at
    worst ``fixed_when``) in every surveyed release, where ``release`` (or the newest
    surveyed before it) loses it."""
    if release is None:  # a program text, which names no release
        return None
    key = release_key(release)
    surveys = shipped()
    older = [s for s in surveys if release_key(s.jax_version) <= key]
    if older and kept(older[-1], shape, fixed_when) is not False:
        return None  # this release keeps it (or no survey says): the loss is not the release's
    newer = [s for s in surveys if release_key(s.jax_version) > key]
    first: str | None = None
    for survey in newer:
        keeps = kept(survey, shape, fixed_when)
        if keeps is None:
            continue
        first = (first or survey.jax_version) if keeps else None
    return first


def advise(
    findings: tuple[Finding, ...], release: str | None, surveyed: dict[str, Surveyed]
) -> tuple[Finding, ...]:
    """``findings``, each one whose shape a newer surveyed release fixes saying so
    (``surveyed``: the rules' survey links, by code)."""
    advised = []
    for finding in findings:
        link = surveyed.get(finding.code)
        fixed = (
            fixed_in(finding.shape, release, link.fixed_when) if finding.shape and link else None
        )
        if fixed is not None:
            finding = replace(
                finding,
                fixed_in=fixed,
                message=f"{finding.message} (fixed in JAX {fixed}, this is {release})",
            )
        advised.append(finding)
    return tuple(advised)


def summary(link: Surveyed) -> list[str]:
    """What the shipped surveys say of each shape of a rule, a line each (``nested:scan:
    lost in 0.4.35, 0.4.38; kept in 0.5.3, ... (fixed in 0.5.3)``), for ``explain``."""
    surveys = shipped()
    shapes = sorted({c.shape for s in surveys for p in s.programs for c in p.cells
                     if c.shape and c.shape.startswith(link.shapes)})  # fmt: skip
    lines = []
    for shape in shapes:
        verdicts = [(s.jax_version, kept(s, shape, link.fixed_when)) for s in surveys]
        said = [(v, k) for v, k in verdicts if k is not None]
        lost = [v for v, k in said if not k]
        keeps = [v for v, k in said if k]
        if not lost:
            words = "kept in every surveyed release"
        elif not keeps:
            words = "lost in every surveyed release"
        else:
            fixed = fixed_in(shape, lost[0], link.fixed_when)
            words = f"lost in {', '.join(lost)}; kept in {', '.join(keeps)}"
            if fixed is not None:
                words += f" (fixed in {fixed})"
        lines.append(f"{shape}: {words}")
    return lines
