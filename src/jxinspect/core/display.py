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


_provider: Callable[[], Renderers]
"""Where the renderers come from: set by the root package as it is imported, which Python
does before any of its submodules (so before any product exists to display)."""


def provide(provider: Callable[[], Renderers]) -> None:
    """Set where the renderers come from (the root package does, at import)."""
    global _provider
    _provider = provider


def renderers() -> Renderers:
    return _provider()


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
