"""Plain aligned tables: stable text for logs, pipes and golden files."""

from __future__ import annotations

from jxinspect.render.common.escape import text


def plain_table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """Left-aligned columns two spaces apart; optional columns (after the third) that are
    empty in every row are left out. Cells are escaped (:func:`escape.text`)."""
    keep = [i for i in range(len(columns)) if i < 3 or any(row[i] for row in rows)]
    table = [tuple(columns[i] for i in keep)] + [tuple(text(row[i]) for i in keep) for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(keep))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
