"""Annotations read as example inputs (:mod:`jxinspect.project.annotations`), in process:
the spec language's values they become, the dims and dtypes chosen, and the one-line
errors. The annotation objects are jaxtyping's own, made by importing the fixture."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import REPO

from jxinspect.core.errors import UsageError
from jxinspect.project import annotations
from jxinspect.project.annotations import infer_inputs
from jxinspect.project.options import TargetOptions, options_from_mapping
from jxinspect.project.resolve import Resolved
from jxinspect.project.spec import ArraySpec, Dim, SpecError, Struct, merge_dims, parse_dims

jaxtyping = pytest.importorskip("jaxtyping")

FIXTURE = REPO / "tests" / "fixtures" / "annotated.py"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and get_type_hints look the module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fx() -> ModuleType:
    return _load(FIXTURE, "jxinspect_test_annotated")


def infer(fun: Any, dims: str = "", **kw: Any) -> annotations.Inferred:
    options: dict[str, Any] = {
        "given": {}, "float_dtype": None, "statics": frozenset(), "static_names": (),
        "where": "m.py:f",
    }  # fmt: skip
    options.update(kw)
    return infer_inputs(fun, dims=parse_dims(dims), **options)


def f32(*shape: int) -> ArraySpec:
    return ArraySpec("float32", shape)


# ---------------------------------------------------------------- dims, the option ----


def test_dims_are_sizes_sharded_sizes_and_variadic_tuples() -> None:
    assert parse_dims("batch=8, seq=64@data, lead=(2,4@x), none=()") == (
        ("batch", Dim(8)),
        ("seq", Dim(64, ("data",))),
        ("lead", (Dim(2), Dim(4, ("x",)))),
        ("none", ()),
    )
    assert parse_dims("") == ()
    assert merge_dims("a=1, b=2", "b=3@d, c=(1,)") == "a=1, b=3@d, c=(1,)"
    for bad in ("batch", "b=x", "b=-1", "b=8,b=3"):
        with pytest.raises(SpecError):
            parse_dims(bad)


def test_dims_merge_name_by_name_flags_over_entry_over_declaration_over_defaults() -> None:
    from jxinspect.project.targets import parse_target

    layers = Resolved(
        parse_target("m.py:f"),
        given=TargetOptions(dims="a=1"),
        entry=TargetOptions(dims="a=2, b=2"),
        declared=TargetOptions(dims="b=3, c=3"),
        defaults=TargetOptions(dims="c=4, d=4", dtype="bf16"),
    )
    assert dict(parse_dims(layers.options.dims or "")) == {
        "a": Dim(1), "b": Dim(2), "c": Dim(3), "d": Dim(4),
    }  # fmt: skip
    assert layers.options.dtype == "bf16"


def test_dims_in_a_declaration_or_config_may_be_a_mapping() -> None:
    read = options_from_mapping({"dims": {"batch": 8, "seq": "64@data", "lead": [8, 4]}}, "here")
    assert dict(parse_dims(read.dims or "")) == {
        "batch": Dim(8), "seq": Dim(64, ("data",)), "lead": (Dim(8), Dim(4)),
    }  # fmt: skip
    with pytest.raises(UsageError, match="^here: `dims` must be"):
        options_from_mapping({"dims": {"batch": 1.5}}, "here")
    with pytest.raises(UsageError, match="^here: `dtype` must be one of f32, bf16"):
        options_from_mapping({"dtype": "int8"}, "here")


# ------------------------------------------------------------------- what is built ----


def test_a_namedtuple_state_is_built_field_by_field(fx: ModuleType) -> None:
    got = infer(fx.train_step, "batch=8, din=4, dout=3", static_names=("schedule",))
    params = Struct(f"{fx.__name__}.Params", (("w", f32(4, 3)), ("b", f32(3))))
    opt = Struct(
        f"{fx.__name__}.AdamState",
        (("count", ArraySpec("int32", ())), ("mu", params), ("nu", params)),
    )
    state = Struct(f"{fx.__name__}.TrainState", (("params", params), ("opt", opt)))
    assert got.args == (state, f32(8, 4), f32(8, 3), "constant")
    assert got.kwargs == {}
    assert isinstance(got.args[0], Struct) and got.args[0].cls is fx.TrainState
    said = got.said
    assert list(said.dims.items()) == [("din", "4"), ("dout", "3"), ("batch", "8")]
    assert said.dtypes == {"Float": "f32", "Int": "i32"}
    assert "schedule='constant' (static: its first Literal value)" in said.choices
    assert "lr left to its default" in said.choices
    assert str(said).startswith("from annotations; dims din=4, dout=3, batch=8; Float → f32")


def test_dtypes_dims_and_structures(fx: ModuleType) -> None:
    got = infer(
        fx.classify, "batch=2, height=3, width=5, channels=4, lead=(6,7)",
        float_dtype="bf16", static_names=("n",), given={"n": 3},
    )  # fmt: skip
    norm, batch, extra, n = got.args
    assert isinstance(norm, Struct) and norm.cls is fx.Norm
    assert norm.fields == (("scale", f32(4)), ("eps", 1e-5))  # Float32 is not bf16
    assert batch == {"image": ArraySpec("uint8", (2, 3, 5, 3)), "label": ArraySpec("int32", (2,))}
    # Shaped takes the float dtype given; #b with no size is 1
    assert extra == (ArraySpec("bfloat16", (6, 7, 4)), ArraySpec("bfloat16", (1, 4)))
    assert n == 3 and got.said.given == ("n",)
    assert got.said.dtypes["Shaped"] == "bf16"
    assert "#b → 1 (broadcastable, no size given)" in got.said.choices


def test_symbolic_anonymous_and_ellipsis_dims(fx: ModuleType) -> None:
    got = infer(fx.symbolic, "n=3")
    assert got.args == (f32(3), f32(4, 6), f32(3))
    assert "... → no dimensions" in got.said.choices


def test_sharded_dims_carry_their_mesh_axes(fx: ModuleType) -> None:
    got = infer(fx.attention, "batch=8@data, seq=4, heads=2, dim=16")
    q = got.args[0]
    assert isinstance(q, ArraySpec) and str(q) == "f32[8@data,4,2,16]"
    assert str(got.args[2]) == "bool[8@data,4,4]"


# ------------------------------------------------------------------------- errors ----


def test_dims_with_no_size_are_named_in_one_line(fx: ModuleType) -> None:
    with pytest.raises(UsageError) as err:
        infer(fx.attention, "batch=8")
    message = str(err.value)
    assert "\n" not in message
    assert "dimensions seq, heads, dim have no size" in message
    assert "--dims seq=8,heads=8,dim=8" in message and "jxinspect.yaml" in message


def test_partly_annotated_names_what_is_missing_and_takes_it_by_name(fx: ModuleType) -> None:
    with pytest.raises(UsageError) as err:
        infer(fx.partly, "batch=8, dim=4")
    assert re.search(r"do not say table \(no annotation\), mask \(Array gives no shape\)",
                     str(err.value))  # fmt: skip
    assert '--kwargs "table=f32[8]"' in str(err.value)
    mask, table = ArraySpec("bool", (8,)), {"w": f32(2)}
    got = infer(fx.partly, "batch=8, dim=4", given={"mask": mask, "table": table})
    assert got.args == (f32(8, 4), table, mask)  # each in its parameter's place
    assert got.said.given == ("table", "mask") or set(got.said.given) == {"table", "mask"}


def test_a_static_argument_with_no_default_or_literal_is_missing(fx: ModuleType) -> None:
    with pytest.raises(UsageError, match=r'n \(static, .*--kwargs "n=3"'):
        infer(fx.classify, "batch=2, height=3, width=5, channels=4, lead=()",
              static_names=("n",))  # fmt: skip


def test_a_function_with_no_annotations_keeps_the_old_advice() -> None:
    def f(x, y):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(UsageError, match=r"no example inputs for m.py:f: give example inputs"):
        infer(f)


def test_unbuildable_annotations_say_why(fx: ModuleType) -> None:
    def f(a: dict[str, int], b: list[int], c: tuple[int, ...]) -> None:
        pass

    with pytest.raises(UsageError) as err:
        infer(f)
    assert "does not say its keys; use a TypedDict" in str(err.value)
    assert "does not say its length" in str(err.value)
    assert "does not say how many" in str(err.value)


# ------------------------------------------------- jaxtyping's dims, read two ways ----


@pytest.mark.parametrize(
    "dim_str",
    ["a b", "3 4", "", "#b c", "*batch n", "... n", "_ n", "n+1 2*n", "rows=3 cols", "*#lead x",
     "?t"],
)  # fmt: skip
def test_dim_str_fallback_reads_as_jaxtypings_parsed_dims(dim_str: str) -> None:
    hint = jaxtyping.Float[jaxtyping.Array, dim_str]
    parsed = annotations._dims(hint)
    assert [annotations._dim_word(w) for w in dim_str.split()] == parsed
    assert all(annotations._dim_object(d) is not None for d in hint.dims)
