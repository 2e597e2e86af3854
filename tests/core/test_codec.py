"""The codec's handling of fields kept in memory but never written, at any depth."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from jxinspect.core import codec


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
