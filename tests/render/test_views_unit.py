"""The views in this process.

Sharding pictures are drawn from model objects alone (any rank, partial replication,
Shardy sub-axes, GSPMD tile counts without a mesh, a 2048-device abstract mesh). The
annotated jaxpr and module are checked on real staged programs whose printing is unusual:
a jaxpr on one line, shared (``let``) jaxprs, wrapped outputs, closed-over constants, a
token JAX adds, a pruned argument, HLO text. JAX runs on CPU here; like
``test_lint_rules.py`` this module asks for 8 devices if it is the first to start JAX.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import REPO
from jax import lax

from jxinspect.core.model import Input, Mesh, NestedJaxpr, Report, Sharding
from jxinspect.core.program import ProgramText, TextRequest
from jxinspect.core.vocabulary import VIEWS
from jxinspect.pipeline import inspect_function
from jxinspect.render.report import (
    code,
    collectives,
    html,
    jaxpr_view,
    memory_view,
    mlir_view,
    provenance_view,
    sharding_view,
    views,
)
from jxinspect.tracer import seam
from jxinspect.tracer.read.annotate import split_values

if not seam.backend_started():
    seam.simulate_cpu_devices(8)

HERE = Path(__file__).name
f32 = jnp.float32
CONSTANT = np.arange(3.0, dtype=np.float32)


def sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, f32)


# ---- sharding pictures from the model alone ------------------------------------------------


def leaf(shape: tuple[int, ...], sharding: Sharding | None, path: str = "x") -> Input:
    return Input(0, path, path, path, "ok", shape, "float32", sharding)


def report_of(*inputs: Input, mesh: Mesh | None = None, devices: int = 8) -> Report:
    inputs = tuple(Input(i, x.path, x.path, x.path, x.status, x.shape, x.dtype, x.sharding)
                   for i, x in enumerate(inputs))  # fmt: skip
    return Report(target="t.py:f", stage="jit", reached="lowered", jax_version="0",
                  platform="cpu", num_devices=devices, mesh=mesh, inputs=inputs)  # fmt: skip


def draw(*inputs: Input, **kwargs: Any) -> tuple[sharding_view.Picture, ...]:
    return sharding_view.layouts(report_of(*inputs, **kwargs)).pictures


def tiled(mesh: Mesh, *spec: tuple[str, ...], replicas: int = 1) -> Sharding:
    return Sharding("tiled", spec=tuple(spec), mesh=mesh, replicas=replicas, source="sdy")


def test_rank_three_split_three_ways_folds_the_third_dim() -> None:
    mesh = Mesh((("a", 2), ("b", 2), ("c", 2)))
    (pic,) = draw(leaf((4, 6, 8), tiled(mesh, ("a",), ("b",), ("c",))))
    assert pic.row_labels == ("0:2", "2:4") and pic.col_labels == ("0:3", "3:6")
    assert pic.cells == (((0, 1), (2, 3)), ((4, 5), (6, 7)))
    assert any("dim 2 split 2 ways by 'c': folded into the cells" in line for line in pic.lines)


def test_partial_replication_lists_every_copy() -> None:
    mesh = Mesh((("x", 2), ("y", 4)))
    (pic,) = draw(leaf((8, 4), tiled(mesh, ("x",), (), replicas=4)))
    assert pic.cells == (((0, 1, 2, 3),), ((4, 5, 6, 7),))
    assert "each block is held by 4 devices (replicated over 'y')" in pic.lines
    assert "0-3" in sharding_view.render(
        report_of(leaf((8, 4), tiled(mesh, ("x",), (), replicas=4)))
    )


def test_shardy_sub_axes() -> None:
    """``x:(1)2`` is the major half of x=8, ``x:(2)4`` the minor quarter."""
    mesh = Mesh((("x", 8),))
    (pic,) = draw(leaf((4, 8), tiled(mesh, ("x:(1)2",), ("x:(2)4",))))
    assert pic.cells == tuple(tuple((4 * i + j,) for j in range(4)) for i in range(2))


@pytest.mark.parametrize(
    "axes",
    [{"x": 8}, {"x": 16, "y": 3}, {"y": 2, "x": 24}, {"x": 12}, {"x": 6}],
    ids=lambda a: ",".join(f"{k}={v}" for k, v in a.items()),
)
def test_sub_axes_factored_into_digits_hold_what_listing_the_axis_holds(
    axes: dict[str, int],
) -> None:
    """Every sub-axis of ``x`` (``x:(pre)size``, dividing it) and every pair of them that
    Shardy can write together (the second inside what the first leaves): the devices of
    each block are those found by trying every device, as the view did before it
    factored an axis into digits."""
    total = axes["x"]
    splits = [(f"x:({pre}){size}", pre, size) for pre in range(1, total + 1)
              for size in range(2, total + 1) if total % (pre * size) == 0]  # fmt: skip
    pairs = [(a, b) for a in splits for b in splits if b[1] % (a[1] * a[2]) == 0]  # a, then b
    pairs += [(("x:(1)4", 1, 4), ("x:(1)4", 1, 4))] if total % 4 == 0 else []
    for (first, *_), (second, *_) in [*((a, a) for a in splits), *pairs]:
        split = [(first,), (second,) if second != first else ()]
        for row in range(4):
            for col in range(4):
                blocks = [(0, row), (1, col)]
                found = sharding_view._cell_devices(dict(axes), split, blocks)
                assert tuple(found) == _listed(axes, split, blocks), (first, second, row, col)


def _listed(
    axes: dict[str, int], split: list[tuple[str, ...]], blocks: list[tuple[int, int]]
) -> tuple[int, ...]:
    """The devices of a block, every device of the mesh tried (the oracle)."""
    sizes = list(axes.values())
    found = []
    for device in range(int(np.prod(sizes))):
        coords = dict(zip(axes, np.unravel_index(device, sizes)))
        held = True
        for dim, index in blocks:
            for name in reversed(split[dim]):
                base, sub = name.split(":(", 1) if ":(" in name else (name, "")
                pre, size = (int(p) for p in sub.split(")")) if sub else (1, axes[base])
                step = axes[base] // (pre * size)
                index, value = divmod(index, size)
                held = held and (int(coords[base]) // step) % size == value
            held = held and index == 0
        if held:
            found.append(device)
    return tuple(found)


def test_a_huge_axis_is_never_listed() -> None:
    """2**31 devices along one axis, sub-axes of it: the cells are solved from digits."""
    mesh = Mesh((("x", 2**31), ("y", 2)), abstract=True)
    sharding = tiled(mesh, ("x:(1)4",), ("x:(4)2", "y"))
    report = report_of(leaf((8, 8), sharding), mesh=mesh, devices=2**32)
    (pic,) = sharding_view.layouts(report).pictures
    assert pic.cells[0][0] is not None and len(pic.cells[0][0]) == 2**31 // 8
    assert sharding_view.devices_text(pic.cells[1][3]) == "1610612737,1610612739,… (268435456)"
    assert ">0,2,… (" in html.svg(pic)


def test_gspmd_tiles_without_a_mesh_in_iota_order() -> None:
    sharding = Sharding("tiled", spec=((), ()), mesh=None, tiles=(2, 2), replicas=2, source="gspmd")
    (pic,) = draw(leaf((4, 4), sharding))
    assert pic.cells == (((0, 1), (2, 3)), ((4, 5), (6, 7)))
    assert pic.layout == "tiles[2,2] x2 copies"


def test_thousands_of_devices_are_summarized() -> None:
    mesh = Mesh((("data", 64), ("model", 32)), abstract=True)
    report = report_of(leaf((1024, 2048), tiled(mesh, ("data",), ("model",))), mesh=mesh,
                       devices=2048)  # fmt: skip
    (pic,) = sharding_view.layouts(report).pictures
    assert pic.row_labels == ("0:16", "16:32", "32:48", None, "1008:1024")
    assert len(pic.col_labels) == 5 and pic.col_labels[3] is None
    assert pic.cells[0][0] == (0,) and pic.cells[-1][-1] == (2047,) and pic.cells[3][0] is None
    assert "showing 4 of 64 rows (the first 3 and the last 1) and 4 of 32 columns" in pic.lines[-1]
    text = sharding_view.render(report)
    assert "abstract mesh data=64,model=32 (2048 devices)" in text
    assert len(text.splitlines()) < 20
    svg = html.svg(pic)
    assert svg.count("<rect") == 25 and ">2047<" in svg


def test_one_split_dimension_is_a_row_or_a_column() -> None:
    mesh = Mesh((("d", 4),))
    (rows,) = draw(leaf((8, 3), tiled(mesh, ("d",), ())))
    (cols,) = draw(leaf((3, 8), tiled(mesh, (), ("d",))))
    (vector,) = draw(leaf((8,), tiled(mesh, ("d",))))
    assert len(rows.row_labels) == 4 and rows.col_labels == ("all",)
    assert cols.row_labels == ("all",) and len(cols.col_labels) == 4
    assert vector.row_labels == ("all",) and len(vector.col_labels) == 4


def test_leaves_with_the_same_layout_share_a_picture() -> None:
    mesh = Mesh((("d", 2),))
    report = report_of(
        leaf((4, 3), tiled(mesh, ("d",), ()), "a"), leaf((4, 5), tiled(mesh, ("d",), ()), "b"),
        leaf((6, 3), tiled(mesh, ("d",), ()), "c"),
        leaf((3,), Sharding("replicated", spec=((),), mesh=mesh, replicas=2), "r"),
        leaf((3,), None, "n"),
    )  # fmt: skip
    pictures = sharding_view.layouts(report).pictures
    assert [[path for _, _, path, _ in p.leaves] for p in pictures] == [["a", "b"], ["c"]]
    text = sharding_view.render(report)
    assert "replicated: a full copy on all 8 devices: in: r" in text
    assert "no sharding recorded (whole on all 8 devices): in: n" in text
    coloured = sharding_view.render(report, color=True)
    assert "\x1b[" in coloured and "f32[4,3] → f32[2,3] per device" in coloured


def test_devices_text() -> None:
    assert sharding_view.devices_text((0, 1, 2, 3, 8)) == "0-3,8"
    assert sharding_view.devices_text(tuple(range(0, 256, 8))) == "0,8,… (32)"


# ---- the module signature splitter -----------------------------------------------------------


def test_split_values_respects_brackets_and_quotes() -> None:
    text = 'f(%a: tensor<2x3xf32> {x = "a, (b"}, %b: tensor<f32> loc("p[\\"q\\"], r")) -> x'
    pieces, close = split_values(text, 2)
    assert pieces == ['%a: tensor<2x3xf32> {x = "a, (b"}', '%b: tensor<f32> loc("p[\\"q\\"], r")']
    assert text[close:].startswith(") -> x")
    assert split_values("(a, b", 1) == (["a"], -1)


# ---- annotated texts of real programs --------------------------------------------------------


def inspect(fun: Any, *args: Any, **request: Any) -> Report:
    return inspect_function(fun, args, {}, keep_texts=TextRequest(**request))


def marks(text: ProgramText | None, kind: str) -> list[str]:
    assert text is not None
    return [m.text for m in text.marks if m.kind == kind]


def line_of(text: str, fragment: str) -> str:
    (line,) = [line for line in text.splitlines() if fragment in line]
    return line


# Raw JAX is the oracle for what differs between releases: how jaxprs nest and print
# (shared ``let`` jaxprs, ``pjit`` or ``jit``) and the debug info each carries.


def raw_jaxpr(fun: Any, *args: Any) -> Any:
    """The ``ClosedJaxpr`` plain ``jax.jit`` traces for ``fun(*args)``."""
    return jax.jit(fun).trace(*args).jaxpr


def raw_paths(jaxpr: Any) -> tuple[str, ...] | None:
    """The result paths a jaxpr's own debug info carries (``None``: no debug info)."""
    info = getattr(jaxpr, "debug_info", None)
    paths = getattr(info, "result_paths", None)
    return tuple(paths() if callable(paths) else paths) if paths is not None else None


def one_line(x: Any) -> Any:
    return jnp.sin(x) + CONSTANT  # <-- one_line


def test_one_line_jaxpr_with_a_constant() -> None:
    report = inspect(one_line, sds(3), source=True)
    text = jaxpr_view.render(report)
    assert text.startswith("{ lambda a:f32[3];")
    assert line_of(text, "b:f32[3]").endswith("# x")
    (carried,) = raw_paths(raw_jaxpr(one_line, sds(3)).jaxpr) or (None,)
    said = {"result": "", "": "", None: " · ⚠ no name in the jaxpr"}.get(
        carried, f" · ⚠ the jaxpr says {carried}"
    )  # "" (the lone result) up to 0.5
    assert line_of(text, "    d,").endswith(f"# result{said}")
    number = next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                  if line.endswith("# <-- one_line"))  # fmt: skip
    assert re.search(rf"= sin b +# \S*{HERE}:{number}$", text, re.M), text
    assert re.search(rf"= add c a +# \S*{HERE}:{number}$", text, re.M), text


def long_body(carry: Any, x: Any) -> tuple[Any, Any]:
    for _ in range(6):
        carry = jnp.sin(carry) * x
    return carry, carry


@jax.jit
def inner(a: Any) -> Any:
    return jnp.cos(a) + 1


def shared(x: Any, xs: Any) -> Any:
    carry, ys = lax.scan(long_body, x, xs)
    return inner(carry) + inner(carry * 2), ys


class RawShared:
    """How this release's plain JAX stages :func:`shared`: the scan body is a shared
    ``let jaxpr`` (0.10) or written inline (older); ``inner`` is a ``jit`` (``pjit`` in
    0.4.35) equation; the scan body has debug info or none (0.4.35)."""

    def __init__(self) -> None:
        closed = raw_jaxpr(shared, sds(3), sds(5, 3))
        self.text = str(closed)
        self.lines = self.text.splitlines()
        scan, call = closed.jaxpr.eqns[0], closed.jaxpr.eqns[1]
        assert (scan.primitive.name, call.params["name"]) == ("scan", "inner")
        self.call = call.primitive.name
        self.call_for = call.params["jaxpr"].jaxpr.debug_info.traced_for
        self.body_info = getattr(getattr(scan.params["jaxpr"], "jaxpr", None), "debug_info", None)
        self.body_shared = self.text.startswith("let jaxpr = ")

    def starts(self, first: int = 0) -> list[int]:
        """The lines (from ``first``) where a jaxpr starts: each one's label is there."""
        return [i for i, line in enumerate(self.lines) if i >= first and "{ lambda " in line]


def test_shared_jaxprs_are_labelled_where_they_are_defined() -> None:
    report = inspect(shared, sds(3), sds(5, 3), source=True)
    jaxpr = report.program.jaxpr if report.program else None
    raw = RawShared()
    assert jaxpr is not None and jaxpr.text.startswith("let ") and raw.text.startswith("let ")
    labels = {"let jaxpr": "0:scan.jaxpr", "jaxpr={": "0:scan.jaxpr",
              "let inner": f"1:{raw.call}.jaxpr", "{ lambda": "top"}  # fmt: skip
    in_order = [next(v for k, v in labels.items() if raw.lines[i].lstrip().startswith(k))
                for i in raw.starts()]  # fmt: skip
    assert sorted(in_order) == ["0:scan.jaxpr", f"1:{raw.call}.jaxpr", "top"]
    assert marks(jaxpr, "jaxpr") == in_order
    text = jaxpr_view.render(report)
    body = r"^let jaxpr = \{ lambda " if raw.body_shared else r"^ +jaxpr=\{ lambda "
    if raw.body_info is None:
        assert re.search(body + r".*# 0:scan\.jaxpr · ⚠ no debug info \(scan dropped it\)$",
                         text, re.M), text  # fmt: skip
    else:
        assert re.search(body + r".*# 0:scan\.jaxpr · scan: long_body at ", text, re.M), text
    head = rf"^let inner = \{{ lambda .*# 1:{raw.call}\.jaxpr · {raw.call_for}: inner at "
    assert re.search(head, text, re.M), text
    (sin,) = [line for line in raw.lines if " = sin " in line][:1]  # the body's first equation
    assert re.search(rf"^{re.escape(sin)} +# \S*{HERE}:\d+$", text, re.M), (sin, text)


def many_outputs(x: Any) -> Any:
    outs = jax.jit(lambda y: tuple(y * i for i in range(40)))(x)
    return sum(outs[1:], outs[0])


def test_wrapped_equation_outputs_keep_the_equations_in_step() -> None:
    report = inspect(many_outputs, sds(3), source=True)
    text = jaxpr_view.render(report)
    assert len(marks(report.program.jaxpr if report.program else None, "source")) == 40 + 1 + 39
    assert re.search(rf"^    \w+:f32\[3\] .*# \S*{HERE}:\d+$", text, re.M), text


def with_token(x: Any, unused: Any) -> Any:
    jax.debug.print("x = {}", x, ordered=True)
    return x * 2


def test_added_token_and_pruned_argument() -> None:
    report = inspect(with_token, sds(3), sds(2))
    module = mlir_view.render(report)
    assert re.search(r"%arg0: !stablehlo\.token.*// added by JAX: token", module), module
    assert re.search(r"%arg1: tensor<3xf32>.*// x · ok$", module, re.M), module
    assert "unused" not in module
    jaxpr = jaxpr_view.render(report)
    assert line_of(jaxpr, "b:f32[2]").endswith("# unused · pruned from @main")


def test_hlo_parameters_and_root_are_labelled() -> None:
    report = inspect(lambda x, y: (x @ y, x.sum()), sds(4, 8), sds(8, 2), jaxpr=False,
                     module="hlo")  # fmt: skip
    text = mlir_view.render(report)
    assert text.startswith("HloModule ")
    assert re.search(r"parameter\(0\).*// x · ok$", text, re.M), text
    assert re.search(r"parameter\(1\).*// y · ok$", text, re.M), text
    assert "// result[0] · ok · result[1] · ok" in line_of(text, "ROOT tuple")


def test_max_lines_says_what_was_cut() -> None:
    report = inspect(shared, sds(3), sds(5, 3))
    lines = jaxpr_view.render(report, max_lines=5).splitlines()
    assert len(lines) == 6
    # the jaxprs (nested ones and the top) that start after line 5 as raw JAX prints them
    # (the top-level one's inputs, one a line in the view, come after its start)
    nested = len(RawShared().starts(5))
    plural = "s" if nested != 1 else ""
    cut = rf"# … \d+ more lines not shown \(lines 6–\d+ of \d+\): {nested} nested jaxpr{plural}, "
    assert re.fullmatch(cut + r"2 inputs, 2 outputs; rerun without --max-lines to see them",
                        lines[-1]), lines[-1]  # fmt: skip
    module = mlir_view.render(report, max_lines=3).splitlines()
    assert module[-1].startswith("// … ") and "the rest of @main" in module[-1]
    assert "func.func @" in module[-1]


def test_colour_only_when_asked() -> None:
    report = inspect(one_line, sds(3))
    assert "\x1b[" not in jaxpr_view.render(report) + mlir_view.render(report)
    coloured = jaxpr_view.render(report, color=True)
    assert "\x1b[1;34mlambda\x1b[0m" in coloured and "\x1b[36m# x\x1b[0m" in coloured
    assert code.COMMENT["stablehlo"] == "//"


def test_nested_jaxpr_notes_say_where_debug_info_was_dropped() -> None:
    missing = NestedJaxpr("3:scan.jaxpr/0:pjit.jaxpr", "pjit", "missing", num_invars=2)
    assert code.jaxpr_note(missing) == "0:pjit.jaxpr · ⚠ no debug info (pjit dropped it)"
    mismatch = NestedJaxpr("1:cond.branches[0]", "cond", "count_mismatch", "cond",
                           "f at /a/b/m.py:3", ("x",), ("result",), 2, 1)  # fmt: skip
    assert code.jaxpr_note(mismatch) == (
        "1:cond.branches[0] · cond: f at m.py:3 · args (x) → (result) · "
        "⚠ 1 names for 2 inputs, 1 paths for 1 outputs"
    )
    many = NestedJaxpr("0:jit.jaxpr", "jit", "partial", "jit", "g at m.py:1",
                       tuple(f"a{i}" for i in range(9)) + ("",), None, 10, 1)  # fmt: skip
    assert code.jaxpr_note(many) == (
        "0:jit.jaxpr · jit: g at m.py:1 · args (a0, a1, a2, a3, a4, a5, … +4) → "
        "⚠ no result paths · ⚠ some argument names are empty"
    )


def test_the_page_embeds_its_stylesheet_and_script_from_package_data() -> None:
    """The CSS and JS are files shipped beside the renderer (pyproject's package-data
    globs), embedded whole in every page."""
    from helpers import REPO

    folder = REPO / "src" / "jxinspect" / "render" / "report" / html.ASSETS
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    report = Report(target="t", stage="jit", reached="lowered", jax_version=None,
                    platform="cpu", num_devices=1)  # fmt: skip
    page = html.render(report)
    for name, tag in (("report.css", "style"), ("report.js", "script")):
        source = (folder / name).read_text(encoding="utf-8")
        assert f'"render/report/assets/*{Path(name).suffix}"' in pyproject
        assert html.asset(name) == "\n" + source
        assert f"<{tag}>\n{source}</{tag}>" in page


# ---- the views by name -----------------------------------------------------------------------


def test_each_view_is_drawn_by_its_name() -> None:
    """One renderer for each name of ``VIEWS`` (``--show``, ``Report.show``); any other
    name is refused with the names."""
    report = report_of(leaf((8,), None))
    assert {view: views.render(report, view) for view in VIEWS} == {
        "jaxpr": jaxpr_view.render(report),
        "mlir": mlir_view.render(report),
        "sharding": sharding_view.render(report),
        "collectives": collectives.render(report),
        "memory": memory_view.render(report),
        "why": provenance_view.render(report),
    }
    with pytest.raises(ValueError) as refused:
        views.render(report, "nope")
    said = "unknown view 'nope': use jaxpr, mlir, sharding, collectives, memory or why"
    assert str(refused.value) == said


def test_the_lower_page_describes_each_view_in_order() -> None:
    page = (REPO / "docs" / "commands" / "lower.md").read_text(encoding="utf-8")
    section = page.split("\n## Views\n", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\* `--show (\w+)`", section, re.MULTILINE) == list(VIEWS)
