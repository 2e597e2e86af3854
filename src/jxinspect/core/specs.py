"""A partition spec as the tool writes it, and the layout it names: apart from
:mod:`jxinspect.core.model`, which re-exports them, so that the guard's fingerprint of a
program need not load the whole model."""

from __future__ import annotations

import functools
from collections.abc import Iterable


@functools.lru_cache(maxsize=4096)
def spec_text(entries: Iterable[str | tuple[str, ...] | None]) -> str:
    """A partition spec as the tool writes it everywhere: ``P('data', None)``,
    ``P(('data', 'fsdp'), 'model')``; an entry of one axis is that axis (``P('model')``,
    never ``P(('model',))`` nor Python's ``P('model',)``)."""

    def entry(axes: str | tuple[str, ...] | None) -> str:
        if isinstance(axes, tuple) and len(axes) == 1:
            axes = axes[0]
        if not isinstance(axes, tuple):
            return repr(axes)
        return "(" + ", ".join(map(repr, axes)) + ")" if axes else "None"

    return "P(" + ", ".join(map(entry, entries)) + ")"


def normalized_spec(
    entries: Iterable[str | tuple[str, ...] | None],
) -> tuple[str | tuple[str, ...] | None, ...]:
    """A partition spec's entries as the layout they name, as JAX lays an array out by
    them (``PartitionSpec._normalized_spec_for_aval``): an entry of one axis is that
    axis, an entry of none is ``None``, and trailing ``None`` entries are dropped (they
    split nothing): ``P('model', None)``, ``P(('model',))`` and ``P('model')`` are one."""
    kept = [
        (axes[0] if len(axes) == 1 else axes or None) if isinstance(axes, tuple) else axes
        for axes in entries
    ]
    while kept and kept[-1] is None:
        kept.pop()
    return tuple(kept)
