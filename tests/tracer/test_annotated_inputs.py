"""Abstract inputs built from annotations, held to the libraries' own word, in process:
real arrays of the inferred shapes pass jaxtyping's runtime checker
(``jaxtyped(typechecker=beartype)``), and a model built from an ``eqx.Module``'s field
annotations has the very tree ``eqx.filter_eval_shape`` of its constructor gives."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers import REPO

from jxinspect.project.annotations import infer_inputs
from jxinspect.project.spec import parse_dims

jaxtyping = pytest.importorskip("jaxtyping")
beartype = pytest.importorskip("beartype")
eqx = pytest.importorskip("equinox")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from jxinspect.tracer.inputs import to_abstract  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "annotated.py"
EQX_SAMPLE = REPO / "sample_programs" / "libraries" / "eqx_annotated.py"
EQX_DIMS = "batch=4, seq=6, vocab=11, width=8, classes=3"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fx() -> ModuleType:
    return _load(FIXTURE, "jxinspect_test_annotated_tracer")


@pytest.fixture(scope="module")
def eqx_sample() -> ModuleType:
    return _load(EQX_SAMPLE, "jxinspect_test_eqx_annotated")


def abstract(fun: Any, dims: str, **kw: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    options: dict[str, Any] = {
        "given": {}, "float_dtype": None, "statics": frozenset(), "static_names": (),
        "where": "m.py:f",
    }  # fmt: skip
    options.update(kw)
    got = infer_inputs(fun, dims=parse_dims(dims), **options)
    args = tuple(to_abstract(a, None) for a in got.args)
    return args, {k: to_abstract(v, None) for k, v in got.kwargs.items()}


def concrete(tree: Any) -> Any:
    """Zeros (and keys) of the abstract values' shapes and dtypes."""

    def make(leaf: Any) -> Any:
        if not isinstance(leaf, jax.ShapeDtypeStruct):
            return leaf
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            return (
                jax.random.split(jax.random.key(0), leaf.shape)
                if leaf.shape
                else (jax.random.key(0))
            )
        return jnp.zeros(leaf.shape, leaf.dtype)

    return jax.tree_util.tree_map(make, tree)


def checked(fun: Any) -> Any:
    return jaxtyping.jaxtyped(typechecker=beartype.beartype)(fun)


def test_the_eqx_model_is_the_tree_its_constructor_makes(eqx_sample: ModuleType) -> None:
    (model, *_), _ = abstract(eqx_sample.loss, EQX_DIMS)
    made = eqx.filter_eval_shape(eqx_sample.Model, 11, 8, 3, jax.random.key(0))
    assert jax.tree_util.tree_structure(model) == jax.tree_util.tree_structure(made)
    assert jax.tree_util.tree_leaves(model) == jax.tree_util.tree_leaves(made)
    assert model.blocks[1].scale == 0.5  # the static field's default


def test_real_arrays_of_the_inferred_shapes_pass_jaxtypings_checker(
    fx: ModuleType, eqx_sample: ModuleType
) -> None:
    args, kwargs = abstract(eqx_sample.loss, EQX_DIMS)
    checked(eqx_sample.loss)(*concrete(args), **concrete(kwargs))

    step = fx.train_step.__wrapped__  # the function the jit wraps
    args, kwargs = abstract(step, "batch=8, din=4, dout=3", static_names=("schedule",))
    checked(step)(*concrete(args), **concrete(kwargs))

    args, kwargs = abstract(fx.attention, "batch=2, seq=5, heads=3, dim=4")
    checked(fx.attention)(*concrete(args), **concrete(kwargs))

    args, kwargs = abstract(fx.symbolic, "n=3")
    checked(fx.symbolic)(*concrete(args))

    dims = "batch=2, height=3, width=5, channels=4, lead=(6,7)"
    args, kwargs = abstract(fx.classify, dims, static_names=("n",), given={"n": 2})
    checked(fx.classify)(*concrete(args), **concrete(kwargs))


def test_the_checker_does_check(fx: ModuleType) -> None:
    """The test above would pass on anything if the checker were not on."""
    args, _ = abstract(fx.attention, "batch=2, seq=5, heads=3, dim=4")
    q, k, mask = concrete(args)
    with pytest.raises(Exception, match="(?i)type-check|violat"):
        checked(fx.attention)(q, k, jnp.zeros((2, 5, 4), bool))


def test_a_key_annotation_is_a_typed_key(eqx_sample: ModuleType) -> None:
    args, _ = abstract(eqx_sample.loss, EQX_DIMS)
    assert jax.dtypes.issubdtype(args[3].dtype, jax.dtypes.prng_key) and args[3].shape == ()
