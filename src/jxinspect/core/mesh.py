"""A device mesh as a report keeps it (named axes with sizes), and the most devices one
may name: apart from :mod:`jxinspect.core.model`, whose codec hook it is, so that reading
a small record (the guard's) need not load the whole model."""

from __future__ import annotations

import math

MAX_DEVICES = 2**32
"""The most devices a mesh, a tile count or a report read from a file may name: a few
bytes of JSON cannot name a mesh of 10**18 devices that a view then draws. Above what JAX
makes (it counts a sharding's devices in 32 bits, at most 2**31 - 1: ``lower`` says so),
so no report of a real staging is refused; the views draw any mesh up to it in bounded
memory (bench/sharding_view.py measures 4096×4096)."""


class Mesh:
    """A device mesh: named axes with sizes, in order. Written as its text,
    ``"data=2,model=4"`` (the codec's one hook: a mesh is a value, not an object)."""

    __slots__ = ("axes", "abstract")

    axes: tuple[tuple[str, int], ...]
    """``(("data", 2), ("model", 4))``."""
    abstract: bool
    """True for an ``AbstractMesh`` (a topology that need not be present)."""

    def __init__(self, axes: tuple[tuple[str, int], ...], abstract: bool = False) -> None:
        object.__setattr__(self, "axes", tuple(axes))
        object.__setattr__(self, "abstract", abstract)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Mesh is immutable: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mesh):
            return NotImplemented
        return (self.axes, self.abstract) == (other.axes, other.abstract)

    def __hash__(self) -> int:
        return hash((self.axes, self.abstract))

    def __repr__(self) -> str:
        return f"Mesh({self.axes!r}, abstract={self.abstract!r})"

    def __reduce__(self) -> tuple[type[Mesh], tuple[tuple[tuple[str, int], ...], bool]]:
        return (Mesh, (self.axes, self.abstract))  # pickle and copy, past __setattr__

    @property
    def size(self) -> int:
        return math.prod(size for _, size in self.axes)

    def axis_size(self, name: str) -> int:
        """Size of an axis; a Shardy sub-axis ``x:(2)4`` has size 4."""
        if ":(" in name:
            return int(name.rsplit(")", 1)[1])
        return dict(self.axes).get(name, 1)

    def __str__(self) -> str:
        return ",".join(f"{name}={size}" for name, size in self.axes)

    def typed(self, types: tuple[str, ...] | None) -> str | None:
        """Its axes' types in words: ``Explicit`` (every axis alike) or ``data Explicit,
        model Auto``; ``None`` where ``types`` are unknown or not one per axis."""
        if not types or len(types) != len(self.axes):
            return None
        if len(set(types)) == 1:
            return types[0]
        return ", ".join(f"{name} {kind}" for (name, _), kind in zip(self.axes, types))

    @classmethod
    def parse(cls, text: str, abstract: bool = False) -> Mesh:
        """Read back ``"data=2,model=4"`` (``ValueError`` if it is not one)."""
        axes = []
        for part in filter(None, text.split(",")):
            name, equals, size = part.partition("=")
            if not equals or not name or not size.isdigit():
                raise ValueError(f"expected a mesh such as 'data=2,model=4', got {text!r}")
            axes.append((name, int(size)))
        return cls(tuple(axes), abstract)
