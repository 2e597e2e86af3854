"""Tests for jxinspect.project.spec, the safe example-input spec language."""

from __future__ import annotations

import builtins
import keyword
import math
import os
import string
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jxinspect.project import spec
from jxinspect.project.spec import (
    SHORT_DTYPES,
    ArraySpec,
    PSpec,
    SpecError,
    parse_args,
    parse_axes,
    parse_int_tuple,
    parse_kwargs,
    parse_mesh,
    parse_name_tuple,
    parse_specs,
    short_dtype,
)


def parse_value(text: str) -> object:
    """One value, read as ``--args`` reads its one argument."""
    values = parse_args(text)
    assert len(values) == 1, values
    return values[0]


PARSERS: list[Callable[[str], object]] = [
    parse_args,
    parse_kwargs,
    parse_mesh,
    parse_int_tuple,
    parse_name_tuple,
    parse_specs,
    parse_axes,
]
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


UNKNOWN_F33 = "unknown dtype 'f33' (expected one of f32, bf16, f16, i32, bool, ...)"
BARE_X = "bare name 'x' is not a value (quote strings; arrays look like f32[3])"
NOT_A_DIM = "array dims must be non-negative ints"
REPEATS = "'*' repeats a list or tuple, e.g. [f32[512,512]] * 4"
COUNT = "a repetition count must be a non-negative int, e.g. [f32[8]] * 4"
NO_AXIS_NAMES = "expected mesh axis names after '@', e.g. 8@(data,fsdp)"
DOTTED = "a dotted name is only allowed as a class called with its fields, e.g. optax.EmptyState()"
NOT_NAMED = "expected name=value pairs or one {name: value} dict"


def A(dtype: str, *shape: int, axes: tuple[tuple[str, ...], ...] = ()) -> ArraySpec:
    return ArraySpec(dtype, tuple(shape), axes)


def error(fn: Callable[[str], object], text: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        fn(text)
    return info.value


# ---------------------------------------------------------------- dtypes ----


def test_short_dtypes_table() -> None:
    assert SHORT_DTYPES["f32"] == "float32"
    assert SHORT_DTYPES["bf16"] == "bfloat16"
    assert SHORT_DTYPES["bool"] == "bool"
    assert SHORT_DTYPES["c128"] == "complex128"
    assert SHORT_DTYPES["f8_e4m3b11fnuz"] == "float8_e4m3b11fnuz"
    required = "f16 f32 f64 bf16 i8 i16 i32 i64 u8 u16 u32 u64 c64 c128 bool f8_e4m3fn "
    required += "f8_e5m2 f8_e4m3fnuz f8_e5m2fnuz f8_e4m3b11fnuz"
    for short in required.split():
        assert short in SHORT_DTYPES
    assert len(set(SHORT_DTYPES.values())) == len(SHORT_DTYPES)  # invertible


def test_short_dtype() -> None:
    assert short_dtype("float32") == "f32"
    assert short_dtype("bfloat16") == "bf16"
    assert short_dtype("bool") == "bool"
    assert short_dtype("float8_e5m2") == "f8_e5m2"
    assert short_dtype("float0") == "float0"  # unknown: unchanged
    for short, long in SHORT_DTYPES.items():
        assert short_dtype(long) == short


@pytest.mark.parametrize("short", sorted(SHORT_DTYPES))
def test_every_dtype_parses_short_and_long(short: str) -> None:
    long = SHORT_DTYPES[short]
    assert parse_value(f"{short}[2]") == A(long, 2)
    assert parse_value(f"{long}[2]") == A(long, 2)


def test_bool_underscore_alias() -> None:
    assert parse_value("bool_[3]") == A("bool", 3)
    assert str(parse_value("bool_[3]")) == "bool[3]"


def test_short_names_agree_with_jax() -> None:
    dtypes = pytest.importorskip("jax._src.dtypes")
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    checked = 0
    for short, long in SHORT_DTYPES.items():
        try:
            dt = np.dtype(getattr(ml_dtypes, long, None) or long)
        except TypeError:
            continue  # a dtype this numpy / ml_dtypes does not have
        assert dt.name == long
        assert dtypes.short_dtype_name(dt) == short
        checked += 1
    assert checked >= 15


# ------------------------------------------------------------ ArraySpec ----


@pytest.mark.parametrize(
    "text, expected",
    [
        ("f32[8,128]", A("float32", 8, 128)),
        ("bf16[]", A("bfloat16")),
        ("bf16[ ]", A("bfloat16")),
        ("f32[()]", A("float32")),
        ("i32[4]", A("int32", 4)),
        ("bool[3]", A("bool", 3)),
        ("u8[0]", A("uint8", 0)),
        ("float32[2, 3]", A("float32", 2, 3)),
        ("f32[2,]", A("float32", 2)),
        ("f32[8@data,128]", A("float32", 8, 128, axes=(("data",), ()))),
        ("f32[8@(data,fsdp),128@model]", A("float32", 8, 128, axes=(("data", "fsdp"), ("model",)))),
        ("f32[8 @ data, 4 @ ( x , y )]", A("float32", 8, 4, axes=(("data",), ("x", "y")))),
        ("f32[8@(data,)]", A("float32", 8, axes=(("data",),))),
        ("f32[\n 3,\n 4]", A("float32", 3, 4)),
        ("  f32[3]  ", A("float32", 3)),
        ("f32[0x10]", A("float32", 16)),
        ("f32[1_000]", A("float32", 1000)),
    ],
)
def test_parse_array(text: str, expected: ArraySpec) -> None:
    assert parse_value(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "f32[8,128]",
        "bf16[]",
        "bool[3]",
        "f32[8@data,128]",
        "f32[8@(data,fsdp),128@model]",
        "f8_e4m3fn[2,2]",
        "c64[1]",
        "u32[0,0,0]",
    ],
)
def test_array_str_round_trip(text: str) -> None:
    value = parse_value(text)
    assert str(value) == text
    assert parse_value(str(value)) == value


def test_array_str_normalizes() -> None:
    assert str(parse_value("float32[ 8 @ data , 4 ]")) == "f32[8@data,4]"
    assert str(parse_value("bfloat16[]")) == "bf16[]"


def test_array_spec_fields() -> None:
    a = parse_value("f32[8@data,128]")
    assert isinstance(a, ArraySpec)
    assert a.dtype == "float32" and a.shape == (8, 128) and a.axes == (("data",), ())
    assert a.sharded
    b = parse_value("f32[8,128]")
    assert isinstance(b, ArraySpec) and not b.sharded and b.axes == ((), ())
    assert hash(a) != hash(b) and len({a, b, parse_value("f32[8@data,128]")}) == 2
    with pytest.raises(AttributeError):
        a.dtype = "int32"  # type: ignore[misc]


def test_array_spec_constructor() -> None:
    assert ArraySpec("float32", (2, 3)).axes == ((), ())
    assert ArraySpec("float32", ()).axes == ()
    assert str(ArraySpec("float32", (2,), (("a", "b"),))) == "f32[2@(a,b)]"
    assert str(ArraySpec("float0", (2,))) == "float0[2]"  # unknown dtype kept as is
    with pytest.raises(ValueError):
        ArraySpec("float32", (2, 3), ((),))


# ------------------------------------------------------------------ PSpec ----


@pytest.mark.parametrize(
    "text, entries",
    [
        ("P()", ()),
        ("P('data', None)", ("data", None)),
        ("P(('data','fsdp'), 'model')", (("data", "fsdp"), "model")),
        ("P(data, None)", ("data", None)),
        ('P(["a", b])', (("a", "b"),)),
        ("P(('a',))", (("a",),)),
        ("P(())", ((),)),
    ],
)
def test_parse_pspec(text: str, entries: tuple[Any, ...]) -> None:
    assert parse_value(text) == PSpec(entries)


@pytest.mark.parametrize(
    "entries, text",
    [
        ((), "P()"),
        (("data", None), "P('data', None)"),
        ((("data", "fsdp"), "model"), "P(('data', 'fsdp'), 'model')"),
        ((("a",),), "P(('a',))"),
    ],
)
def test_pspec_str(entries: tuple[Any, ...], text: str) -> None:
    assert str(PSpec(entries)) == text
    assert parse_value(text) == PSpec(entries)


# ----------------------------------------------------- literals and pytrees ----


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3", 3),
        ("-3", -3),
        ("2.5", 2.5),
        ("-2.5", -2.5),
        ("1e3", 1000.0),
        ("0", 0),
        ("'hi'", "hi"),
        ('"hi"', "hi"),
        ("'a' 'b'", "ab"),
        ("r'\\d'", "\\d"),
        ("u'x'", "x"),
        ("True", True),
        ("False", False),
        ("None", None),
        ("'é'", "é"),
        ("10**0" if False else "12345678901234567890", 12345678901234567890),
    ],
)
def test_parse_literals(text: str, expected: object) -> None:
    value = parse_value(text)
    assert value == expected and type(value) is type(expected)


def test_parse_pytrees() -> None:
    assert parse_value("{w: f32[3,2], 'b': f32[2]}") == {
        "w": A("float32", 3, 2),
        "b": A("float32", 2),
    }
    assert parse_value("[f32[3], f32[4]]") == [A("float32", 3), A("float32", 4)]
    assert parse_value("(f32[3], 3)") == (A("float32", 3), 3)
    assert parse_value("{0: 'a', -1: None}") == {0: "a", -1: None}
    assert parse_value("()") == () and parse_value("[]") == [] and parse_value("{}") == {}
    assert parse_value("(1,)") == (1,)
    nested = parse_value("{a: [(f32[1], {'b': P('x')}), None], c: (True, -1.5, 's')}")
    assert nested == {"a": [(A("float32", 1), {"b": PSpec(("x",))}), None], "c": (True, -1.5, "s")}


def test_a_class_is_written_by_its_import_path_with_its_fields() -> None:
    state = parse_value("(optax.ScaleByAdamState(count=i32[], mu={'w': f32[3]}, nu=f32[3]), "
                        "optax._src.base.EmptyState())")  # fmt: skip
    assert state == (
        spec.Struct(
            "optax.ScaleByAdamState",
            (("count", A("int32")), ("mu", {"w": A("float32", 3)}), ("nu", A("float32", 3))),
        ),
        spec.Struct("optax._src.base.EmptyState", ()),
    )


def test_dict_order_kept() -> None:
    assert list(parse_value("{z: 1, a: 2, m: 3}")) == ["z", "a", "m"]  # type: ignore[call-overload]


# -------------------------------------------------------------- parse_args ----


def test_parse_args() -> None:
    f3 = A("float32", 3)
    assert parse_args("") == ()
    assert parse_args("   \n ") == ()
    assert parse_args("f32[3]") == (f3,)
    assert parse_args("f32[3], 3") == (f3, 3)
    assert parse_args("f32[3], 3,") == (f3, 3)
    assert parse_args("(f32[3], 3)") == ((f3, 3),)
    assert parse_args("(f32[3])") == (f3,)  # parentheses alone do not make a tuple
    assert parse_args("(f32[3],)") == ((f3,),)
    assert parse_args("[f32[3]], {a: 1}") == ([f3], {"a": 1})
    assert parse_args("P('x'), None") == (PSpec(("x",)), None)


def test_parse_args_rejects_keywords() -> None:
    e = error(parse_args, "f32[3], x=2")
    assert (e.column, e.reason) == (8, "unexpected name=value here")


# ------------------------------------------------------------ parse_kwargs ----


def test_parse_kwargs() -> None:
    assert parse_kwargs("") == {}
    assert parse_kwargs("x=f32[3], scale=2.0") == {"x": A("float32", 3), "scale": 2.0}
    assert parse_kwargs("x = f32[3] ,") == {"x": A("float32", 3)}
    assert parse_kwargs("{x: f32[3], 'scale': 2.0}") == {"x": A("float32", 3), "scale": 2.0}
    assert parse_kwargs("{}") == {}
    assert parse_kwargs("t=(1, [2]), d={k: None}") == {"t": (1, [2]), "d": {"k": None}}


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("f32[3]", 0, NOT_NAMED),
        ("x=1, f32[3]", 5, "positional argument follows keyword argument"),
        ("{x: 1}, y=2", 0, NOT_NAMED),
        ("{x: 1}, {y: 2}", 0, NOT_NAMED),
        ("x=1, x=2", 5, "'x' used twice"),
        ("{x: 1, 'x': 2}", 7, "'x' used twice"),
        ("{1: 2}", 1, "expected a name"),
        ("x=y", 2, "bare name 'y' is not a value (quote strings; arrays look like f32[3])"),
    ],
)
def test_parse_kwargs_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_kwargs, text)
    assert (e.column, e.reason) == (column, reason), str(e)


# -------------------------------------------------------------- parse_mesh ----


def test_parse_mesh() -> None:
    assert parse_mesh("data=2,model=4") == (("data", 2), ("model", 4))
    assert parse_mesh(" data = 2 , ") == (("data", 2),)
    assert parse_mesh("{data: 2, 'model': 4}") == (("data", 2), ("model", 4))
    assert parse_mesh("") == ()


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("data=0", 5, "mesh axis sizes must be positive"),
        ("data=-2", 5, "mesh axis sizes must be positive"),
        ("data=2.0", 5, "expected an int"),
        ("data=True", 5, "expected an int"),
        ("data='2'", 5, "expected an int"),
        ("data=2, data=4", 8, "'data' used twice"),
        ("{'my axis': 2}", 1, "mesh axis name 'my axis' is not an identifier"),
        ("2, 4", 0, NOT_NAMED),
    ],
)
def test_parse_mesh_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_mesh, text)
    assert (e.column, e.reason) == (column, reason), str(e)


# ---------------------------------------------------- int and name tuples ----


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", ()),
        ("1", (1,)),
        ("0,2", (0, 2)),
        ("(0, 2)", (0, 2)),
        ("[0, 2]", (0, 2)),
        ("(3,)", (3,)),
        ("-1", (-1,)),
        ("()", ()),
        ("1,", (1,)),
    ],
)
def test_parse_int_tuple(text: str, expected: tuple[int, ...]) -> None:
    assert parse_int_tuple(text) == expected


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("1.5", 0, "expected an int"),
        ("True", 0, "expected an int"),
        ("0, 'a'", 3, "expected an int"),
        ("None", 0, "expected an int"),
        ("(1, (2,))", 4, "Tuple expressions are not allowed"),
        ("x", 0, BARE_X),
    ],
)
def test_parse_int_tuple_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_int_tuple, text)
    assert (e.column, e.reason) == (column, reason), str(e)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", ()),
        ("scale", ("scale",)),
        ("a,b", ("a", "b")),
        ("'a', 'b'", ("a", "b")),
        ("(a, 'b')", ("a", "b")),
        ("['a']", ("a",)),
        ("P", ("P",)),
    ],
)
def test_parse_name_tuple(text: str, expected: tuple[str, ...]) -> None:
    assert parse_name_tuple(text) == expected


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("a, 1", 3, "expected a name"),
        ("'a b'", 0, "'a b' is not an identifier"),
        ("a, a", 3, "'a' used twice"),
        ("None", 0, "expected a name"),
        ("x=1", 0, "unexpected name=value here"),
        ("'1a'", 0, "'1a' is not an identifier"),
    ],
)
def test_parse_name_tuple_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_name_tuple, text)
    assert (e.column, e.reason) == (column, reason), str(e)


# ------------------------------------------------------------- parse_specs ----


def test_parse_specs() -> None:
    assert parse_specs("") == ()
    assert parse_specs("P('data', None), P(None, 'model')") == (
        PSpec(("data", None)),
        PSpec((None, "model")),
    )
    assert parse_specs("None") == (None,)
    assert parse_specs("(P(), None)") == ((PSpec(()), None),)
    assert parse_specs("{w: P('a'), b: [None, P()]}") == (
        {"w": PSpec(("a",)), "b": [None, PSpec(())]},
    )


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("f32[3]", 0, "expected P(...) or None"),
        ("P('a'), 3", 8, "expected P(...) or None"),
        ("Q('a')", 0, "only P(...) calls are allowed"),
        ("P(axis='a')", 2, "P(...) takes no keyword arguments"),
        ("P(1)", 2, "expected a name"),
        ("P('a', 'a')", 7, "'a' used twice"),
        ("P(('a', 'b'), 'b')", 14, "'b' used twice"),
        ("P(('a', None))", 8, "expected a name"),
        ("P", 0, "expected P(...) or None"),
        ("P()()", 0, "only P(...) calls are allowed"),
    ],
)
def test_parse_specs_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_specs, text)
    assert (e.column, e.reason) == (column, reason), str(e)


# ----------------------------------------------------------- parse_axes ----


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("None", None),
        ("-1", -1),
        ("0, None, 1", (0, None, 1)),
        ("(0, None)", (0, None)),
        ("(0,)", (0,)),
        ("0,", 0),
        ("[0, None]", [0, None]),
        ("{'a': 0, b: None}", {"a": 0, "b": None}),
        ("(0, {x: [1, None]})", (0, {"x": [1, None]})),
    ],
)
def test_parse_axes(text: str, expected: object) -> None:
    assert parse_axes(text) == expected


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("", 0, "no axes given"),
        ("1.0", 0, "expected an int"),
        ("0, 'a'", 3, "expected an int"),
        ("True", 0, "expected an int"),
        ("P()", 0, "Call expressions are not allowed"),
        ("x=0", 0, "unexpected name=value here"),
    ],
)
def test_parse_axes_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_axes, text)
    assert (e.column, e.reason) == (column, reason), str(e)


# --------------------------------------------------------- errors, columns ----


@pytest.mark.parametrize(
    "text, column, reason",
    [
        # dtypes and dims
        ("[f32[3], f33[2]]", 9, UNKNOWN_F33),
        (
            "float[3]",
            0,
            "unknown dtype 'float' (expected one of float64, float32, float16, "
            "f32, bf16, f16, i32, bool, ...)",
        ),
        ("P[]", 0, "unknown dtype 'P' (expected one of f32, bf16, f16, i32, bool, ...)"),
        ("True[3]", 0, "only a dtype name can be subscripted, e.g. f32[3]"),
        ("f32[3][4]", 0, "only a dtype name can be subscripted, e.g. f32[3]"),
        ("f32[-1]", 4, NOT_A_DIM),
        ("f32[1.5]", 4, NOT_A_DIM),
        ("f32[True]", 4, NOT_A_DIM),
        ("f32[n]", 4, NOT_A_DIM),
        ("f32[1:2]", 4, NOT_A_DIM),
        ("f32[(2, 3), 4]", 4, NOT_A_DIM),
        ("f32[99999999999999999999]", 4, "array dim too large"),
        ("f32[8@data@model]", 4, "one '@' per dim; write 8@(data,fsdp)"),
        ("f32[8@'data']", 6, NO_AXIS_NAMES),
        ("f32[8@()]", 6, NO_AXIS_NAMES),
        ("f32[8@(a, 1)]", 6, NO_AXIS_NAMES),
        ("f32[8@data,4@data]", 13, "'data' used twice"),
        ("f32[data@8]", 9, NO_AXIS_NAMES),
        ("f32[3]@data", 0, "'@' is only allowed on array dims, e.g. f32[8@data]"),
        # literals and names
        ("x", 0, BARE_X),
        ("1j", 0, "complex literals are not allowed"),
        ("-1j", 0, "'-' must be followed by a number"),
        ("--1", 0, "'-' must be followed by a number"),
        ("-'a'", 0, "'-' must be followed by a number"),
        ("-True", 0, "'-' must be followed by a number"),
        ("b'x'", 0, "bytes literals are not allowed"),
        ("rb'x'", 0, "bytes literals are not allowed"),
        ("f'{x}'", 0, "f-strings are not allowed"),
        ("F'x'", 0, "f-strings are not allowed"),
        ("...", 0, "unexpected '...'"),
        (
            "Ellipsis",
            0,
            "bare name 'Ellipsis' is not a value (quote strings; arrays look like f32[3])",
        ),
        ("{True: 1}", 1, "dict keys must be identifiers, strings or ints"),
        ("{1.5: 1}", 1, "dict keys must be identifiers, strings or ints"),
        ("{(1,): 1}", 1, "Tuple expressions are not allowed"),
        ("{a: 1, 'a': 2}", 7, "duplicate key 'a'"),
        ("{1: 1, a: 2}", 7, "dict keys must be all strings or all ints"),
        # forbidden syntax, caught by the token check
        (
            "__import__('os').system('x')",
            0,
            "expected an import path, e.g. optax.ScaleByAdamState(...)",
        ),
        ("a.b", 0, DOTTED),
        (
            "optax.EmptyState(f32[3])",
            17,
            "'optax.EmptyState'(...) takes its fields by name: field=value",
        ),
        ("m.C(a=1, a=2)", 9, "field 'a' given twice"),
        ("m.C(a=x.y)", 6, DOTTED),
        ("lambda: 1", 0, "unexpected keyword 'lambda'"),
        ("[x for x in y]", 3, "unexpected keyword 'for'"),
        ("1 if 1 else 2", 2, "unexpected keyword 'if'"),
        ("not 1", 0, "unexpected keyword 'not'"),
        ("*a", 0, "expected a value"),
        # repetition: a list or tuple times a non-negative int, bounded
        ("f32[3] * 2", 0, REPEATS),
        ("2 * 3", 0, REPEATS),
        ("[1] * x", 6, COUNT),
        ("x * [1]", 0, COUNT),
        ("[1] * 2.0", 6, COUNT),
        ("[1] * True", 6, COUNT),
        ("[1] * -1", 6, COUNT),
        ("[1] * [2]", 6, COUNT),
        ("[f32[1]] * 100000", 11, "a repetition makes more than 100000 values"),
        ("[[f32[1]] * 1000] * 1000", 20, "a repetition makes more than 100000 values"),
        ("[[]] * 10000000000", 7, "a repetition makes more than 100000 values"),
        ("[1] ** 2", 4, "unexpected '**'"),
        ("[1] *= 2", 4, "unexpected '*='"),
        ("{**a}", 1, "unexpected '**'"),
        ("1 + 2", 2, "unexpected '+'"),
        ("(x := 1)", 3, "unexpected ':='"),
        ("x == 1", 2, "unexpected '=='"),
        ("~1", 0, "unexpected '~'"),
        ("f32[3] # comment", 7, "comments are not allowed"),
        ("'abc", 0, "unterminated string"),
        ("'''abc", 0, "EOF in multi-line string"),
        ("$", 0, "unexpected '$'"),
        ("f32[3]\\", 6, "unexpected '\\\\'"),
        ("1;2", 1, "unexpected ';'"),
        # calls
        ("print('hi')", 0, "only P(...) calls are allowed"),
        ("P(x=1)", 2, "P(...) takes no keyword arguments"),
        ("Q", 0, "bare name 'Q' is not a value (quote strings; arrays look like f32[3])"),
        # brackets
        ("f32[3", 3, "'[' was never closed"),
        ("[1, [2", 4, "'[' was never closed"),
        ("1)", 1, "unmatched ')'"),
        ("1), (2", 1, "unmatched ')'"),
        ("(]", 1, "unmatched ']'"),
        ("}", 0, "unmatched '}'"),
        ("[" * 65 + "]" * 65, 64, "nesting deeper than 64"),
        # whole text
        ("x=f32[3]", 0, "unexpected name=value here"),
        ("1 2", 2, "expected ',' or end of text"),
        ("bf16[][]", 7, "expected a value"),
        ("\x00", 0, "invalid character '\\x00'"),
        ("f32[3]\x00", 6, "invalid character '\\x00'"),
        ("'\ud800'", 1, "invalid character '\\ud800'"),
    ],
)
def test_parse_value_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_value, text)
    assert (e.column, e.reason) == (column, reason), str(e)


def test_repetition_is_pythons_sequence_repetition() -> None:
    a, b = A("float32", 512, 512), A("float32", 512)
    assert parse_value("[f32[512,512]] * 4") == [a] * 4
    assert parse_value("4 * [f32[512,512]]") == [a] * 4
    assert parse_value("[(f32[512,512], f32[512])] * 2") == [(a, b)] * 2
    assert parse_value("(f32[512], 3) * 2") == (b, 3, b, 3)
    assert parse_value("[f32[512]] * 2 * 3") == [b] * 6
    assert parse_value("[f32[512]] * 0") == [] and parse_value("[] * 10000000000") == []
    assert parse_value("{w: [f32[512]] * 2}") == {"w": [b, b]}
    assert parse_value("m.C(layers=[f32[512]] * 2)") == spec.Struct("m.C", (("layers", [b, b]),))
    assert parse_args("[f32[512]]*2, [P('a')]*0") == ([b, b], [])
    assert len(parse_value("[f32[1]] * 99999")) == 99999  # the bound is reachable
    assert parse_specs("[P('a')] * 2") == ([PSpec(("a",))] * 2,)


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("bf16[], f33[2]", 8, UNKNOWN_F33),  # after an empty index NAME[]
        ("bf16[], bf16[], x", 16, BARE_X),
        ("bf16[ ], f33[1]", 9, UNKNOWN_F33),
        ("'éé', f33[2]", 6, UNKNOWN_F33),  # characters, not UTF-8 bytes
        ("'😀😀😀', x", 7, BARE_X),
        ("f32[3],\n  f33[2]", 10, UNKNOWN_F33),  # multi-line: offset into the flattened text
        ("(\n1,\n\n x)", 7, BARE_X),
        ("f32[3],\r\nx", 9, BARE_X),
    ],
)
def test_error_columns_refer_to_original_text(text: str, column: int, reason: str) -> None:
    e = error(parse_args, text)
    assert (e.column, e.reason) == (column, reason), str(e)


def test_syntax_error_column_after_an_empty_index() -> None:
    e = error(parse_args, "bf16[] bf16[]")
    assert (e.column, e.reason) == (7, "expected ',' or end of text"), str(e)


# ---------------------------------------------------------- syntax errors ----


@pytest.mark.parametrize(
    "text, column, reason",
    [
        # unclosed and stray brackets: the innermost open one, or the stray closer
        ("(1, 2", 0, "'(' was never closed"),
        ("[1, (2", 4, "'(' was never closed"),
        ("((1", 1, "'(' was never closed"),
        ("{a: [1}", 6, "unmatched '}'"),
        ("x[1]]", 4, "unmatched ']'"),
        ("f32[8@(]", 7, "unmatched ']'"),
        # a value where a separator or closer belongs
        ("1 2", 2, "expected ',' or end of text"),
        ("1 2 3", 2, "expected ',' or end of text"),
        ("(1 2)", 3, "expected ',' or ')'"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("f32[3 4]", 6, "expected ',' or ']'"),
        ("f32[1:2:3:4]", 9, "expected ',' or ']'"),
        ("P('a' 'b' c)", 10, "expected ',' or ')'"),
        ("{a: 1 b: 2}", 6, "expected ',' or '}'"),
        ("{1, 2: 3}", 5, "expected ',' or '}'"),
        ("{a 1}", 3, "expected ':', ',' or '}'"),
        ("{a: 1, b 2}", 9, "expected ':'"),
        ("f32[]x", 5, "expected ',' or end of text"),
        ("x.1", 1, "expected ',' or end of text"),
        ("x.", 2, "expected a name after '.'"),
        ("x.None", 2, "expected a name after '.'"),
        # '=' only after a bare name in a call's arguments
        ("(x=1)", 2, "expected ',' or ')'"),
        ("1=2", 1, "expected ',' or end of text"),
        ("m.C(a.b=1)", 7, "expected ',' or ')'"),
        ("x=1, 2", 5, "positional argument follows keyword argument"),
        ("x=1, =2", 5, "expected a value"),
        # a separator or closer where a value belongs
        ("x=", 2, "expected a value"),
        ("-", 1, "expected a value"),
        ("1 @", 3, "expected a value"),
        ("{a:}", 3, "expected a value"),
        ("f32[8@]", 6, "expected a value"),
        ("f32[3][]", 7, "expected a value"),  # only NAME[] is an empty index
        (".x", 0, "expected a value"),
        ("=1", 0, "expected a value"),
        (":", 0, "expected a value"),
        # trailing commas: one after a value, never one alone or two
        (",", 0, "expected a value"),
        ("1,,", 2, "expected a value"),
        ("1,,2", 2, "expected a value"),
        ("(,)", 1, "expected a value"),
        ("[,]", 1, "expected a value"),
        ("[1,,]", 3, "expected a value"),
        ("{,}", 1, "expected a value"),
        ("{1: 2,,}", 6, "expected a value"),
        ("P(,)", 2, "expected a value"),
        ("f32[,]", 4, "expected a value"),
        # literals
        ("1x", 0, "invalid decimal literal"),
        ("1__0", 0, "invalid decimal literal"),
        ("1.5e", 0, "invalid decimal literal"),
        ("0x", 0, "invalid hexadecimal literal"),
        ("0b12", 0, "invalid binary literal"),
        ("0o8", 0, "invalid octal literal"),
        ("1jx", 0, "invalid imaginary literal"),
        (
            "0123",
            0,
            "leading zeros in decimal integer literals are not permitted; "
            "use an 0o prefix for octal integers",
        ),  # fmt: skip
        ("'\\x4'", 1, "truncated \\xXX escape"),
        ("'\\u00e'", 1, "truncated \\uXXXX escape"),
        ("'\\U0001F60'", 1, "truncated \\UXXXXXXXX escape"),
        ("'ab\\N{NOPE}'", 3, "unknown Unicode character name"),
        ("'\\Nx'", 1, "malformed \\N character escape"),
        ("'\\U00110000'", 1, "illegal Unicode character"),
        ("'😀\\x4'", 2, "truncated \\xXX escape"),  # characters, not UTF-8 bytes
        ("'a\nb'", 0, "unterminated string"),
        ("r'abc\\'", 0, "unterminated string"),
        ('"""a', 0, "EOF in multi-line string"),
        ("'''a''' '", 8, "unterminated string"),
    ],
)
def test_syntax_errors(text: str, column: int, reason: str) -> None:
    e = error(parse_args, text)
    assert (e.column, e.reason) == (column, reason), str(e)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1,", (1,)),
        ("(1,)", ((1,),)),
        ("[1,]", ([1],)),
        ("{'a': 1,}", ({"a": 1},)),
        ("f32[3,]", (A("float32", 3),)),
        ("P('a',)", (PSpec(("a",)),)),
        ("m.C(a=1,)", (spec.Struct("m.C", (("a", 1),)),)),
    ],
)
def test_trailing_commas(text: str, expected: object) -> None:
    assert parse_args(text) == expected


def test_empty_input() -> None:
    for text in ("", " ", "\n\t", "\\\n", "\r\n"):
        assert parse_args(text) == () and parse_kwargs(text) == {} and parse_mesh(text) == ()
        assert parse_int_tuple(text) == () and parse_name_tuple(text) == ()
        assert parse_specs(text) == () and spec.parse_dims(text) == ()
        e = error(parse_axes, text)
        assert (e.column, e.reason) == (0, "no axes given")
    assert parse_args("()") == ((),)


@pytest.mark.parametrize(
    "text, expected",
    [
        (r"'\x41\u00e9\U0001F600\N{BULLET}\N{bullet}\101\0'", "Aé😀••A\x00"),
        (r"""'\a\b\f\n\r\t\v\\\'\"'""", "\a\b\f\n\r\t\v\\'\""),
        (r"'\q\8\ \é'", r"\q\8\ \é"),  # unknown escapes are kept
        ("'a\\\nb'", "ab"),  # an escaped newline joins the lines
        (r"'\777'", "\u01ff"),
        (r"'\ud800'", "\ud800"),  # an escaped surrogate, as Python reads it
        (r"r'\x41\''", r"\x41\'"),
        (r"R'\d' U'x' u'y'", r"\dxy"),
        ("'''a\nb'''", "a\nb"),
        ('"""it\'s"""', "it's"),
        (r"'''a\''''", "a'"),
        (r"""'a' "b" '''c''' r'\d'""", r"abc\d"),
        ("'a\rb'", "a b"),  # a carriage return reads as a space, even in a string
    ],
)
def test_string_literals(text: str, expected: str) -> None:
    assert parse_value(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0x_1F", 31),
        ("0O17", 15),
        ("0b101", 5),
        ("00", 0),
        ("0_0", 0),
        ("1_000", 1000),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1E-3", 0.001),
        ("07.5", 7.5),
        ("1_0.0_1e1_0", 10.01e10),
        ("1e999", math.inf),
        ("-0.0", -0.0),
        ("- 1", -1),
    ],
)
def test_number_literals(text: str, expected: object) -> None:
    assert same(parse_value(text), expected)


def test_spec_error_format() -> None:
    e = error(parse_args, "f32[3], f33[2]")
    assert isinstance(e, ValueError)
    assert (e.text, e.column) == ("f32[3], f33[2]", 8)
    assert e.reason == UNKNOWN_F33
    assert str(e) == f"bad spec at column 8: {e.reason}: f32[3], f33[2]"


@pytest.mark.parametrize(
    "text, line",
    [
        ("f32[3],\n f33[2]", f"bad spec at column 9: {UNKNOWN_F33}: f32[3],  f33[2]"),
        ("'\u2028', x", f"bad spec at column 5: {BARE_X}: ' ', x"),
        ("1,\r\n\x0bx", "bad spec at column 4: invalid character '\\x0b': 1,   x"),
        ("'\ud800'", "bad spec at column 1: invalid character '\\ud800': ' '"),
        ("\x00\n", "bad spec at column 0: invalid character '\\x00'"),
    ],
)
def test_spec_error_is_one_line(text: str, line: str) -> None:
    """Line breaks and unprintable characters of the text are shown as spaces, the
    character refused by its escape."""
    assert str(error(parse_args, text)) == line


def test_spec_error_long_text_is_windowed() -> None:
    text = "1, " * 200 + "x" + ", 2" * 200
    e = error(parse_args, text)
    window = "1, " * 20 + "x" + ", 2" * 19 + ", "  # 60 characters each side of the column
    assert e.column == 600
    assert str(e) == f"bad spec at column 600: {BARE_X}: ...{window}..."


@pytest.mark.parametrize(
    "text, column, reason",
    [
        ("1," * 60_000, spec.MAX_LEN, "spec longer than 100000 characters"),
        ("-" * 99_990 + "1", 0, "'-' must be followed by a number"),
        ("1" + "@1" * 40_000, 0, "'@' is only allowed on array dims, e.g. f32[8@data]"),
        ("1" * 5000, 0, "integer literal too long (5000 digits)"),
        ("(" * 500 + ")" * 500, 64, "nesting deeper than 64"),
        ("f32[" + "1@" * 30_000 + "1]", 4, "one '@' per dim; write 8@(data,fsdp)"),
        ("'" * 99_999, 99_996, "EOF in multi-line string"),  # 16666 empty '''''', then '''
        ("[" * 50_000, 64, "nesting deeper than 64"),
    ],
    ids=["long", "minus", "at", "digits", "parens", "dim-at", "quotes", "brackets"],
)
def test_limits(text: str, column: int, reason: str) -> None:
    for fn in (parse_value, parse_args):  # all parsers share the same reader
        e = error(fn, text)
        assert (e.column, e.reason) == (column, reason)


def test_max_nesting_allowed() -> None:
    deep = "[" * 64 + "]" * 64
    value = parse_value(deep)
    for _ in range(63):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == []


def test_carriage_returns() -> None:
    assert parse_args("f32[3],\r\n3\r") == (A("float32", 3), 3)


def test_parsing_emits_no_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an escape warning must not turn into an error either
        assert parse_value("'\\d'") == "\\d"
        assert parse_args("1, 'a\\q'") == (1, "a\\q")
        e = error(parse_value, "1if 2")
        assert (e.column, e.reason) == (0, "invalid decimal literal")


def test_identifiers_are_nfkc_normalized() -> None:
    # Python normalizes identifiers; the fullwidth letter reads as a plain f.
    assert parse_value("\uff4632[1]") == A("float32", 1)


# ------------------------------------------------------------------ safety ----

HOSTILE_VALUES: dict[str, tuple[int, str]] = {
    "__import__('os').system('touch /tmp/jxinspect_pwned')": (
        0,
        "expected an import path, e.g. optax.ScaleByAdamState(...)",
    ),
    "exec('import os')": (0, "only P(...) calls are allowed"),
    "eval('1')": (0, "only P(...) calls are allowed"),
    "open('/etc/passwd')": (0, "only P(...) calls are allowed"),
    "breakpoint()": (0, "only P(...) calls are allowed"),
    "compile('1', 'x', 'exec')": (0, "only P(...) calls are allowed"),
    "getattr(P, '__class__')": (0, "only P(...) calls are allowed"),
    "P.__class__": (
        0,
        "a dotted name is only allowed as a class called with its fields, e.g. optax.EmptyState()",
    ),
    "().__class__.__bases__[0].__subclasses__()": (
        0,
        "expected an import path, e.g. optax.ScaleByAdamState(...)",
    ),
    "[c for c in ()]": (3, "unexpected keyword 'for'"),
    "(lambda: 1)()": (1, "unexpected keyword 'lambda'"),
    'f\'{__import__("os").system("x")}\'': (0, "f-strings are not allowed"),
    "jx_sentinel()": (0, "only P(...) calls are allowed"),
    "P(jx_sentinel())": (2, "expected a name"),
    "f32[jx_sentinel()]": (4, "array dims must be non-negative ints"),
    "{jx_sentinel(): 1}": (1, "Call expressions are not allowed"),
    "P(*jx_sentinel())": (2, "expected a value"),
    "x=jx_sentinel()": (0, "unexpected name=value here"),
    "[jx_sentinel for _ in [1]]": (13, "unexpected keyword 'for'"),
    "jx_sentinel": (
        0,
        "bare name 'jx_sentinel' is not a value (quote strings; arrays look like f32[3])",
    ),
    "f32[8@jx_sentinel()]": (6, "expected mesh axis names after '@', e.g. 8@(data,fsdp)"),
    "__builtins__": (
        0,
        "bare name '__builtins__' is not a value (quote strings; arrays look like f32[3])",
    ),
    "globals()": (0, "only P(...) calls are allowed"),
    "vars()": (0, "only P(...) calls are allowed"),
    "type('X', (), {})": (0, "only P(...) calls are allowed"),
}
"""Code where a value is read: each refused at its column, and why (``parse_args``)."""
HOSTILE = list(HOSTILE_VALUES)


def test_parsing_never_runs_code(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def forbidden(name: str) -> Callable[..., Any]:
        def fn(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} called during parsing")

        return fn

    monkeypatch.setattr(builtins, "jx_sentinel", forbidden("jx_sentinel"), raising=False)
    for name in ("eval", "exec", "compile", "open", "breakpoint", "input"):
        monkeypatch.setattr(builtins, name, forbidden(name))
    monkeypatch.setattr(subprocess, "Popen", forbidden("Popen"))
    monkeypatch.setattr(os, "system", forbidden("os.system"))
    real_import = builtins.__import__
    builtins.__import__ = forbidden("__import__")  # by hand: monkeypatch itself imports
    parsed = []
    try:
        for text in HOSTILE:
            for fn in PARSERS:
                try:
                    parsed.append((fn(text), text))
                except SpecError:
                    pass
    finally:
        builtins.__import__ = real_import
    monkeypatch.undo()
    assert calls == []
    assert parsed == [(("jx_sentinel",), "jx_sentinel"), (("__builtins__",), "__builtins__")]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_are_rejected(text: str) -> None:
    for fn in PARSERS:
        if fn is parse_name_tuple and text.isidentifier():
            assert fn(text) == (text,)  # a plain name, not a call
            continue
        if fn is parse_args:
            e = error(fn, text)
            assert (e.column, e.reason) == HOSTILE_VALUES[text], str(e)
            continue
        with pytest.raises(SpecError):
            fn(text)


def test_spec_module_does_not_import_jax_or_numpy() -> None:
    code = (
        "import sys; import jxinspect.project.spec; "
        "assert not {'jax', 'numpy'} & set(sys.modules), sorted(sys.modules)"
    )
    env_path = ":".join(p for p in sys.path if p)
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": env_path})


# -------------------------------------------------------------- properties ----

ALL = st.sampled_from(PARSERS)


def parses_or_spec_error(fn: Callable[[str], object], text: str) -> None:
    try:
        fn(text)
    except SpecError as e:
        assert 0 <= e.column <= len(text)
        assert len(str(e).splitlines()) == 1
        assert e.text == text


@FAST
@given(fn=ALL, text=st.text())
def test_any_text_parses_or_raises_spec_error(fn: Callable[[str], object], text: str) -> None:
    parses_or_spec_error(fn, text)


@FAST
@given(fn=ALL, text=st.text(alphabet=st.characters(codec="utf-8", max_codepoint=0x2FFF)))
def test_any_unicode_text(fn: Callable[[str], object], text: str) -> None:
    parses_or_spec_error(fn, text)


FRAGMENTS = st.sampled_from(
    [
        "f32",
        "bf16",
        "bool",
        "i32",
        "float32",
        "[",
        "]",
        "[]",
        "@",
        "data",
        "fsdp",
        ",",
        "(",
        ")",
        "{",
        "}",
        ":",
        "=",
        "0",
        "1",
        "8",
        "128",
        "-",
        "1.5",
        "1e3",
        "'",
        '"',
        "'data'",
        "P",
        "P(",
        "None",
        "True",
        "__import__",
        ".",
        "os",
        "system",
        " ",
        "\n",
        "\t",
        "\\",
        "#",
        "*",
        "**",
        "f'",
        "b'",
        "'''",
        "lambda",
        "x",
        "_",
        "é",
        "\x00",
        "...",
        "j",
        "0x",
        "_(",
        "if",
        "\r",
    ]
)


@FAST
@given(fn=ALL, parts=st.lists(FRAGMENTS, max_size=30))
def test_grammar_fragments_parse_or_raise_spec_error(
    fn: Callable[[str], object], parts: list[str]
) -> None:
    parses_or_spec_error(fn, "".join(parts))


_LETTERS = string.ascii_letters + "_"
IDENT = st.builds(
    str.__add__, st.sampled_from(_LETTERS), st.text(_LETTERS + string.digits, max_size=7)
).filter(lambda s: not keyword.iskeyword(s))


@st.composite
def array_specs(draw: st.DrawFn) -> ArraySpec:
    dtype = draw(st.sampled_from(sorted(set(SHORT_DTYPES.values()))))
    shape = draw(st.lists(st.integers(0, 2**40), max_size=6))
    pool = draw(st.lists(IDENT, unique=True, max_size=6))
    axes = []
    for _ in shape:
        k = draw(st.integers(0, min(3, len(pool))))
        axes.append(tuple(pool[:k]))
        pool = pool[k:]
    return ArraySpec(dtype, tuple(shape), tuple(axes))


@FAST
@given(array_specs())
def test_array_spec_round_trip(a: ArraySpec) -> None:
    text = str(a)
    assert parse_value(text) == a
    assert parse_args(text) == (a,)
    assert parse_value(text.replace(f"{short_dtype(a.dtype)}[", f"{a.dtype}[", 1)) == a


@st.composite
def pspecs(draw: st.DrawFn) -> PSpec:
    names = draw(st.lists(IDENT, unique=True, max_size=6))
    entries: list[Any] = []
    while names:
        k = draw(st.integers(0, len(names)))
        if k == 0:
            entries.append(None)
            if draw(st.booleans()):
                continue
            k = 1
        entries.append(names[0] if k == 1 and draw(st.booleans()) else tuple(names[:k]))
        names = names[k:]
    return PSpec(tuple(entries))


@FAST
@given(pspecs())
def test_pspec_round_trip(p: PSpec) -> None:
    assert parse_value(str(p)) == p
    assert parse_specs(f"{p}, None") == (p, None)


LITERALS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False)
)
PYTREES = st.recursive(
    LITERALS | array_specs() | pspecs(),
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(IDENT, children, max_size=3)
        | st.dictionaries(st.integers(-5, 5), children, max_size=3)
    ),
    max_leaves=12,
)


def to_spec(value: object) -> str:
    """Write a pytree back in spec syntax (repr, but with str() for arrays and P)."""
    if isinstance(value, (ArraySpec, PSpec)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(to_spec, value)) + "]"
    if isinstance(value, tuple):
        return "(" + "".join(to_spec(v) + ", " for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {to_spec(v)}" for k, v in value.items()) + "}"
    return repr(value)


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@FAST
@given(PYTREES)
def test_pytree_round_trip(value: object) -> None:
    assert same(parse_value(to_spec(value)), value)


@FAST
@given(st.lists(st.integers(-(2**31), 2**31), max_size=8))
def test_int_tuple_round_trip(ints: list[int]) -> None:
    assert parse_int_tuple(", ".join(map(str, ints))) == tuple(ints)
    assert parse_int_tuple(repr(tuple(ints))) == tuple(ints)


@FAST
@given(st.lists(st.tuples(IDENT, st.integers(1, 2**20)), max_size=5, unique_by=lambda kv: kv[0]))
def test_mesh_round_trip(mesh: list[tuple[str, int]]) -> None:
    assert parse_mesh(",".join(f"{k}={v}" for k, v in mesh)) == tuple(mesh)


BAD_ARGS = {
    "f33": "bare name 'f33' is not a value (quote strings; arrays look like f32[3])",
    "x": BARE_X,
    "1j": "complex literals are not allowed",
    "b''": "bytes literals are not allowed",
    "lambda": "unexpected keyword 'lambda'",
}


@FAST
@given(st.integers(0, 5), st.sampled_from(list(BAD_ARGS)))
def test_error_column_property(prefix: int, bad: str) -> None:
    text = "f32[1], " * prefix + bad
    e = error(parse_args, text)
    assert (e.column, e.reason) == (8 * prefix, BAD_ARGS[bad])


# Literals are read as Python reads them: Python's own reader is the oracle (here only).
_ESCAPES = [r"\n", r"\\", r"\'", r"\"", r"\x41", r"\x4", r"\u00e9", r"\u00e", r"\U0001F600",
            r"\U00110000", r"\N{BULLET}", r"\N{bullet}", r"\N{NOPE}", r"\N", r"\0", r"\12",
            r"\777", r"\q", r"\8", "\\\n", r"\a", "\\"]  # fmt: skip
_BODY = st.lists(
    st.sampled_from([*_ESCAPES, "'", '"', "\n", "{", "}"])
    | st.characters(exclude_characters="\r\x00'\"\\\n"),
    max_size=8,
).map("".join)
STRING_LITERALS = st.builds(
    "{0}{1}{2}{1}".format,
    st.sampled_from(["", "r", "u", "R", "U"]),
    st.sampled_from(["'", '"', "'''", '"""']),
    _BODY,
)
NUMBER_LITERALS = st.builds(
    str.__add__,
    st.sampled_from(["", "-", "- "]),
    st.lists(st.sampled_from([*"0123456789_.eExXoObBjJ", "e+", "e-", "1"]), min_size=1,
             max_size=8).map("".join),
)  # fmt: skip


def python_reads(text: str) -> object:
    """What Python's own literal reader makes of ``text``; ``SpecError`` where it fails or
    makes a value the spec language does not have (complex, Ellipsis)."""
    import ast

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes warn on Python >= 3.12
            value = ast.literal_eval(f"({text})")  # a spec reads as if in brackets
    except (SyntaxError, ValueError):
        return SpecError
    return SpecError if isinstance(value, complex) or value is Ellipsis else value


@settings(max_examples=300, deadline=None)
@given(st.lists(STRING_LITERALS, min_size=1, max_size=3).map(" ".join) | NUMBER_LITERALS)
def test_literals_read_as_python_reads_them(text: str) -> None:
    expected = python_reads(text)
    if expected is SpecError:
        with pytest.raises(SpecError):
            parse_value(text)
    else:
        assert same(parse_value(text), expected), text
