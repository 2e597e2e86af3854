"""What the jaxpr and module views share: notes from marks, cutting, syntax colour.

A :class:`~jxinspect.core.program.ProgramText` says which line stands for which input,
output or nested jaxpr; :func:`notes` turns those marks into the words drawn beside the
lines, from the report's own leaves. :func:`tokens` splits a line into coloured pieces,
drawn as ANSI escapes here and as ``<span>`` classes by the HTML report. The lines and
notes of a :class:`Layout` are escaped (:mod:`jxinspect.render.common.escape`): a jaxpr prints a
function's ``__name__`` as it is, and notes quote names and paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jxinspect.core.model import Input, NestedJaxpr, Output, Report
from jxinspect.core.program import Mark, ProgramText, TextKind
from jxinspect.core.vocabulary import Status
from jxinspect.render.common.escape import program_text
from jxinspect.render.common.escape import text as esc

COMMENT: dict[TextKind, str] = {"jaxpr": "#", "stablehlo": "//", "hlo": "//"}
NOTE_COLUMN_MAX = 80
"""Notes start after the longest line of their run of noted lines, but no further right."""
LIST_MAX = 6
"""Argument names and result paths listed in a nested jaxpr's note before ``… +N``."""

_PATTERNS: dict[TextKind, tuple[tuple[str, str], ...]] = {
    "jaxpr": (
        ("kw", r"\b(?:lambda|let|in)\b"),
        ("type", r"(?<=:)[a-z]+\d*\[[^\]\s]*\](?:\{[^}\s]*\})?"),
        ("op", r"(?<== )[a-z_]\w*"),
    ),
    "stablehlo": (
        ("op", r"\b(?:stablehlo|func|sdy|mhlo|chlo)\.[\w.]+"),
        ("value", r"%[\w#]+"),
        ("sym", r"@[\w.$-]+"),
        ("type", r"\btensor<[^>\n]*>"),
        ("loc", r"#loc\d*|\bloc\("),
        ("str", r'"(?:[^"\\\n]|\\.)*"'),
    ),
    "hlo": (
        ("kw", r"\b(?:ENTRY|ROOT|HloModule)\b"),
        ("op", r"(?<=[)\]}] )[a-z][\w-]*(?=\()"),
        ("type", r"\b[a-z]+\d*\[[\d,]*\](?:\{[\d,]*\})?"),
        ("str", r'"(?:[^"\\\n]|\\.)*"'),
    ),
}
"""Per kind of text, the coloured token classes, in the order ANSI colours them."""
_TOKEN = {
    kind: re.compile("|".join(f"(?P<{cls}>{pattern})" for cls, pattern in patterns))
    for kind, patterns in _PATTERNS.items()
}
ANSI = {"kw": "1;34", "type": "35", "op": "1", "str": "32", "value": "36", "sym": "33",
        "loc": "2", "note": "36", "warn": "33"}  # fmt: skip
WARN = "⚠"
HIGHLIGHT_MAX_LINES = 20000
"""Longer texts get colour only in their notes: token colour would cost more than JAX's
own printing of the module (see ``bench/mlir_view.py``)."""


def tokens(line: str, kind: TextKind) -> list[tuple[int, int, str]]:
    """``(start, end, class)`` of the coloured pieces of one line of a ``kind`` text."""
    return [(m.start(), m.end(), str(m.lastgroup)) for m in _TOKEN[kind].finditer(line)]


def ansi(text: str, cls: str) -> str:
    return f"\x1b[{ANSI[cls]}m{text}\x1b[0m"


def colour_text(text: str, kind: TextKind) -> str:
    """A whole text with ANSI colours: one substitution per token class, at C speed (a
    token inside a string may get its own colour)."""
    for cls, pattern in _PATTERNS[kind]:
        text = re.sub(pattern, f"\x1b[{ANSI[cls]}m\\g<0>\x1b[0m", text)
    return text


def _names(values: tuple[str, ...] | None, what: str) -> str:
    if values is None:
        return f"{WARN} no {what}"
    shown = ", ".join(v or "''" for v in values[:LIST_MAX])
    more = f", … +{len(values) - LIST_MAX}" if len(values) > LIST_MAX else ""
    return f"({shown}{more})"


def short_source(func_src_info: str | None) -> str:
    """``f at /long/path/mod.py:12`` → ``f at mod.py:12``."""
    if not func_src_info:
        return "?"
    name, sep, where = func_src_info.rpartition(" at ")
    return f"{name} at {where.rsplit('/', 1)[-1]}" if sep else func_src_info


def jaxpr_note(jaxpr: NestedJaxpr) -> str:
    """A nested (or the top-level) jaxpr's own debug info, and where it was dropped."""
    head = "" if jaxpr.where == "top" else jaxpr.where.rsplit("/", 1)[-1] + " · "
    if jaxpr.quality == "missing":
        return f"{head}{WARN} no debug info ({jaxpr.primitive} dropped it)"
    text = f"{head}{jaxpr.traced_for}: {short_source(jaxpr.func_src_info)}"
    if jaxpr.where == "top":  # its names are on the input and output lines
        pairs = (("argument names", jaxpr.arg_names), ("result paths", jaxpr.result_paths))
        missing = [what for what, values in pairs if values is None]
        if missing:
            text += f" · {WARN} no {' or '.join(missing)}"
    else:
        text += f" · args {_names(jaxpr.arg_names, 'argument names')}"
        text += f" → {_names(jaxpr.result_paths, 'result paths')}"
    if jaxpr.quality == "count_mismatch":
        names, paths = len(jaxpr.arg_names or ()), len(jaxpr.result_paths or ())
        text += (
            f" · {WARN} {names} names for {jaxpr.num_invars} inputs, "
            f"{paths} paths for {jaxpr.num_outvars} outputs"
        )
    elif jaxpr.quality == "partial" and jaxpr.arg_names and "" in jaxpr.arg_names:
        text += f" · {WARN} some argument names are empty"
    return text


def _jaxpr_leaf_note(leaf: Input | Output) -> str:
    carried = leaf.jaxpr_name if isinstance(leaf, Input) else leaf.jaxpr_path
    text = leaf.path
    # a result path spelled without the `result` prefix (JAX up to 0.5) is the same path
    spelled = "result" + carried if isinstance(leaf, Output) and carried is not None else None
    if carried is None:
        text += f" · {WARN} no name in the jaxpr"
    elif carried != leaf.path and spelled != leaf.path:
        shown = carried or "''"
        text += f" · {WARN} the jaxpr says {shown}"
    if leaf.status == "pruned":
        text += " · pruned from @main"
    return text


CARRIES_ANOTHER_NAME: tuple[Status, ...] = ("synthetic", "mismatch", "renamed")
"""The statuses of a leaf that carries a name other than its path."""


def module_leaf_note(leaf: Input | Output) -> str:
    """``params['w'] · ok · P('data', None) · aliased → out 0``."""
    status = leaf.status
    said: str = status
    if status in CARRIES_ANOTHER_NAME and leaf.name:
        said = f"{WARN} {status}: carries {leaf.name}"
    elif status == "missing":
        said = f"{WARN} missing: no name"
    parts = [leaf.path, said]
    if leaf.sharding is not None:
        parts.append(leaf.sharding.readable)
    if isinstance(leaf, Input):
        if leaf.aliased_output is not None:
            parts.append(f"aliased → out {leaf.aliased_output}")
        elif leaf.buffer_donor:
            parts.append("donor")
    return " · ".join(parts)


def mark_note(report: Report, text: ProgramText, mark: Mark, nested: dict[str, NestedJaxpr]) -> str:
    """The words drawn beside a marked line (``nested``: the report's nested jaxprs by
    ``where``)."""
    if mark.kind == "source":
        return mark.text
    if mark.kind == "extra":
        return f"added by JAX: {mark.text}"
    if mark.kind == "jaxpr":
        found = report.jaxpr if mark.text == "top" else nested.get(mark.text)
        return jaxpr_note(found) if found is not None else mark.text
    leaves: tuple[Input | Output, ...] = report.inputs if mark.kind == "input" else report.outputs
    if not 0 <= mark.index < len(leaves):
        return f"{mark.kind} {mark.index}"
    leaf = leaves[mark.index]
    return _jaxpr_leaf_note(leaf) if text.kind == "jaxpr" else module_leaf_note(leaf)


def nested_by_where(report: Report) -> dict[str, NestedJaxpr]:
    return {jaxpr.where: jaxpr for jaxpr in report.nested}


def notes(report: Report, text: ProgramText) -> dict[int, list[tuple[Mark, str]]]:
    """Per line, each mark on it with its note (escaped)."""
    result: dict[int, list[tuple[Mark, str]]] = {}
    nested = nested_by_where(report)
    for mark in text.marks:
        note = esc(mark_note(report, text, mark, nested))
        result.setdefault(mark.line, []).append((mark, note))
    return result


@dataclass(frozen=True)
class Cut:
    """What ``--max-lines`` left out."""

    shown: int
    total: int
    summary: str

    def note(self, comment: str) -> str:
        what = f": {self.summary}" if self.summary else ""
        return (f"{comment} … {self.total - self.shown} more lines not shown (lines "
                f"{self.shown + 1}–{self.total} of {self.total}){what}; rerun without "
                "--max-lines to see them")  # fmt: skip


_FUNC = re.compile(r"^\s*func\.func (?:public |private )?@([\w.$-]+)\(")
_HLO_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.-]+) .*\{$")


def cut_summary(
    kind: TextKind, shown: list[str], cut_lines: list[str], cut_marks: list[Mark]
) -> str:
    """Named pieces of the cut text: functions, computations, nested jaxprs, locations."""
    parts = []
    if kind == "stablehlo":
        functions = [m.group(1) for line in cut_lines if (m := _FUNC.match(line))]
        inside = next((m.group(1) for line in reversed(shown) if (m := _FUNC.match(line))), None)
        if inside and cut_lines and not _FUNC.match(cut_lines[0]) and cut_lines[0].startswith("  "):
            parts.append(f"the rest of @{inside}")
        if functions:
            more = f" and {len(functions) - 5} more" if len(functions) > 5 else ""
            parts.append("func.func " + ", ".join("@" + f for f in functions[:5]) + more)
        locs = sum(line.startswith("#loc") for line in cut_lines)
        if locs:
            parts.append(f"{locs} location lines")
    elif kind == "hlo":
        names = [m.group(1) for line in cut_lines if (m := _HLO_COMPUTATION.match(line))]
        if names:
            parts.append(f"{len(names)} computations ({', '.join(names[:5])}"
                         + (", …)" if len(names) > 5 else ")"))  # fmt: skip
    else:
        nested = sum(m.kind == "jaxpr" for m in cut_marks)
        if nested:
            parts.append(f"{nested} nested jaxpr{'s' if nested != 1 else ''}")
    for what in ("input", "output"):
        count = sum(m.kind == what for m in cut_marks)
        if count:
            parts.append(f"{count} {what}{'s' if count != 1 else ''}")
    return ", ".join(parts)


@dataclass(frozen=True)
class Layout:
    """A view's lines, and for the noted ones their notes and the spaces before them."""

    lines: list[str]
    notes: dict[int, list[tuple[Mark, str]]]
    pads: dict[int, int]
    cut: Cut | None


def layout(report: Report, text: ProgramText, max_lines: int | None = None) -> Layout:
    """The text's lines with their notes aligned: the notes of a run of noted lines start
    together, after its longest line (but not past :data:`NOTE_COLUMN_MAX`)."""
    lines = program_text(text.text).rstrip("\n").split("\n")
    cut = None
    if max_lines is not None and len(lines) > max_lines:
        cut_marks = [m for m in text.marks if m.line >= max_lines]
        summary = cut_summary(text.kind, lines[:max_lines], lines[max_lines:], cut_marks)
        cut = Cut(max_lines, len(lines), summary)
        lines = lines[:max_lines]
    by_line = {i: n for i, n in notes(report, text).items() if i < len(lines)}
    pads: dict[int, int] = {}
    run: list[int] = []
    for i in [*sorted(by_line), -2]:
        if run and i != run[-1] + 1:
            column = min(max(len(lines[j]) for j in run), NOTE_COLUMN_MAX)
            pads.update((j, max(column - len(lines[j]), 0) + 2) for j in run)
            run = []
        run.append(i)
    return Layout(lines, by_line, pads, cut)


def annotated_lines(
    report: Report, text: ProgramText, color: bool = False, max_lines: int | None = None
) -> list[str]:
    """The text's lines with notes beside them, cut to ``max_lines``; ANSI if ``color``."""
    comment = COMMENT[text.kind]
    view = layout(report, text, max_lines)
    if color and len(view.lines) <= HIGHLIGHT_MAX_LINES:
        out = colour_text("\n".join(view.lines), text.kind).split("\n")
    else:
        out = list(view.lines)
    for i, line_notes in view.notes.items():
        note = f"{comment} " + " · ".join(n for _, n in line_notes)
        out[i] += " " * view.pads[i] + (_colour_note(note) if color else note)
    if view.cut is not None:
        note = view.cut.note(comment)
        out.append(ansi(note, "warn") if color else note)
    return out


def _colour_note(note: str) -> str:
    return ansi(note, "warn" if WARN in note else "note")
