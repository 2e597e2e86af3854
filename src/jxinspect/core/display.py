"""Products that display themselves: a one-line ``repr``, a notebook cell, ``rich`` text.

Core imports no renderer. The drawing is handed down from above: the root package,
which runs before any of its submodules, gives :func:`provide` a function that imports
``jxinspect.render.display`` when a product is first displayed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol


class Renderers(Protocol):
    """What :class:`Displayed` asks of the renderers (``jxinspect.render.display``)."""

    def describe(self, product: Displayed) -> str: ...

    def cell_html(self, product: Displayed) -> str: ...

    def rich_text(self, product: Displayed) -> Any: ...

    def show(self, product: Displayed, view: str) -> None: ...


_providers: list[Callable[[], Renderers]] = []


def provide(provider: Callable[[], Renderers]) -> None:
    """Set where the renderers come from (the root package does, at import)."""
    _providers[:] = [provider]


def renderers() -> Renderers:
    if not _providers:
        raise RuntimeError("no renderers: import jxinspect before displaying its products")
    return _providers[0]()


class Displayed:
    """Mixin: ``repr``, ``_repr_html_`` and ``__rich__`` drawn by the renderers of the
    format registry's ``product`` (declare the dataclass with ``repr=False``)."""

    __slots__ = ()

    product: ClassVar[str]
    """The product's name in the format registry (``report``, ``diff``, ``lint``)."""

    def __repr__(self) -> str:
        return renderers().describe(self)

    def _repr_html_(self) -> str:
        return renderers().cell_html(self)

    def __rich__(self) -> Any:
        return renderers().rich_text(self)
