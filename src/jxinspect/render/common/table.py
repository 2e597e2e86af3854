"""Plain aligned tables: stable text for logs, pipes and golden files."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from jxinspect.core.units import human_bytes
from jxinspect.render.common.escape import text

CELL_MOST = 80
"""The most characters a cell of a text table shows; a longer value ends in ``…`` (JSON
and HTML show it whole)."""
ROWS_MOST = 20
"""The most rows a text table of buffers or collectives lists: the largest, then ``and K
more (X MiB)``."""

Row = TypeVar("Row")


_PLACE = re.compile(r"^(?P<user>.+) \((?P<library>[^ ()]+:\d+)\)$")
"""A source cell: the user's line, the library's place beside it
(:func:`~jxinspect.render.common.source.source_text`)."""


def capped(cell: str, most: int = CELL_MOST) -> str:
    """``cell``, or its first ``most - 1`` characters and ``…``; a source cell loses the
    start of its library's path instead, keeping the file and line
    (``model.py:40 (…/nn/linear.py:431)``, ``(…linear.py:431)`` where no folder fits),
    where those fit."""
    if len(cell) <= most:
        return cell
    place = _PLACE.match(cell)
    if place is not None:
        room = most - len(place["user"]) - len(" (…)")
        parts = place["library"].split("/")
        tails = [*("/" + "/".join(parts[i:]) for i in range(1, len(parts))), parts[-1]]
        tail = next((t for t in tails if len(t) <= room), None)
        if tail is not None:
            return f"{place['user']} (…{tail})"
    return cell[: most - 1] + "…"


def largest(
    items: Sequence[Row], size: Callable[[Row], int], most: int = ROWS_MOST
) -> tuple[list[Row], str | None]:
    """The ``most`` largest items, in their own order, and ``and K more (X MiB)`` for the
    rest (``None`` where none is left out)."""
    if len(items) <= most:
        return list(items), None
    kept = set(sorted(range(len(items)), key=lambda i: -size(items[i]))[:most])
    rest = [item for i, item in enumerate(items) if i not in kept]
    total = human_bytes(sum(size(item) for item in rest))
    return [item for i, item in enumerate(items) if i in kept], f"and {len(rest)} more ({total})"


def plain_table(
    columns: tuple[str, ...], rows: list[tuple[str, ...]], most: int = CELL_MOST
) -> list[str]:
    """Left-aligned columns two spaces apart; optional columns (after the third) that are
    empty in every row are left out. Cells are escaped (:func:`escape.text`) and capped
    (:func:`capped` at ``most``)."""
    keep = [i for i in range(len(columns)) if i < 3 or any(row[i] for row in rows)]
    table = [tuple(columns[i] for i in keep)] + [
        tuple(capped(text(row[i]), most) for i in keep) for row in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(keep))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
