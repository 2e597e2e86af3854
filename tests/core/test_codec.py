"""The codec's handling of fields kept in memory but never written, at any depth."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from jxinspect.core import codec
from jxinspect.core.errors import UsageError


@dataclass(frozen=True)
class Leaf:
    name: str
    seconds: float | None = field(default=None, compare=False, metadata={"written": False})


@dataclass(frozen=True)
class Plain:
    value: int


@dataclass(frozen=True)
class Holder:
    leaves: tuple[Leaf, ...]
    one: Leaf | None
    by_name: dict[str, Leaf]
    plain: Plain
    note: str = field(default="", metadata={"written": False})


HOLDER = Holder(
    leaves=(Leaf("a", 1.5), Leaf("b")),
    one=Leaf("c", 2.0),
    by_name={"d": Leaf("d", 3.0)},
    plain=Plain(1),
    note="kept",
)


def test_unwritten_fields_are_left_out_at_any_depth() -> None:
    assert codec.line(HOLDER) == (
        '{"leaves":[{"name":"a"},{"name":"b"}],"one":{"name":"c"},'
        '"by_name":{"d":{"name":"d"}},"plain":{"value":1}}'
    )
    assert codec.plain(HOLDER)["one"] == {"name": "c"}


def test_writing_leaves_the_value_as_it_was() -> None:
    codec.dumps(HOLDER)
    assert HOLDER.note == "kept" and HOLDER.leaves[0].seconds == 1.5
    assert HOLDER.one is not None and HOLDER.one.seconds == 2.0


def test_what_is_read_back_has_the_unwritten_fields_defaults() -> None:
    back = codec.decode(codec.line(HOLDER), Holder, source="holder")
    assert back == replace(HOLDER, note="")  # a leaf's seconds do not compare
    assert back.note == "" and back.leaves[0].seconds is None


def test_only_types_that_hold_unwritten_fields_are_walked() -> None:
    assert codec.unwritten(Holder) == {"note"} and codec.unwritten(Leaf) == {"seconds"}
    assert codec.unwritten(Plain) == frozenset()
    plan = codec._plan(Holder)
    assert plan is not None and plan.nested == {"leaves", "one", "by_name"}
    assert codec._plan(Plain) is None


def test_a_decode_error_keeps_an_acronym_as_written() -> None:
    with pytest.raises(codec.DecodeError) as raised:
        codec.decode(b"{not json", Holder, source="h.json")
    assert str(raised.value) == "h.json: JSON is malformed: object keys must be strings (byte 1)"
    with pytest.raises(codec.DecodeError) as raised:
        codec.decode(b'{"value": "1"}', Plain, source="p.json")
    assert str(raised.value) == "p.json: at $.value: expected `int`, got `str`"


@dataclass(frozen=True)
class Cost:
    seconds: float | None
    names: list[str]


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_number_that_is_not_finite_is_a_decode_error_with_its_path(number: float) -> None:
    """The standard library's JSON reader (and YAML) give ``inf`` for ``1e400``: refused
    where a reader converts it, as msgspec refuses the text."""
    with pytest.raises(codec.DecodeError, match=r"^c.json: at \$\[1\]\.seconds: expected a finite"):
        codec.convert([{"seconds": 1.0, "names": []}, {"seconds": number, "names": []}],
                      list[Cost], source="c.json")  # fmt: skip
    with pytest.raises(codec.DecodeError, match=r"at `?\$\[0\]\.seconds`?: number out of range"):
        codec.decode('[{"seconds": 1e400, "names": []}]', list[Cost], source="c.json")


def test_json_printed_to_a_terminal_escapes_c1_and_bidi_controls() -> None:
    text = "a\u202eb\x9bc\u2028d\u2066e\x1bé漢"
    written = codec.dumps(Cost(None, [text]))
    assert not any(ch in written for ch in "\u202e\x9b\u2028\u2066\x1b")
    assert "é漢" in written
    assert codec.decode(written, Cost, source="c.json").names == [text]


def test_rows_are_counted_and_a_schema_read_without_building_them() -> None:
    text = '{"schema": "x/1", "rows": [{"a": 1}, [2], 3]}'
    assert codec.count_items(text, "rows", source="f") == 3
    assert codec.count_items("[1, 2]", "rows", source="f") == 0
    assert codec.schema_of(text, source="f") == "x/1"
    assert codec.schema_of("[]", source="f") is None
    with pytest.raises(codec.DecodeError):
        codec.schema_of('{"schema": ', source="f")
    deep = '{"rows": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(codec.DecodeError, match=codec.TOO_DEEP):
        codec.count_items(deep, "rows", source="f")


@dataclass(frozen=True)
class Named:
    schema: str = "test/1"
    value: int = 0


def test_read_file_names_the_file_the_json_path_and_what_the_file_is(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"schema": "test/1", "value": 3}', encoding="utf-8")
    assert codec.read_file(path, Named, schema="test/1") == Named(value=3)
    cases = {
        '{"schema": "test/1", "value": "x"}': (False, "test/1", "at $.value: expected `int`"),
        '{"schema": "other/1", "value": 3}': (False, "other/1", "expected the schema 'test/1'"),
        '{"value": 3}': (False, None, "expected the schema 'test/1'"),
        '{"schema": ': (True, None, "input data was truncated"),
        "[1]": (False, None, "expected the schema 'test/1'"),
    }
    for text, (malformed, found, problem) in cases.items():
        path.write_text(text, encoding="utf-8")
        with pytest.raises(codec.DecodeError) as err:
            codec.read_file(path, Named, shown="a.json", schema="test/1")
        assert (err.value.source, err.value.malformed, err.value.found) == (
            "a.json",
            malformed,
            found,
        ), text[:40]
        assert err.value.problem.startswith(problem), err.value.problem
    path.write_text('{"value": 3}', encoding="utf-8")
    assert codec.read_file(path, Named) == Named(value=3)  # no schema asked: the default


def test_read_file_is_the_bounded_reader_of_regular_files(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text("[" + "0," * 100 + "0]", encoding="utf-8")
    with pytest.raises(UsageError, match="big.json is larger than 0 MiB"):
        codec.read_file(path, list[int], limit=100)
    with pytest.raises(UsageError, match="is not a regular file \\(a folder\\)"):
        codec.read_file(tmp_path, list[int])
    with pytest.raises(FileNotFoundError):
        codec.read_file(tmp_path / "missing.json", list[int])
