"""``codec.by_line``: a file that grows a row at a time (a record folder's index and
compiles), laid out as one head and one row a line by the one encoder."""

from __future__ import annotations

import json
from dataclasses import dataclass

from jxinspect.core import codec
from jxinspect.core.recompiles import Compile, Compiles, Reason


@dataclass(frozen=True)
class _Rows:
    rows: tuple[int, ...]


def test_rows_go_last_one_a_line_and_read_back() -> None:
    first = Compile("f", "f at a.py:1", "f", 1, trace_s=0.5)
    again = Compile(
        "f", "f at a.py:1", "f.2", 2, reasons=(Reason("shape", "x", "f32[2]", "f32[3]"),)
    )
    text = codec.by_line(Compiles(3, (first, again)), "compiles")
    assert text == (
        '{"schema":"jxinspect.compiles/1","dropped":3,"compiles":[\n'
        f"  {codec.line(first)},\n"
        f"  {codec.line(again)}\n"
        "]}\n"
    )
    assert codec.decode(text, Compiles, source="c") == Compiles(3, (first, again))


def test_no_rows_and_no_other_field() -> None:
    assert codec.by_line(Compiles(), "compiles") == (
        '{"schema":"jxinspect.compiles/1","dropped":0,"compiles":[]}\n'
    )
    assert codec.by_line(_Rows((1, 2)), "rows") == '{"rows":[\n  1,\n  2\n]}\n'
    assert codec.by_line(_Rows(()), "rows") == '{"rows":[]}\n'
    assert json.loads(codec.by_line(_Rows((1,)), "rows")) == {"rows": [1]}
