"""The JAX seam on whichever JAX release runs the tests: the ways it reads what older
bindings do not expose agree with the newer bindings wherever both exist."""

from __future__ import annotations

import importlib.util
import inspect
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from helpers import CORPUS, raw_main

from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir

# names a user can give (dict keys reach argument names verbatim)
TRICKY = ["plain", 'quote"d', "back\\slash", "new\nline", "tab\there", "ünï", "x[0].y"]


def _lowered_module() -> object:
    def f(params: dict[str, jax.Array]) -> jax.Array:
        return sum(params.values())  # type: ignore[return-value]

    args = {name: jax.ShapeDtypeStruct((2,), jnp.float32) for name in TRICKY}
    return seam.stablehlo_module(jax.jit(f, keep_unused=True).lower(args))


def test_argument_names_from_the_printed_header_equal_jax_names() -> None:
    module = _lowered_module()
    expected = [f"params[{name!r}]" for name in sorted(TRICKY)]
    with module.context:  # type: ignore[attr-defined]
        main = mlir.find_main(module)
        assert seam.printed_argument_names(main) == expected
        assert seam.block_argument_names(main) == expected


def test_result_paths_normalize_to_the_newer_spelling() -> None:
    assert seam.normalize_result_path("['y']", False) == "result['y']"
    assert seam.normalize_result_path("", False) == "result"
    assert seam.normalize_result_path("result['y']", True) == "result['y']"
    assert seam.prefixes_results(["result[0]", ""]) is True
    assert seam.prefixes_results(["[0]['w']"]) is False
    assert seam.prefixes_results(["", None]) is None
    traced = jax.make_jaxpr(lambda x: {"a": x})(1.0).jaxpr
    info = seam.debug_info(traced)
    assert info is not None and info.result_paths is not None
    assert info.result_paths[0].startswith("result") == seam.result_paths_prefixed()


def test_locations_read_alike_on_every_binding() -> None:
    module = _lowered_module()
    with module.context:  # type: ignore[attr-defined]
        main = mlir.find_main(module)
        body = list(main.regions[0].blocks[0].operations)
        kinds = {seam.read_location(op.location).kind for op in body}
    assert kinds <= {"name", "callsite", "file", "fused", "unknown"}
    assert kinds & {"name", "callsite", "file", "fused"}


def test_unsupported_names_the_release() -> None:
    error = seam.unsupported("a feature", "9.9")
    assert str(error).startswith("a feature needs JAX 9.9 or newer; this is JAX ")
    assert jax.__version__ in str(error)


@pytest.mark.parametrize("explicit", [False, True])
def test_meshes_with_each_release_constructor(explicit: bool) -> None:
    if explicit and not hasattr(jax.sharding, "AxisType"):
        with pytest.raises(Exception, match="explicit sharding axes"):
            seam.make_abstract_mesh((2, 4), ("a", "b"), explicit)
        return
    if not seam.abstract_meshes_lower():
        with pytest.raises(Exception, match=f"needs JAX {re.escape(seam.ABSTRACT_SINCE)} "):
            seam.make_abstract_mesh((2, 4), ("a", "b"), explicit)
        return
    mesh = seam.make_abstract_mesh((2, 4), ("a", "b"), explicit)
    assert seam.mesh_axes(mesh) == (("a", 2), ("b", 4)) and seam.is_abstract_mesh(mesh)


def test_only_the_seam_touches_jax() -> None:
    """The wall: no module outside ``tracer/seam/`` imports JAX or jaxlib, reads
    ``jax._src`` or names a config option (``jax.config``)."""
    import ast
    from pathlib import Path

    import jxinspect

    root = Path(jxinspect.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        # the survey's corpus is a user's module shipped as data, staged as any target
        if path.is_relative_to(root / "tracer" / "seam") or path.is_relative_to(CORPUS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Attribute) and node.attr in ("config", "_src"):
                if isinstance(node.value, ast.Name) and node.value.id == "jax":
                    names = [f"jax.{node.attr}"]
            for name in names:
                if name.split(".")[0] in ("jax", "jaxlib"):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    assert offenders == []


# ---- the release facts each seam module states, against the installed JAX ---------------


def _release() -> tuple[int, int, int]:
    major, minor, patch = re.match(r"(\d+)\.(\d+)\.(\d+)", jax.__version__).groups()  # type: ignore[union-attr]
    return int(major), int(minor), int(patch)


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _pxla() -> object:
    from jax._src.interpreters import pxla

    return pxla


def _ir() -> object:
    from jaxlib.mlir import ir

    return ir


# (fact, what this release does, from which release on the docstring says it does it)
def _buffer_assignment(compiled: Any) -> Any:
    return seam.buffer_assignment(compiled, seam.memory_analysis(compiled))


def _names_checkpoint_inputs() -> bool:
    """Whether ``print_saved_residuals`` names the value a ``checkpoint_name`` names (not
    only the name's own output)."""
    import contextlib
    import io

    from jax.ad_checkpoint import checkpoint_name, print_saved_residuals

    def f(w: Any) -> Any:
        return jnp.sum((checkpoint_name(jnp.tanh(jnp.ones((2, 3)) @ w), "h") @ w.T) ** 2)

    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        print_saved_residuals(f, jnp.ones((3, 3)))
    return said.getvalue().count("named 'h'") == 2


def _lowers_with_gspmd() -> bool:
    """Whether JAX writes GSPMD's ``mhlo.sharding`` with ``jax_use_shardy_partitioner`` off."""
    from jax.sharding import NamedSharding, PartitionSpec

    before = jax.config.values["jax_use_shardy_partitioner"]
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        mesh = jax.sharding.Mesh(jax.devices()[:1], ("d",))
        jitted = jax.jit(lambda x: x * 2, in_shardings=NamedSharding(mesh, PartitionSpec("d")))
        return "mhlo.sharding" in jitted.lower(jnp.ones(4)).as_text()
    finally:
        jax.config.update("jax_use_shardy_partitioner", before)


def _flax_jit_lowering_frame() -> tuple[str, bool] | None:
    """Where Flax's ``nnx.jit`` has JAX lower its inner ``jit`` (the hook reads the
    user's call there): the name of the nearest frame of Flax's ``compilation.py`` that
    :data:`seam.hooks.FLAX_JIT_CALLERS` names, as JAX's lowering event sees the stack,
    and whether it holds the user's function, call and what it hands the inner
    ``jit``; ``None`` where no such frame is on the stack."""
    import os
    import sys

    from flax import nnx

    def step(model: nnx.Linear, x: jax.Array) -> jax.Array:
        return model(x).sum()

    found: list[tuple[str, bool]] = []

    def on_phase(phase: str, seconds: float) -> None:
        frame: Any = sys._getframe()
        while frame is not None and not found:
            code, local = frame.f_code, frame.f_locals
            where = os.path.join("flax", "nnx", "transforms", "compilation.py")
            if code.co_filename.endswith(where) and code.co_name in seam.hooks.FLAX_JIT_CALLERS:
                held = {"args", "kwargs", "pure_args", "pure_kwargs"} <= set(local)
                mine = seam.hooks.flax_jit_function(code.co_name, local) is step
                found.append((code.co_name, held and mine))
            frame = frame.f_back

    stop = seam.install_duration_listener(lambda p, s: on_phase(p, s) if p == "lower" else None)
    try:
        nnx.jit(step)(nnx.Linear(2, 3, rngs=nnx.Rngs(0)), jnp.ones((1, 2)))
    finally:
        stop()
    return found[0] if found else None


def _flax_release() -> tuple[int, int]:
    import flax

    major, minor = re.match(r"(\d+)\.(\d+)", flax.__version__).groups()  # type: ignore[union-attr]
    return int(major), int(minor)


RELEASE_FACTS: list[tuple[str, Callable[[], bool], Callable[[tuple[int, int, int]], bool]]] = [
    ("devices: jax_num_cpu_devices", lambda: "jax_num_cpu_devices" in jax.config.values,
     lambda v: v >= (0, 5, 0)),
    ("devices: Shardy by default", seam.shardy_default, lambda v: v >= (0, 7, 0)),
    ("devices: jax_use_shardy_partitioner off lowers with GSPMD", _lowers_with_gspmd,
     lambda v: v < (0, 12, 1)),
    ("devices: seam.gspmd_lowers says so", lambda: seam.gspmd_lowers() == _lowers_with_gspmd(),
     lambda v: True),
    ("meshes: lowering for an AbstractMesh", seam.abstract_meshes_lower, lambda v: v >= (0, 4, 38)),
    ("meshes: AxisType", lambda: hasattr(jax.sharding, "AxisType"), lambda v: v >= (0, 5, 0)),
    ("meshes: jax.set_mesh", lambda: hasattr(jax, "set_mesh"), lambda v: v >= (0, 7, 0)),
    ("meshes: core.ShardingTypeError (sharding in types)",
     lambda: hasattr(importlib.import_module("jax._src.core"), "ShardingTypeError"),
     lambda v: v >= (0, 6, 0)),
    ("meshes: PartitionSpec.partitions (refuses iteration with unreduced axes)",
     lambda: isinstance(getattr(jax.sharding.PartitionSpec, "partitions", None), property),
     lambda v: v >= (0, 10, 2)),
    ("staging: jax.shard_map", lambda: hasattr(jax, "shard_map"), lambda v: v >= (0, 6, 0)),
    ("staging: pmap through jit/shard_map", seam.pmap_global_shapes, lambda v: v >= (0, 8, 0)),
    ("staging: pmap's own axis name",
     lambda: seam.pmap_axis_default() == "_internal_pmap_axis_name", lambda v: v >= (0, 10, 2)),
    ("lowering: as_text(debug_info=)",
     lambda: "debug_info" in inspect.signature(jax.stages.Lowered.as_text).parameters,
     lambda v: v >= (0, 5, 0)),
    ("jaxprs: JaxprDebugInfo",
     lambda: type(jax.make_jaxpr(lambda x: x)(1.0).jaxpr.debug_info).__name__ == "JaxprDebugInfo",
     lambda v: v < (0, 5, 0)),
    ("jaxprs: core.ClosedJaxpr", lambda: seam.closed_jaxpr_type() is not None,
     lambda v: v < (0, 12, 0)),
    ("spelling: result['a']", seam.result_paths_prefixed, lambda v: v >= (0, 5, 3)),
    ("spelling: result['a'], by the release table",
     lambda: seam.result_paths_prefixed_in_release() == seam.result_paths_prefixed(),
     lambda v: True),
    ("mlir: BlockArgument.isinstance", lambda: hasattr(_ir().BlockArgument, "isinstance"),  # type: ignore[attr-defined]
     lambda v: v < (0, 9, 0)),
    ("locations: ir.NameLoc", lambda: hasattr(_ir(), "NameLoc"), lambda v: v > (0, 10, 0)),
    ("locations: Location.is_a_name", lambda: hasattr(_ir().Location, "is_a_name"),  # type: ignore[attr-defined]
     lambda v: (0, 6, 0) <= v <= (0, 10, 0)),
    ("compiled: _hlo.hlo_module_from_text", lambda: _has_module("jaxlib._hlo"),
     lambda v: v >= (0, 10, 2)),
    ("release: jax.custom_transpose (the survey's custom_transpose)",
     lambda: seam.has_public_api("jax.custom_transpose.custom_transpose")
     == _has_module("jax.custom_transpose"), lambda v: True),
    ("release: jax.custom_transpose removed in 0.10",
     lambda: seam.has_public_api("jax.custom_transpose.custom_transpose"),
     lambda v: v < (0, 10, 0)),
    ("compiled: cost_analysis() is a dict (a list of one dict before)",
     lambda: isinstance(jax.jit(lambda x: x * 2.0).lower(1.0).compile().cost_analysis(), dict),
     lambda v: v >= (0, 5, 0)),  # 0.4.38 still a list, whatever its changelog says
    ("compiled: seam.cost_analysis reads flops on every release",
     lambda: (seam.cost_analysis(jax.jit(lambda x: x @ x).lower(
         jax.ShapeDtypeStruct((4, 4), "float32")).compile()) or {}).get("flops", 0) > 0,
     lambda v: True),
    ("compiled: memory_analysis() holds the buffer assignment (0.4 to 0.5: in an HloProto)",
     lambda: (_buffer_assignment(jax.jit(lambda x: x * 2.0).lower(1.0).compile())
              or ("",))[0] == "BufferAssignment", lambda v: v >= (0, 6, 0)),
    ("jaxprs: name stacks say jvp( and transpose( (seam.TRANSFORMATION_NAMES_SINCE)",
     lambda: any("transpose(" in seam.name_stack(e) for e in jax.jit(jax.grad(
         lambda x: jnp.sum(jnp.tanh(x)))).trace(jnp.ones(3)).jaxpr.jaxpr.eqns)
     == seam.names_transformations(), lambda v: True),
    ("jaxprs: print_saved_residuals names what feeds a checkpoint_name (before seam's "
     "NAMED_OUTPUTS_ONLY_SINCE)", _names_checkpoint_inputs, lambda v: v < (0, 10, 2)),
    ("hooks: pxla.lower_parallel_callable",
     lambda: hasattr(_pxla(), "lower_parallel_callable"), lambda v: v < (0, 10, 0)),
    ("hooks: nnx.jit lowers under a frame of FLAX_JIT_CALLERS that holds the user's call",
     lambda: (_flax_jit_lowering_frame() or ("", False))[1], lambda v: True),
    ("hooks: nnx.jit is flax 0.10's function jit_wrapper (JitWrapped's methods from 0.11)",
     lambda: ((_flax_jit_lowering_frame() or ("",))[0] == "jit_wrapper")
     == (_flax_release() < (0, 11)), lambda v: True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fact", "probe", "since"), RELEASE_FACTS, ids=[f[0] for f in RELEASE_FACTS]
)
def test_release_facts_hold_for_this_release(
    fact: str, probe: Callable[[], bool], since: Callable[[tuple[int, int, int]], bool]
) -> None:
    assert probe() == since(_release()), f"{fact} on JAX {jax.__version__}"


def test_block_argument_location_where_the_bindings_have_it() -> None:
    """Absent in 0.4.35 and 0.5.3, present in 0.7.2 and later (the printed header serves
    the releases without it)."""
    present = hasattr(_ir().BlockArgument, "location")  # type: ignore[attr-defined]
    if _release() <= (0, 5, 3):
        assert not present
    elif _release() >= (0, 7, 2):
        assert present


def test_flat_index_keys_read_in_the_newer_spelling() -> None:
    class Node:
        def __init__(self, a: float) -> None:
            self.a = a

    jax.tree_util.register_pytree_node(Node, lambda n: ((n.a,), None), lambda _, c: Node(*c))
    info = seam.debug_info(jax.make_jaxpr(lambda p: p.a * 2)(Node(1.0)).jaxpr)
    assert info is not None and info.arg_names is not None
    (name,) = info.arg_names
    assert ("<flat index" in name) == (_release() < (0, 5, 0))
    assert seam.newer_spelling(name) == "p[0]"


def test_lone_result_path_before_0_5_3() -> None:
    info = seam.debug_info(jax.make_jaxpr(lambda x: x)(1.0).jaxpr)
    assert info is not None and info.result_paths is not None
    assert info.result_paths == (("",) if _release() < (0, 5, 3) else ("result",))
    assert (
        seam.normalize_result_path(info.result_paths[0], seam.result_paths_prefixed()) == "result"
    )


def test_pmap_names_and_out_info_by_release() -> None:
    """pmap keeps the real names in ``@main`` up to 0.7.1, none in 0.7.2, ``args[i]``
    once built on shard_map (0.8), ``flat_args[i]`` from 0.9; the older pmap's
    ``Lowered`` has no ``out_info``."""
    lowered = jax.pmap(lambda x, y: x + y).lower(jnp.ones((1, 2)), jnp.ones((1, 2)))
    module = seam.stablehlo_module(lowered)
    with module.context:
        names = seam.block_argument_names(mlir.find_main(module))
    if seam.pmap_global_shapes():
        prefix = "args" if _release() < (0, 9, 0) else "flat_args"
        assert names == [f"{prefix}[0]", f"{prefix}[1]"]
        assert seam.out_info(lowered) is not None
    else:
        assert names == (["x", "y"] if _release() <= (0, 7, 1) else [None, None])
        assert seam.out_info(lowered) is None


def test_static_argnames_read_from_a_file_stay_static() -> None:
    """0.4.35 matches keyword names by identity: a name built at run time must work too."""
    name = "".join(["fl", "ag"])
    staged = seam.jit(lambda x, flag: x + 1 if flag else x - 1, {"static_argnames": (name,)})
    assert float(staged(1.0, flag=True)) == 2.0


def test_equations_name_their_primitive_nested_jaxprs_and_user_line() -> None:
    def body(x: jax.Array) -> jax.Array:
        return jnp.sin(x) * 2

    def f(x: jax.Array) -> jax.Array:
        return jax.jit(body)(x) + 1

    jaxpr = jax.make_jaxpr(f)(1.0).jaxpr
    assert seam.arity(jaxpr) == (1, 1)
    eqns = seam.equations(jaxpr, source=True)
    assert [e.primitive for e in eqns][-1] == "add"
    call = next(e for e in eqns if e.nested)
    ((label, inner),) = call.nested
    assert label == "jaxpr" and "sin" in [e.primitive for e in seam.equations(inner)]
    assert call.source is not None and call.source.file == __file__
    assert seam.first_user_line(jaxpr) == call.source
    assert all(e.source is None for e in seam.equations(jaxpr))
    assert "sin" in seam.jaxpr_text(jaxpr)


def test_make_mesh_axes_are_auto_unless_explicit() -> None:
    if not hasattr(jax.sharding, "AxisType"):
        return
    mesh = seam.make_mesh((1,), ("a",), jax.devices()[:1], False)
    assert tuple(mesh.axis_types) == (jax.sharding.AxisType.Auto,)


def test_a_type_carries_a_layout_on_explicit_axes_only() -> None:
    """An argument that declares nothing is typed on the empty mesh, one on ``Auto``
    axes ``P(None)`` whatever it declared: no layout; on ``Explicit`` axes (0.7 on, under
    ``jax.set_mesh``), its spec."""
    mesh = seam.make_mesh((1,), ("data",), jax.devices()[:1], False)
    declared = jax.ShapeDtypeStruct((2,), jnp.float32, sharding=seam.named_sharding(mesh, ["data"]))
    plain = jax.ShapeDtypeStruct((2,), jnp.float32)
    avals = seam.in_avals(jax.make_jaxpr(lambda a, b: a + b)(declared, plain).jaxpr)
    assert [seam.typed_spec(aval) for aval in avals] == [None, None]
    if not hasattr(jax, "set_mesh"):
        return
    mesh = seam.make_mesh((1,), ("data",), jax.devices()[:1], True)
    with seam.use_mesh(mesh):
        declared = jax.ShapeDtypeStruct(
            (2,), jnp.float32, sharding=seam.named_sharding(mesh, ["data"])
        )
        avals = seam.in_avals(jax.make_jaxpr(lambda a, b: a + b)(declared, plain).jaxpr)
    assert [seam.typed_spec(aval) for aval in avals] == [seam.partition_spec(["data"]), None]


def test_jax_gives_a_scalar_its_own_replicated_sharding_from_0_8() -> None:
    """Over several devices, a scalar argument that declares no sharding gets JAX's
    replicated one, on Shardy's ``@empty_mesh`` (0.8 on; none in 0.4.35 and 0.7.2)."""
    raw = raw_main(
        "mesh = seam.make_mesh((8,), ('data',), jax.devices()[:8], explicit=False)\n"
        "c = lambda x: jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('data')))\n"
        "scalar = jax.ShapeDtypeStruct((), jnp.float32)\n"
        "lowered = jax.jit(lambda x, e: c(x) * e).lower(S(8), scalar)"
    )
    x, eps = (arg["sharding"] for arg in raw["args"])
    assert x is None
    assert eps == (
        "sdy.sharding = #sdy.sharding<@empty_mesh, []>" if _release() >= (0, 8, 0) else None
    )


def test_the_oldest_supported_release_is_the_one_the_package_requires() -> None:
    """``seam.release.OLDEST_SUPPORTED`` (the one-line error's) and ``pyproject.toml``'s
    requirements name one release."""
    import sys

    from helpers import REPO

    from jxinspect.tracer.seam import release

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the runtime dependency tomli
        import tomli as tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    oldest = release.OLDEST_SUPPORTED
    assert {f"jax>={oldest}", f"jaxlib>={oldest}"} <= set(project["dependencies"])


def test_a_public_api_is_there_or_not() -> None:
    assert seam.has_public_api("jax.numpy.tanh") and seam.has_public_api("jax.named_call")
    assert not seam.has_public_api("jax.numpy.no_such_function")
    assert not seam.has_public_api("jax.no_such_module.anything")


def test_the_monitoring_events_record_reads_are_the_running_jaxs() -> None:
    """Every duration and persistent-cache event ``record`` listens for is one this JAX
    records (its name in JAX's compiler, compilation cache or dispatch source), and every
    setting of the cache it reads is one this JAX has."""
    from jax._src import compilation_cache, compiler, dispatch, pjit
    from jax._src.interpreters import pxla

    source = "".join(
        inspect.getsource(m) for m in (compiler, compilation_cache, dispatch, pjit, pxla)
    )
    for event in (*seam.hooks.DURATION_EVENTS, *seam.hooks.CACHE_EVENTS):
        assert event in source, event
    assert set(seam.cache_settings()) == set(seam.hooks.CACHE_SETTINGS)
    assert all(name in jax.config.values for name in seam.hooks.CACHE_SETTINGS)


def _traced_helper(x: Any) -> Any:
    return jnp.sin(x) * 2.0


def _traced_caller(x: Any) -> Any:
    return _traced_helper(x) + 1.0


def test_traced_code_names_the_helpers_a_program_was_traced_through() -> None:
    """Each equation's traceback reaches the traced function's own frame (jaxlib's
    ``raw_frames``): the helper it called is named, JAX's own code and the callers of
    the traced function are not."""
    closed = jax.make_jaxpr(_traced_caller)(1.0)
    code = _traced_caller.__code__
    found = seam.traced_code(closed.jaxpr, (code.co_filename, code.co_firstlineno))
    helper = _traced_helper.__code__
    assert found == {(helper.co_filename, helper.co_firstlineno)}
    caller = test_traced_code_names_the_helpers_a_program_was_traced_through.__code__
    assert seam.traced_code(closed.jaxpr, ("elsewhere.py", 1)) == set()
    assert (caller.co_filename, caller.co_firstlineno) not in found


def test_the_ambient_mesh_is_the_one_a_real_run_sets_whatever_its_axes() -> None:
    """``seam.use_mesh`` makes a mesh of ``Auto`` or ``Explicit`` axes the one
    ``jax.sharding.get_abstract_mesh()`` returns (what Flax's ``nnx.with_partitioning``
    lays a variable out on: its abstract twin, as ``nnx.eval_shape`` gives it)."""
    ambient = getattr(jax.sharding, "get_abstract_mesh", None)
    if ambient is None or not hasattr(jax.sharding, "AxisType"):
        pytest.skip("this JAX has no ambient abstract mesh")
    for explicit in (False, True) if hasattr(jax, "set_mesh") else (False,):
        mesh = seam.make_mesh((1,), ("data",), jax.devices()[:1], explicit)
        with seam.use_mesh(mesh):
            assert dict(ambient().shape) == {"data": 1}
            twin = seam.named_sharding(ambient(), ["data"])
        assert ambient().empty
        on_twin = jax.ShapeDtypeStruct((4,), jnp.float32, sharding=twin)
        on_mesh = jax.ShapeDtypeStruct((4,), jnp.float32, sharding=seam.named_sharding(mesh, []))
        assert (seam.on_abstract_mesh(on_twin), seam.on_abstract_mesh(on_mesh)) == (True, False)


def test_a_sharding_type_error_is_told_apart_over_explicit_axes() -> None:
    """Over ``Explicit`` axes JAX refuses an operation whose sharding it cannot type
    (``ShardingTypeError``), which ``Auto`` axes never raise."""
    if not hasattr(jax, "set_mesh"):
        pytest.skip("explicit axes need jax.set_mesh (0.7 on)")
    mesh = seam.make_mesh((1,), ("m",), jax.devices()[:1], True)
    table = jax.ShapeDtypeStruct((8, 2), jnp.float32, sharding=seam.named_sharding(mesh, ["m"]))
    ids = jax.ShapeDtypeStruct((3,), jnp.int32)
    with seam.use_mesh(mesh), pytest.raises(Exception) as raised:
        jax.jit(lambda t, i: t[i]).trace(table, ids)
    assert seam.sharding_type_error(raised.value)
    assert not seam.sharding_type_error(ValueError("x"))
