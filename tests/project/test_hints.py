"""Annotations resolved as typing.get_type_hints resolves them, one by one where it fails
as a whole: a library alias's forward references come from the module that defined the
alias (optax's ``OptState`` is ``ArrayTree``, a union that names itself), and each
annotation that cannot be resolved is named with why."""

from __future__ import annotations

import sys
import typing

import pytest

from jxinspect.project import hints

optax = pytest.importorskip("optax")


def step(params: dict, opt_state: optax.OptState, n: int) -> None:  # noqa: D103
    pass


def broken(x: int, y: NotDefinedHere) -> None:  # noqa: F821
    pass


def test_a_library_alias_resolves_in_the_module_that_defined_it() -> None:
    with pytest.raises(NameError, match="ArrayTree"):  # what Python says alone
        typing.get_type_hints(step)
    resolved, failed = hints.resolve(step)
    assert failed == {} and resolved["n"] is int and resolved["params"] is dict
    members = typing.get_args(resolved["opt_state"])
    assert members[:-2] == typing.get_args(optax.OptState)[:-2]  # the arrays and scalars
    inner = typing.get_args(members[-1])[1]  # Mapping[Any, ArrayTree]: resolved itself
    assert not isinstance(inner, typing.ForwardRef) and typing.get_origin(inner) is typing.Union


def test_a_flax_train_states_fields_resolve() -> None:
    train_state = pytest.importorskip("flax.training.train_state")
    resolved, failed = hints.resolve(train_state.TrainState)
    assert failed == {}
    assert {"step", "apply_fn", "params", "tx", "opt_state"} <= set(resolved)


def test_an_annotation_that_cannot_be_resolved_is_named_and_the_others_resolve() -> None:
    resolved, failed = hints.resolve(broken)
    assert resolved == {"x": int, "return": type(None)}
    assert failed == {"y": "NameError: name 'NotDefinedHere' is not defined"}


def test_nothing_is_imported_to_resolve() -> None:
    before = set(sys.modules)
    hints.resolve(step)
    hints.resolve(broken)
    assert set(sys.modules) == before


def test_a_name_the_users_own_text_lacks_is_never_borrowed_from_a_library() -> None:
    """``ArrayTree`` is optax's, but an annotation that names it without importing it
    is the user's mistake: named, not resolved from optax's module."""

    def own(opt_state: ArrayTree) -> None:  # noqa: F821
        pass

    assert hints.resolve(own) == ({"return": type(None)}, {
        "opt_state": "NameError: name 'ArrayTree' is not defined"})  # fmt: skip
