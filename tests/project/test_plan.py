"""The staging plan: each stage's statics and donation read once, as canonical tuples."""

from __future__ import annotations

import numpy as np

from jxinspect.project.plan import StagingPlan


def test_jit_and_pmap_statics_come_from_their_own_keywords() -> None:
    options = {"static_argnums": 1, "static_broadcasted_argnums": [2], "donate_argnums": (0,)}
    jit = StagingPlan.of("jit", options)
    pmap = StagingPlan.of("pmap", options)
    assert (jit.statics, jit.statics_key, jit.donated) == ((1,), "static_argnums", (0,))
    assert (pmap.statics, pmap.statics_key, pmap.donated) == (
        (2,),
        "static_broadcasted_argnums",
        (0,),
    )
    assert StagingPlan.of("shard_map", options).statics == (1,)  # the jit around it


def test_names_and_positions_are_canonical() -> None:
    plan = StagingPlan.of("jit", {"static_argnames": "n", "static_argnums": [np.int64(-1), 0]})
    assert plan.static_names == ("n",) and plan.statics == (-1, 0)
    assert plan.static_positions(3) == {0, 2}
    assert plan.keywords["static_argnames"] == "n"  # handed to JAX as given


def test_what_the_plan_cannot_read_is_left_to_jax() -> None:
    plan = StagingPlan.of("jit", {"static_argnums": "x", "donate_argnums": True})
    assert plan.statics == () and plan.donated == ()
    assert plan.keywords == {"static_argnums": "x", "donate_argnums": True}


def test_the_api_keywords_are_the_stages_own_options_given() -> None:
    from jxinspect.core.errors import UsageError
    from jxinspect.project.options import TargetOptions
    from jxinspect.project.plan import api_keywords

    given = TargetOptions(static_argnums=(1,), keep_unused=False, axis_name="i",
                          in_axes="0, None", donate_argnums=(0,), mesh="data=2")  # fmt: skip
    assert api_keywords(given) == {"static_argnums": (1,), "donate_argnums": (0,)}
    pmap = TargetOptions(stage="pmap", static_argnums=(1,), axis_name="i", in_axes="0, None",
                         static_broadcasted_argnums=(1,), keep_unused=True)  # fmt: skip
    assert api_keywords(pmap) == {"axis_name": "i", "in_axes": (0, None),
                                  "static_broadcasted_argnums": (1,)}  # fmt: skip
    assert api_keywords(TargetOptions(keep_unused=True)) == {"keep_unused": True}
    try:
        api_keywords(TargetOptions(stage="pmap", out_axes="f32["))
    except UsageError as err:
        assert str(err).startswith("--out-axes: ")
    else:
        raise AssertionError("a bad out_axes spec was accepted")
