"""A report as text: rich tables on a terminal, plain aligned columns otherwise.

Both forms show the same rows from :func:`input_rows` / :func:`output_rows`; the plain
one is stable (no colour, no box drawing, no terminal-width wrapping) for logs, pipes
and golden files. Both escape what came from the user (:func:`escape.text`): the rows
stay raw for the HTML report, which escapes them its own way.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from jxinspect.core.model import (
    CompiledInfo,
    Input,
    MemoryStats,
    Output,
    Report,
    ShardingSource,
)
from jxinspect.core.units import human_bytes, human_flops, recorded, type_text
from jxinspect.render.common.console import ansi_console
from jxinspect.render.common.escape import text as esc
from jxinspect.render.common.findings import finding_lines, grouped, inside_jax_line
from jxinspect.render.common.source import at_source_text, paths_shown
from jxinspect.render.common.table import ROWS_MOST, plain_table
from jxinspect.render.report import memory_view

INPUT_COLUMNS = ("#", "path", "name in program", "status", "type", "sharding", "compiled",
                 "per device", "donation")  # fmt: skip
OUTPUT_COLUMNS = ("#", "path", "name in program", "status", "type", "sharding", "compiled",
                  "per device")  # fmt: skip
STATUS_STYLE = {"ok": "green", "synthetic": "yellow", "missing": "red", "mismatch": "red",
                "pruned": "dim", "renamed": "yellow"}  # fmt: skip
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def compiled_text(leaf: Input | Output) -> str:
    """The sharding XLA chose, marked where it chose one or changed the declared one."""
    chosen = leaf.compiled_sharding
    if chosen is None:
        return ""
    if leaf.sharding is None:
        return chosen.readable + ("" if chosen.is_replicated else " (chosen)")
    if chosen.readable != leaf.sharding.readable:
        return chosen.readable + " (changed)"
    return chosen.readable


def _per_device(leaf: Input | Output) -> str:
    """The shape and bytes each device holds; blank where the layout is unknown (the
    compiler picks it: :func:`unknown_layouts` says so)."""
    if leaf.shard_shape is None:
        return ""
    if leaf.shard_shape == leaf.shape:
        return human_bytes(leaf.bytes_per_device)
    return f"{type_text(leaf.shard_shape, leaf.dtype)} {human_bytes(leaf.bytes_per_device)}"


def unknown_layouts(report: Report) -> str:
    """The legend of the blank per-device cells: ``unknown (blank) for 2 outputs: the
    compiler picks their layout (--compile reads it)``; ``""`` where there is none."""
    counts = [(sum(leaf.shard_shape is None for leaf in leaves), kind) for leaves, kind in
              ((report.inputs, "input"), (report.outputs, "output"))]  # fmt: skip
    said = [f"{n} {kind}{'s' if n != 1 else ''}" for n, kind in counts if n]
    if not said:
        return ""
    their = "its" if sum(n for n, _ in counts) == 1 else "their"
    how = "its choice was not read" if report.compiled is not None else "--compile reads it"
    return f"unknown (blank) for {' and '.join(said)}: the compiler picks {their} layout ({how})"


def _donation(leaf: Input, compiled: bool, aliases_read: bool = True) -> str:
    if leaf.compiled_alias is not None:
        return f"aliased → out {leaf.compiled_alias} (compiled)"
    if compiled and leaf.donated:
        return (
            "donated, aliasing not read (compiled)"
            if not aliases_read
            else ("donated, not aliased (compiled)")
        )
    if leaf.aliased_output is not None:
        return f"aliased → out {leaf.aliased_output}"
    if leaf.buffer_donor:
        return "donor"
    return "requested, unused" if leaf.donated else ""


def sharding_text(leaf: Input | Output) -> str:
    """The layout the program (or, where it did not lower, the argument) declares."""
    if leaf.sharding is None:
        return ""
    said = _SOURCE_SAYS.get(leaf.sharding.source)
    return leaf.sharding.readable + (f" ({said})" if said else "")


_SOURCE_SAYS: dict[ShardingSource, str] = {
    "declared": "declared, not lowered",
    "shard_map": "shard_map's spec",
    "jax_default": "JAX's own",
}
"""What a sharding's text adds where it is not ``@main``'s own."""


def _leaf_row(leaf: Input | Output) -> tuple[str, ...]:
    """The columns an input and an output share."""
    return (
        str(leaf.index),
        leaf.path,
        _name(leaf),
        leaf.status,
        type_text(leaf.shape, leaf.dtype),
        sharding_text(leaf),
        compiled_text(leaf),
        _per_device(leaf),
    )


def _name(leaf: Input | Output) -> str:
    """The name the program carries where it is not the path itself (``""``: the same),
    ``—`` where it carries none."""
    if not leaf.name:  # none, or an empty one (0.7.2's pmap results)
        return "—"
    return "" if leaf.name == leaf.path else leaf.name


LeafTable = tuple[tuple[str, ...], list[tuple[str, ...]]]
"""Column names and rows."""


def _names_once(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> LeafTable:
    """Without the name column where every leaf's name is its path: said once, not twice."""
    at = columns.index("name in program")
    if any(row[at] for row in rows):
        return columns, rows
    return columns[:at] + columns[at + 1 :], [row[:at] + row[at + 1 :] for row in rows]


def input_table(report: Report) -> LeafTable:
    """The inputs' columns and rows (the text and HTML reports')."""
    return _names_once(INPUT_COLUMNS, input_rows(report))


def output_table(report: Report) -> LeafTable:
    return _names_once(OUTPUT_COLUMNS, output_rows(report))


def leaf_tables(report: Report) -> list[tuple[str, LeafTable, str | None]]:
    """The inputs' and the outputs' titled tables, each :func:`bounded`, and the line for
    the leaves left out (the text reports')."""
    found = []
    for title, leaves, whole in (("inputs", report.inputs, input_table(report)),
                                 ("outputs", report.outputs, output_table(report))):  # fmt: skip
        shown, rest = bounded(report, leaves, whole)
        found.append((f"{title} ({len(leaves)})", shown, rest))
    return found


def bounded(
    report: Report, leaves: Sequence[Input | Output], table: LeafTable
) -> tuple[LeafTable, str | None]:
    """With ``--memory`` (the peak read), a table of more leaves than a terminal's table
    lists (:data:`ROWS_MOST`): every leaf whose status is not ``ok`` (nor a wrapper's
    renaming), then the largest per device, in their order; and a line for the rest."""
    columns, rows = table
    peak = report.compiled.peak if report.compiled is not None else None
    if peak is None or len(rows) <= ROWS_MOST:
        return table, None

    def size(i: int) -> int:
        return leaves[i].bytes_per_device or 0

    flagged = {i for i, leaf in enumerate(leaves) if leaf.status not in ("ok", "renamed")}
    plain = sorted(set(range(len(rows))) - flagged, key=lambda i: -size(i))
    kept = flagged | set(plain[: max(ROWS_MOST - len(flagged), 0)])
    rest = [i for i in range(len(rows)) if i not in kept]
    if not rest:
        return table, None
    said = (f"and {len(rest)} more ({human_bytes(sum(size(i) for i in rest))} per device): "
            "lower without --memory lists every one")  # fmt: skip
    return (columns, [row for i, row in enumerate(rows) if i in kept]), said


def input_rows(report: Report) -> list[tuple[str, ...]]:
    compiled = report.compiled is not None
    read = report.compiled is None or report.compiled.aliases is not None
    return [(*_leaf_row(leaf), _donation(leaf, compiled, read)) for leaf in report.inputs]


def output_rows(report: Report) -> list[tuple[str, ...]]:
    return [_leaf_row(leaf) for leaf in report.outputs]


def axis_types_text(report: Report) -> str:
    """``, axes Explicit`` (every axis alike) or ``, axes data Explicit, model Auto``;
    ``""`` where the report has no axis types."""
    typed = report.mesh.typed(report.axis_types) if report.mesh is not None else None
    return f", axes {typed}" if typed is not None else ""


def header_lines(report: Report) -> list[tuple[str, str]]:
    mesh = str(report.mesh) if report.mesh else "—"
    if report.mesh and report.mesh.abstract:
        mesh += " (abstract)"
    lines = [
        ("target", report.target),
        ("function", report.function or "—"),
        ("stage", f"{recorded(report.stage)} → reached {report.reached}"),
        ("jax", recorded(report.jax_version)),
        (
            "platform",
            f"{recorded(report.platform)}, {report.num_devices} device"
            + ("s" if report.num_devices != 1 else ""),
        ),  # fmt: skip
        ("mesh", f"{mesh}{axis_types_text(report)}, partitioner {report.partitioner}"),
    ]
    if report.topology is not None:
        lines.append(("chip" if report.topology.here else "topology", str(report.topology)))
    if report.inputs_from is not None:
        lines.append(("inputs", str(report.inputs_from)))
    if report.static_args:
        lines.append(("static", ", ".join(f"{s.path}={s.value}" for s in report.static_args)))
    if report.extra_args:
        lines.append(("added by JAX", ", ".join(f"%arg{e.main_index} {e.kind}"
                                                for e in report.extra_args)))  # fmt: skip
    if report.compiled is not None:
        memory = report.compiled.memory
        parts = [f"{label} {human_bytes(value)}" for label, value in memory_kinds(memory)]
        source = (
            "per device, XLA memory_analysis" if memory.source == "xla" else "per device, estimated"
        )
        lines.append(("memory", ", ".join(parts) + f" ({source})"))
        cost = cost_line(report.compiled)
        if cost:
            lines.append(("cost", cost))
        kernels = kernels_line(report.compiled)
        if kernels:
            lines.append(("kernels", kernels))
        if report.compiled.peak is not None:
            lines.append(("peak", memory_view.summary(report.compiled.peak)))
        if memory.note:
            lines.append(("note", memory.note))
        if report.compiled.unread is not None:
            lines.append(("not read", report.compiled.unread))
        if report.compiled.origins_unread is not None:
            lines.append(("why", report.compiled.origins_unread))
        for note in report.compiled.notes:
            lines.append(("note", note))
    for note in report.notes:
        lines.append(("note", note))
    unknown = unknown_layouts(report)
    if unknown:
        lines.append(("per device", unknown))
    if report.error:
        lines.append(("error", report.error))
    return lines


def memory_kinds(memory: MemoryStats) -> list[tuple[str, int]]:
    """Each kind of memory per device the report has a figure for, as (label, bytes)."""
    kinds = (("arguments", memory.arguments), ("outputs", memory.outputs),
             ("temporaries", memory.temporaries), ("code", memory.generated_code),
             ("aliased", memory.aliased))  # fmt: skip
    return [(label, value) for label, value in kinds if value is not None]


def cost_line(compiled: CompiledInfo) -> str:
    """FLOPs and bytes accessed per device (``cost_analysis``); empty where XLA gave none.
    FLOPs unknown where a kernel has no cost estimate: the part known, and the kernel."""
    parts = []
    if compiled.flops is not None:
        parts.append(human_flops(compiled.flops))
    elif compiled.flops_known_part is not None:
        parts.append(f"FLOPs: unknown ({human_flops(compiled.flops_known_part)} known; "
                     f"{unknown_cost(compiled)})")  # fmt: skip
    if compiled.bytes_accessed is not None:
        parts.append(f"{human_bytes(round(compiled.bytes_accessed))} accessed")
    return ", ".join(parts) + " (per device, XLA cost_analysis)" if parts else ""


def unknown_cost(compiled: CompiledInfo) -> str:
    """``kernel matmul_kernel at model.py:12 has no cost estimate`` (each such kernel)."""
    said = [f"kernel {k.name}{at_source_text(k.file, k.line)}" for k in compiled.uncosted]
    return ", ".join(said) + (" has" if len(said) == 1 else " have") + " no cost estimate"


def kernels_line(compiled: CompiledInfo) -> str:
    """Each kernel (custom call): ``add_kernel at prog.py:13 (1.2 MFLOP estimated),
    matmul_kernel at prog.py:26 (no cost estimate)``; empty where there is none."""
    parts = []
    for k in compiled.kernels or ():
        cost = ("no device arithmetic" if k.costless else "no cost estimate" if k.flops is None
                else f"{human_flops(k.flops)} estimated")  # fmt: skip
        parts.append(f"{k.name}{at_source_text(k.file, k.line)} ({cost})")
    return ", ".join(parts)


def summary_line(report: Report) -> str:
    counts: dict[str, int] = {}
    for finding in report.findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    ok_in = sum(leaf.status == "ok" for leaf in report.inputs)
    ok_out = sum(leaf.status == "ok" for leaf in report.outputs)
    parts = [f"{ok_in}/{len(report.inputs)} arguments and {ok_out}/{len(report.outputs)} "
             "results carry their names"]  # fmt: skip
    renamed = sum(leaf.status == "renamed" for leaf in report.inputs) + sum(
        leaf.status == "renamed" for leaf in report.outputs
    )
    if renamed:
        parts[0] += f" ({renamed} renamed by the library's wrapper, as it always does; "
        parts[0] += "each maps back to your path)"
    parts += [f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(counts.items())]
    return "; ".join(parts)


def _message_shown(message: str) -> str:
    return esc(paths_shown(message))


def render_plain(report: Report) -> str:
    """Stable plain text: header, inputs, outputs, findings, summary."""
    lines = [f"{key + ':':<14}{esc(paths_shown(value))}" for key, value in header_lines(report)]
    for title, shown, rest in leaf_tables(report):
        lines += ["", title, *("  " + line for line in plain_table(*shown))]
        lines += [f"  {rest}"] if rest else []
    if report.findings:
        lines += ["", f"findings ({len(report.findings)})"]
        for group in grouped(report.findings):
            head = f"  {group.first.code} {group.first.severity:<7} "
            lines += finding_lines(head, group, _message_shown)
        folded = inside_jax_line(report.findings)
        lines += [f"  {folded}"] if folded else []
    lines += ["", summary_line(report)]
    return "\n".join(lines) + "\n"


def render_rich(report: Report, width: int = 120) -> str:
    """Coloured tables for a terminal (ANSI escapes in the returned string)."""
    from rich.table import Table as RichTable
    from rich.text import Text

    buffer = io.StringIO()
    console = ansi_console(buffer, width)
    grid = RichTable.grid(padding=(0, 2))
    for key, value in header_lines(report):
        grid.add_row(
            Text(key, style="bold"),
            Text(esc(paths_shown(value)), style="red" if key == "error" else ""),
        )
    console.print(grid)

    def table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> RichTable:
        result = RichTable(title=title, title_justify="left", title_style="bold")
        for column in columns:
            result.add_column(column, overflow="fold")
        status = columns.index("status")
        for row in rows:
            cells = [Text(esc(cell)) for cell in row]
            cells[status].stylize(STATUS_STYLE.get(row[status], ""))
            result.add_row(*cells)
        return result

    for title, shown, rest in leaf_tables(report):
        console.print(table(title, *shown))
        if rest:
            console.print(Text(rest, style="dim"))
    for group in grouped(report.findings):
        f = group.first
        line = Text(f"{f.code} ", style="bold")
        line.append(f"{f.severity:<7} ", style=SEVERITY_STYLE[f.severity])
        line.append(group.text(shown=_message_shown))
        console.print(line)
    folded = inside_jax_line(report.findings)
    if folded:
        console.print(Text(folded, style="dim"))
    console.print(Text(summary_line(report), style="bold"))
    return buffer.getvalue()


def render(report: Report, color: bool = False, width: int = 120) -> str:
    """The report as text; ``color`` for a terminal."""
    return render_rich(report, width) if color else render_plain(report)


def describe(report: Report) -> str:
    """``<Report mlp.py:predict · jit → lowered · JAX 0.10.2 · 7/7 arguments and 2/2
    results carry their names; 2 infos>``: the report's ``repr``."""
    return (
        f"<Report {esc(report.target)} · {recorded(report.stage)} → {report.reached} · "
        f"JAX {recorded(report.jax_version)} · {summary_line(report)}>"
    )
