"""The JAX seam on whichever JAX release runs the tests: the ways it reads what older
bindings do not expose agree with the newer bindings wherever both exist."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

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
        with pytest.raises(Exception, match=r"needs JAX 0\.5\.0"):
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
        if path.is_relative_to(root / "tracer" / "seam"):
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
