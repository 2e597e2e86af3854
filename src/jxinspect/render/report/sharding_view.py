"""Sharding pictures (``--show sharding``): which device holds which block of each array.

Drawn from :class:`~jxinspect.core.model.Sharding` alone, so a saved report draws the same.
Any rank: the two most-split dimensions are the grid's rows and columns; a third split
dimension is folded into the cells (each cell lists the devices of all its blocks), and
the rest are stated. A cell lists every device holding a copy (partial replication). A
grid of more than :data:`MAX_SIDE` blocks a side shows its first and last rows and
columns, so an abstract mesh of thousands of devices stays readable. Devices are
numbered by their position in the mesh (row-major over its axes), as ``jax.make_mesh``
numbers a fresh mesh; GSPMD tile counts without a mesh are numbered in iota order.
Leaves with the same shape and layout share one picture. Text drawn from the report
(paths, mesh axis names, raw sharding attributes) is escaped (:func:`escape.text`).

Pictures are drawn from blocks, never by going through the devices: a shown cell's
devices are solved from its block index (the mesh coordinates that give it), so an
abstract mesh of millions of devices draws as fast as a small one. A cell held by more
than :data:`LIST_DEVICES_MAX` devices keeps them as a :class:`DeviceSet` (the allowed
coordinates along each mesh axis) instead of a tuple.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from jxinspect.core.model import Input, Output, Report, Sharding
from jxinspect.core.units import human_bytes, type_text
from jxinspect.render.common.console import ansi_console
from jxinspect.render.common.escape import text as esc

MAX_SIDE = 8
"""Blocks drawn along a side before the middle ones are left out."""
HEAD, TAIL = 3, 1
"""Blocks kept at the start and end of a side that is cut."""
CELL_TEXT_MAX = 14
LIST_MAX = 8
"""Leaves named per direction in a one-line group (the HTML report names them all)."""
LIST_DEVICES_MAX = 4096
"""A cell's devices are a tuple up to this many, a :class:`DeviceSet` past it."""


@dataclass(frozen=True)
class DeviceSet:
    """The devices holding one block of a large mesh, described rather than listed: every
    device whose coordinate along each mesh axis is in ``coords`` (devices numbered
    row-major over the axes). Iterates in increasing order, like a cell's tuple."""

    sizes: tuple[int, ...]
    """The mesh's axis sizes, in order."""
    coords: tuple[range | tuple[int, ...], ...]
    """Per axis, the coordinates allowed (increasing)."""

    def __len__(self) -> int:
        return math.prod(len(c) for c in self.coords)

    def _numbers(self, axes: int) -> Iterator[int]:
        """Device numbers of the first ``axes`` axes' coordinates (the rest at 0), made
        one at a time (``itertools.product`` would first copy each axis's range)."""
        strides = [math.prod(self.sizes[i + 1 :]) for i in range(len(self.sizes))]

        def walk(axis: int, base: int) -> Iterator[int]:
            if axis == axes:
                yield base
                return
            for coordinate in self.coords[axis]:
                yield from walk(axis + 1, base + coordinate * strides[axis])

        return walk(0, 0)

    def __iter__(self) -> Iterator[int]:
        return self._numbers(len(self.sizes))

    def runs(self) -> Iterator[tuple[int, int]]:
        """``(first, last)`` of each run of consecutive devices, in order; the trailing
        axes that are not restricted make one run each, without listing them."""
        free = len(self.sizes)
        while free and self.coords[free - 1] == range(self.sizes[free - 1]):
            free -= 1
        block = math.prod(self.sizes[free:])
        return _merged((start, start + block - 1) for start in self._numbers(free))


Devices = tuple[int, ...] | DeviceSet
"""The devices holding one cell's blocks: listed, or (past :data:`LIST_DEVICES_MAX`) a
:class:`DeviceSet`."""


@dataclass(frozen=True)
class Picture:
    """One grid: the leaves it stands for, what it says, and its cells."""

    layout: str
    """``P('data', 'model') on mesh data=4,model=2``."""
    leaves: tuple[tuple[str, int, str, str], ...]
    """``("in" | "out", index, path, "f32[8,4] → f32[2,4] per device (32 B)")`` of each
    leaf drawn by it."""
    lines: tuple[str, ...]
    """What the grid shows, in words."""
    row_labels: tuple[str | None, ...]
    """Element ranges of the rows shown (``None``: the rows left out)."""
    col_labels: tuple[str | None, ...]
    cells: tuple[tuple[Devices | None, ...], ...]
    """Per shown row and column, the devices holding that block (``None``: left out)."""

    @property
    def groups(self) -> dict[Devices, int]:
        """A colour number per distinct device set, in drawing order."""
        result: dict[Devices, int] = {}
        for row in self.cells:
            for cell in row:
                if cell is not None and cell not in result:
                    result[cell] = len(result)
        return result


def _numbering(sharding: Sharding, rank: int) -> tuple[dict[str, int], list[tuple[str, ...]]]:
    """The axes that number the devices (row-major, in order) and the axes that split each
    dimension: the mesh and the spec, or for GSPMD tile counts one axis per dimension and
    one for the copies (iota order)."""
    if sharding.mesh is None or sharding.tiles:
        pieces = sharding.pieces()
        axes = {f"#{d}": n for d, n in enumerate(pieces)}
        axes["#copies"] = max(sharding.replicas, 1)
        return axes, [(f"#{d}",) if d < len(pieces) else () for d in range(rank)]
    spec = sharding.spec
    return dict(sharding.mesh.axes), [spec[d] if d < len(spec) else () for d in range(rank)]


def _cell_devices(
    axes: dict[str, int], split: list[tuple[str, ...]], blocks: Iterable[tuple[int, int]]
) -> Devices:
    """The devices holding block ``index`` along each ``(dim, index)`` of ``blocks``, any
    block along the other dimensions: the block index is taken apart into coordinates
    along the axes that split the dimension (a Shardy sub-axis ``x:(2)4`` is a digit of
    ``x``'s coordinate), and every other coordinate is free."""
    # per mesh axis, (step, size, value): (coordinate // step) % size == value
    wanted: dict[str, list[tuple[int, int, int]]] = {}
    for dim, index in blocks:
        for name in reversed(split[dim]):
            base, sub = name.split(":(", 1) if ":(" in name else (name, "")
            total = axes.get(base, 1)
            if sub:
                pre, size = (int(part) for part in sub.split(")", 1))
                step = max(total // (pre * size), 1)
            else:
                size, step = total, 1
            index, value = divmod(index, size)
            if base in axes:
                wanted.setdefault(base, []).append((step, size, value))
            elif value:
                return ()  # an axis the mesh lacks: its coordinate is always 0
        if index:
            return ()
    sizes: list[int] = []
    coords: list[range | tuple[int, ...]] = []
    for name, total in axes.items():
        for size, allowed in _digits(total, wanted.get(name, [])):
            sizes.append(size)
            coords.append(allowed)
    found = DeviceSet(tuple(sizes), tuple(coords))
    return tuple(found) if len(found) <= LIST_DEVICES_MAX else found


def _digits(
    total: int, rules: list[tuple[int, int, int]]
) -> list[tuple[int, range | tuple[int, ...]]]:
    """One mesh axis of ``total`` as digits (most significant first: ``(size, allowed
    coordinates)``), where each rule ``(step, size, value)`` fixes the digit
    ``(coordinate // step) % size``: sub-axes split an axis into digits whose sizes divide
    each other, so the allowed coordinates are a product of digit ranges, never listed
    one by one (an axis of 2**31 costs what one of 4 does). Rules that are no such split
    (a sub-axis that does not divide its axis: no partitioner writes one) allow nothing."""
    if not rules:
        return [(total, range(total))]
    bounds = sorted({1, total, *(t for t, _, _ in rules), *(t * n for t, n, _ in rules)})
    if bounds[-1] != total or any(b % a for a, b in zip(bounds, bounds[1:])):
        return [(total, ())]
    digits: dict[int, int] = {}  # a digit's lower bound → its fixed value
    for step, size, value in rules:
        if not 0 <= value < size:
            return [(total, ())]
        for low, high in zip(bounds, bounds[1:]):
            if step <= low and high <= step * size:
                digit = (value * step // low) % (high // low)
                if digits.setdefault(low, digit) != digit:
                    return [(total, ())]
    return [
        (high // low, range(digits[low], digits[low] + 1) if low in digits else range(high // low))
        for low, high in reversed(list(zip(bounds, bounds[1:])))
    ]


def _shown(count: int) -> list[int | None]:
    if count <= MAX_SIDE:
        return list(range(count))
    return [*range(HEAD), None, *range(count - TAIL, count)]


def _range(dim_size: int, pieces: int, block: int) -> str:
    step = -(-dim_size // pieces)
    return f"{block * step}:{min((block + 1) * step, dim_size)}"


def _merged(runs: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Runs in increasing order with touching ones joined; each yielded once complete."""
    current: tuple[int, int] | None = None
    for first, last in runs:
        if current is not None and first == current[1] + 1:
            current = (current[0], last)
            continue
        if current is not None:
            yield current
        current = (first, last)
    if current is not None:
        yield current


def _runs_text(runs: list[tuple[int, int]]) -> str:
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def devices_text(devices: Devices) -> str:
    """``(0, 1, 2, 3, 8)`` → ``0-3,8``; long lists keep their start and count (reading
    only as many runs as that takes)."""
    found = devices.runs() if isinstance(devices, DeviceSet) else _merged((d, d) for d in devices)
    runs: list[tuple[int, int]] = []
    for run in found:
        runs.append(run)
        if len(runs) > 2 and len(_runs_text(runs)) > CELL_TEXT_MAX:
            break  # the text only grows with more runs
    text = _runs_text(runs)
    if len(text) <= CELL_TEXT_MAX:
        return text
    return f"{_runs_text(runs[:2])},… ({len(devices)})"


def _axes_text(axes: tuple[str, ...]) -> str:
    return " × ".join(repr(a) for a in axes) if axes else "tiles"


def _layout_key(leaf: Input | Output) -> tuple[object, ...]:
    """Leaves with equal keys draw the same grid: same layout, same split dim sizes."""
    s = leaf.sharding
    assert s is not None
    pieces = s.pieces()
    split = tuple((d, leaf.shape[d]) for d in range(min(len(leaf.shape), len(pieces)))
                  if pieces[d] > 1)  # fmt: skip
    return (s.kind, s.spec, s.mesh, s.tiles, s.replicas, len(leaf.shape), split)


def _leaf_line(kind: str, leaf: Input | Output) -> tuple[str, int, str, str]:
    known = leaf.shard_shape  # a leaf drawn has a layout: always known
    shard = type_text(known, leaf.dtype) if known is not None else "unknown"
    return (kind, leaf.index, leaf.path, f"{type_text(leaf.shape, leaf.dtype)} → {shard} per "
            f"device ({human_bytes(leaf.bytes_per_device)})")  # fmt: skip


def _grid_dims(grid: list[int], rank: int) -> tuple[int | None, int | None]:
    """Which split dimensions are the rows and the columns of the picture."""
    if len(grid) == 1 and rank > 1 and grid[0] == rank - 1:
        return None, grid[0]
    if len(grid) == 1:
        return (grid[0], None) if rank > 1 else (None, grid[0])
    return grid[0], grid[1]


def _split_lines(
    sharding: Sharding,
    pieces: tuple[int, ...],
    row_dim: int | None,
    col_dim: int | None,
    folded: list[int],
) -> list[str]:
    """What the rows, the columns and the folded dimensions stand for."""

    def dim_text(dim: int) -> str:
        axes = sharding.spec[dim] if dim < len(sharding.spec) else ()
        return f"dim {dim} split {pieces[dim]} ways by {_axes_text(axes)}"

    lines = []
    if row_dim is not None:
        lines.append(f"rows: {dim_text(row_dim)}")
    if col_dim is not None:
        lines.append(f"columns: {dim_text(col_dim)}")
    for dim in folded:
        lines.append(f"{dim_text(dim)}: folded into the cells, each lists the devices of "
                     f"its {pieces[dim]} blocks along dim {dim}")  # fmt: skip
    return lines


def picture(leaves: list[tuple[str, Input | Output]]) -> Picture:
    """The grid for leaves that share one tiled layout and shape."""
    leaf = leaves[0][1]
    sharding, shape = leaf.sharding, leaf.shape
    assert sharding is not None
    rank, pieces = len(shape), sharding.pieces()
    split = [d for d in range(min(rank, len(pieces))) if pieces[d] > 1]
    grid = sorted(sorted(split, key=lambda d: -pieces[d])[:2])
    row_dim, col_dim = _grid_dims(grid, rank)
    folded = [d for d in split if d not in grid]
    rows = pieces[row_dim] if row_dim is not None else 1
    cols = pieces[col_dim] if col_dim is not None else 1
    axes, by_dim = _numbering(sharding, rank)

    def cell(row: int, col: int) -> Devices:
        blocks = [(d, b) for d, b in ((row_dim, row), (col_dim, col)) if d is not None]
        return _cell_devices(axes, by_dim, blocks)

    def label(dim: int | None, block: int | None) -> str | None:
        if block is None:
            return None
        return _range(shape[dim], pieces[dim], block) if dim is not None else "all"

    shown_rows, shown_cols = _shown(rows), _shown(cols)
    mesh = sharding.mesh
    layout = sharding.readable + (f" on mesh {mesh}" if mesh is not None and mesh.axes else "")
    lines = _split_lines(sharding, pieces, row_dim, col_dim, folded)
    if sharding.replicas > 1:
        used = {a.split(":")[0] for axes in sharding.spec for a in axes}
        over = [name for name, _ in mesh.axes if name not in used] if mesh else []
        over_text = f" (replicated over {', '.join(repr(a) for a in over)})" if over else ""
        lines.append(f"each block is held by {sharding.replicas} devices{over_text}")
    cut = [f"{len(shown) - 1} of {count} {what} (the first {HEAD} and the last {TAIL})"
           for shown, count, what in ((shown_rows, rows, "rows"), (shown_cols, cols, "columns"))
           if len(shown) < count]  # fmt: skip
    if cut:
        lines.append("showing " + " and ".join(cut))
    return Picture(
        layout=layout,
        leaves=tuple(_leaf_line(kind, lf) for kind, lf in leaves),
        lines=tuple(lines),
        row_labels=tuple(label(row_dim, r) for r in shown_rows),
        col_labels=tuple(label(col_dim, c) for c in shown_cols),
        cells=tuple(
            tuple(cell(r, c) if r is not None and c is not None else None for c in shown_cols)
            for r in shown_rows
        ),
    )


@dataclass(frozen=True)
class Layouts:
    """Every leaf with a sharding, sorted into pictures and one-line groups."""

    pictures: tuple[Picture, ...]
    groups: tuple[tuple[str, tuple[tuple[str, int, str], ...]], ...]
    """``(what, leaves)``: replicated, manual, on one device, unknown or no sharding."""


def layouts(report: Report) -> Layouts:
    """Group the report's leaves by layout."""
    tiled: dict[tuple[object, ...], list[tuple[str, Input | Output]]] = {}
    groups: dict[str, list[tuple[str, int, str]]] = {}
    leaves: list[tuple[str, Input | Output]] = [("in", leaf) for leaf in report.inputs]
    leaves += [("out", leaf) for leaf in report.outputs]
    devices = f"all {report.num_devices} devices" if report.num_devices > 1 else "its one device"
    for kind, leaf in leaves:
        s = leaf.sharding
        if s is None:
            what = (
                "pruned from @main"
                if isinstance(leaf, Input) and leaf.status == "pruned"
                else (f"no sharding recorded (whole on {devices})")
            )
        elif s.kind == "tiled" and not s.is_replicated:
            tiled.setdefault(_layout_key(leaf), []).append((kind, leaf))
            continue
        elif s.is_replicated:
            what = f"replicated: a full copy on {devices}"
        elif s.kind == "manual":
            what = "manual: laid out by the shard_map body"
        elif s.kind == "maximal":
            what = "on one device (maximal)"
        else:
            what = f"unknown layout {s.raw}"
        groups.setdefault(what, []).append((kind, leaf.index, leaf.path))
    return Layouts(
        tuple(picture(group) for group in tiled.values()),
        tuple((what, tuple(items)) for what, items in groups.items()),
    )


def leaf_list(leaves: tuple[tuple[str, int, str], ...], limit: int = LIST_MAX) -> str:
    """``in: a, b · out: result``; past ``limit`` paths a side, ``… and N more``."""
    parts = []
    for kind in ("in", "out"):
        paths = [esc(path) for k, _, path in leaves if k == kind]
        if paths:
            more = f", … and {len(paths) - limit} more" if len(paths) > limit else ""
            parts.append(f"{kind}: " + ", ".join(paths[:limit]) + more)
    return " · ".join(parts)


def mesh_line(report: Report) -> str:
    if report.mesh is None or not report.mesh.axes:
        return f"no mesh · {report.num_devices} device" + ("s" if report.num_devices != 1 else "")
    order = ", ".join(name for name, _ in report.mesh.axes)
    kind = "abstract mesh" if report.mesh.abstract else "mesh"
    return (f"{kind} {report.mesh} ({report.mesh.size} devices); a device's number is its "
            f"position in the mesh, row-major over {order}")  # fmt: skip


def leaf_table(pic: Picture, limit: int = 2 * LIST_MAX) -> list[str]:
    """One aligned line per leaf: direction, path, type and per-device share (the first
    ``limit``, then how many more)."""
    shown = [(kind, esc(path), text) for kind, _, path, text in pic.leaves[:limit]]
    width = max(len(path) for _, path, _ in shown)
    lines = [f"  {kind:<3} {path.ljust(width)}  {text}" for kind, path, text in shown]
    if len(pic.leaves) > limit:
        lines.append(f"  … and {len(pic.leaves) - limit} more leaves with this layout")
    return lines


def _plain_grid(pic: Picture) -> list[str]:
    texts = [[devices_text(c) if c is not None else "…" for c in row] for row in pic.cells]
    col_labels = [c if c is not None else "…" for c in pic.col_labels]
    row_labels = [r if r is not None else "…" for r in pic.row_labels]
    width = max([len(t) for row in texts for t in row] + [len(c) for c in col_labels]) + 2
    left = max(len(r) for r in row_labels)
    rule = " " * left + " +" + "+".join("-" * width for _ in col_labels) + "+"
    lines = [" " * left + "  " + " ".join(c.center(width) for c in col_labels).rstrip(), rule]
    for label, row in zip(row_labels, texts):
        lines.append(label.rjust(left) + " |" + "|".join(t.center(width) for t in row) + "|")
    return lines + [rule]


def render_plain(report: Report) -> str:
    """Stable text: ASCII grids."""
    found = layouts(report)
    lines = [mesh_line(report)]
    for pic in found.pictures:
        lines += ["", pic.layout]
        lines += ["  " + line for line in pic.lines]
        lines += leaf_table(pic)
        lines += ["    " + line for line in _plain_grid(pic)]
    if found.groups:
        lines.append("")
    for what, leaves in found.groups:
        lines.append(f"{what}: {leaf_list(leaves)}")
    return "\n".join(esc(line) for line in lines) + "\n"


PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip
"""Cell colours, one per distinct device set, cycled (also used by the HTML report)."""


def render_rich(report: Report, width: int = 120) -> str:
    """Coloured grids for a terminal (ANSI escapes in the returned string)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = ansi_console(buffer, width)
    found = layouts(report)
    console.print(Text(esc(mesh_line(report)), style="bold"))
    for pic in found.pictures:
        console.print()
        console.print(Text(esc(pic.layout), style="bold"))
        for line in pic.lines:
            console.print(Text("  " + esc(line)))
        for line in leaf_table(pic):
            console.print(Text(esc(line)))
        table = Table(box=box.SQUARE, show_lines=True, padding=(0, 1))
        table.add_column("")
        for label in pic.col_labels:
            table.add_column(label or "…", justify="center")
        colours = pic.groups
        for label, row in zip(pic.row_labels, pic.cells):
            cells = [Text(label or "…", style="dim")]
            for cell in row:
                if cell is None:
                    cells.append(Text("…"))
                else:
                    colour = PALETTE[colours[cell] % len(PALETTE)]
                    cells.append(Text(devices_text(cell), style=f"bold white on {colour}"))
            table.add_row(*cells)
        console.print(table)
    for what, leaves in found.groups:
        console.print(Text(f"{esc(what)}: ", style="bold") + Text(leaf_list(leaves)))
    return buffer.getvalue()


def render(report: Report, color: bool = False, width: int = 120) -> str:
    """The sharding pictures as text; ``color`` for a terminal."""
    return render_rich(report, width) if color else render_plain(report)
