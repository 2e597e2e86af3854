"""The option table: every staging option declared once, and what derives from it."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest
from helpers import REPO

from jxinspect.core.dtypes import FLOAT_SHORTS
from jxinspect.core.errors import UsageError
from jxinspect.core.vocabulary import PARTITIONERS, PLATFORMS, STAGES
from jxinspect.project.options import (
    OPTIONS,
    TargetOptions,
    options_from_flags,
    options_from_mapping,
)

_FIELD_TYPES = {
    "spec": "str | None", "text": "str | None", "int_tuple": "tuple[int, ...] | None",
    "name_tuple": "tuple[str, ...] | None", "bool": "bool | None", "positive_int": "int | None",
}  # fmt: skip
_CHOICE_TYPES = {STAGES: "Stage | None", PLATFORMS: "Platform | None",
                 PARTITIONERS: "Partitioner | None", FLOAT_SHORTS: "str | None"}  # fmt: skip


def test_target_options_has_one_field_per_option_typed_by_its_kind() -> None:
    assert [(f.name, f.type) for f in fields(TargetOptions)] == [
        (o.name, _CHOICE_TYPES[o.choices] if o.kind == "choice" else _FIELD_TYPES[o.kind])
        for o in OPTIONS
    ]


def test_every_option_names_real_stages_and_choices() -> None:
    for option in OPTIONS:
        assert option.stages and set(option.stages) <= set(STAGES), option
        assert bool(option.choices) == (option.kind == "choice"), option
        assert (option.parse is not None) == (option.kind == "spec"), option
        assert option.help.endswith("."), option


def test_the_docs_list_exactly_the_tables_staging_flags() -> None:
    page = (REPO / "docs" / "commands" / "lower.md").read_text(encoding="utf-8")
    paragraph = page.split("Staging options:", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`(--[a-z][a-z-]*)", paragraph))
    staging = [o for o in OPTIONS if o.group == "staging"]
    assert named == {o.flag for o in staging} | {o.off_flag for o in staging if o.off_flag}
    docs = "".join(p.read_text(encoding="utf-8") for p in (REPO / "docs").rglob("*.md"))
    for option in OPTIONS:  # the inputs are described where inputs are
        assert f"`{option.flag}" in docs, option.flag


def test_positions_and_names_read_the_same_from_every_source() -> None:
    declared = options_from_mapping(
        {"static-argnums": 1, "donate_argnums": [0, 2], "static_argnames": "n"}, "here"
    )
    flagged = options_from_flags(
        {"static_argnums": "1", "donate_argnums": "0,2", "static_argnames": "n"}
    )
    assert (
        declared
        == flagged
        == TargetOptions(static_argnums=(1,), donate_argnums=(0, 2), static_argnames=("n",))
    )


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("static_argnums", "1", "an int or a list of ints"),
        ("static_argnames", [1], "a name or a list of names"),
        ("keep_unused", 1, "true or false"),
        ("devices", 0, "a positive int"),
        ("stage", "jti", "one of jit, pjit, pmap, shard_map (did you mean `jit`?)"),
        ("mesh", 8, "a string"),
    ],
)
def test_a_wrong_value_names_the_key_and_what_it_must_be(
    key: str, value: object, expected: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(f"here: `{key}` must be {expected}")):
        options_from_mapping({key: value}, "here")


def test_a_bad_flag_value_names_the_flag() -> None:
    with pytest.raises(UsageError, match="^--donate-argnums: "):
        options_from_flags({"donate_argnums": "x"})


def test_the_configuration_reference_lists_exactly_the_keys_defaults_may_set() -> None:
    from jxinspect.project.options import DEFAULT_KEYS

    page = (REPO / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    line = next(line for line in page.splitlines() if line.startswith("defaults: {"))
    assert tuple(line.split("#", 1)[1].replace(",", " ").split()) == DEFAULT_KEYS
