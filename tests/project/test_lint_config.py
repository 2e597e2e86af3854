"""Lint configuration and declarations read from source: in-process unit tests (no JAX).
The same errors through the command are in test_lint_cli.py."""

from __future__ import annotations

import textwrap
import typing
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Annotated

import pytest
from helpers import REPO
from msgspec import Meta

from jxinspect.core.errors import UsageError, UserCodeError
from jxinspect.core.lint import LintFinding
from jxinspect.core.model import Finding
from jxinspect.core.settings import (
    BUDGET_KEYS,
    OPTIONAL_BUDGETS,
    BudgetKind,
    ForbiddenCollective,
    Settings,
    parse_budget,
    parse_bytes,
)
from jxinspect.project.config import (
    CONFIG_KEYS,
    CONFIG_KEYS_BY_NAME,
    POLICY_KEYS,
    TOP_KEYS,
    Config,
    ConfigKey,
    Policy,
    PolicyOverride,
    TargetEntry,
    _declared,
    _keys_of,
    _reader,
    config_reference,
    load_config,
)
from jxinspect.project.config_files import MAX_DEPTH
from jxinspect.project.config_search import find_config
from jxinspect.project.declarations import definition_line, parse_module, static_declaration
from jxinspect.project.options import TargetOptions


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "models/mlp.py", "def predict(params, x):\n    return x\n")
    return tmp_path


def config_error(folder: Path, text: str, name: str = "jxinspect.yaml") -> str:
    path = write(folder, name, text)
    with pytest.raises(UsageError) as info:
        load_config(path)
    return str(info.value)


FULL = """
defaults: {devices: 8, mesh: "data=8", partitioner: gspmd, platform: cpu}
paths: [models]
exclude: ["models/old_*"]
select: [JX1, jx2]
ignore: JX105
severity: {JX102: error, JX1: info}
budgets: {replicated_bytes: 4MiB, bytes_per_device: "1.5 GB"}
baseline: ci/baseline.json
fail_on: warning
compile: true
targets:
  - target: models/mlp.py:predict
    args: "{w: f32[3,2]}, f32[8,3]"
    static-argnums: 1
    donate_argnums: [0]
    ignore: [JX203]
    severity: {JX201: error}
    budgets: {bytes_per_device: 2GiB}
    compile: false
"""


def test_a_full_configuration_reads_back(project: Path) -> None:
    config = load_config(write(project, "jxinspect.yaml", FULL))
    assert config.root == project.resolve() and config.paths == ("models",)
    assert config.defaults.devices == 8 and config.defaults.partitioner == "gspmd"
    assert config.fail_on == "warning" and config.baseline == "ci/baseline.json"
    policy = config.policy
    assert policy.select == ("JX1", "JX2") and policy.ignore == ("JX105",)
    assert policy.settings == Settings(4 << 20, 1_500_000_000) and policy.compile
    assert not policy.enabled("JX105") and not policy.enabled("JX302") and policy.enabled("JX201")
    assert policy.severity_of("JX102", "warning") == "error"  # the longest prefix wins
    assert policy.severity_of("JX101", "warning") == "info"
    (entry,) = config.targets
    assert entry.line == 12
    assert entry.options.static_argnums == (1,) and entry.options.donate_argnums == (0,)
    own = entry.override.apply(policy)
    assert own.ignore == ("JX105", "JX203") and own.severity_of("JX201", "warning") == "error"
    assert own.settings == Settings(4 << 20, 2 << 30) and not own.compile


def test_pyproject_holds_the_same_schema(project: Path) -> None:
    write(
        project,
        "pyproject.toml",
        """
        [project]
        name = "demo"

        [tool.jxinspect]
        select = ["JX2"]
        budgets = { bytes_per_device = "64 MiB" }

        [tool.jxinspect.defaults]
        devices = 4

        [[tool.jxinspect.targets]]
        target = "models/mlp.py:predict"
        args = "f32[3]"
    """,
    )
    found = find_config(project / "models")
    assert found == project / "pyproject.toml"
    config = load_config(found)
    assert config.defaults.devices == 4 and config.policy.select == ("JX2",)
    assert config.policy.settings.bytes_per_device == 64 << 20
    assert config.targets[0].options.args == "f32[3]"


def test_pyproject_errors_name_the_key_path(project: Path) -> None:
    message = config_error(
        project,
        """
        [tool.jxinspect]
        select = ["JX2"]

        [[tool.jxinspect.targets]]
        target = "models/mlp.py:predict"

        [[tool.jxinspect.targets]]
        target = "models/mlp.py:predict"
        static_argnum = 1
    """,
        "pyproject.toml",
    )
    assert message == (
        "pyproject.toml: tool.jxinspect.targets[1].static_argnum: unknown key "
        "(did you mean `static_argnums`?)"
    )
    assert config_error(project, "[tool.jxinspect]\ntarget = 1\n", "pyproject.toml") == (
        "pyproject.toml: tool.jxinspect.target: unknown key (did you mean `targets`?)"
    )
    assert config_error(project, "[tool.jxinspect]\ndefaults = 1\n", "pyproject.toml") == (
        "pyproject.toml: tool.jxinspect.defaults: must be a mapping, got int 1"
    )
    assert "TOML syntax error" in config_error(project, "[tool.jxinspect\n", "pyproject.toml")
    assert "no [tool.jxinspect] table" in config_error(project, "[project]\n", "pyproject.toml")


def test_find_config_prefers_yaml_and_stops_at_the_repository_root(project: Path) -> None:
    assert find_config(project) is None
    write(project, "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_config(project) is None  # no [tool.jxinspect] table
    write(project, "jxinspect.yaml", "paths: [models]\n")
    assert find_config(project / "models") == project / "jxinspect.yaml"
    (project / "models" / ".git").mkdir()
    assert find_config(project / "models") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "targets:\n  - target: models/mlp.py:predict\n    args: [f32[3]\n",
            "jxinspect.yaml:3: YAML syntax error: expected ',' or ']'",
        ),
        (
            "paths: [models]\ntarget:\n  - target: models/mlp.py:predict\n",
            "jxinspect.yaml:2: target: unknown key (did you mean `targets`?)",
        ),
        (
            "targets:\n  - target: models/mlp.py:predict\n    static_argnum: 1\n",
            "jxinspect.yaml:3: targets[0].static_argnum: unknown key "
            "(did you mean `static_argnums`?)",
        ),
        (
            "defaults:\n  device: 8\n",
            "jxinspect.yaml:2: defaults.device: unknown key (did you mean `devices`?)",
        ),
        ("defaults:\n  args: f32[3]\n", "jxinspect.yaml:2: defaults.args: unknown key"),
        (
            "defaults:\n  devices: '8'\n",
            "jxinspect.yaml:2: defaults: `devices` must be a positive int, got '8'",
        ),
        (
            "targets:\n  - target: models/mlp.py:predict\n    stage: jitt\n",
            "jxinspect.yaml:3: targets[0]: `stage` must be one of jit, pjit, pmap, shard_map",
        ),
        (
            "targets: models/mlp.py:predict\n",
            "jxinspect.yaml:1: targets: must be a list of mappings, "
            "got str 'models/mlp.py:predict'",
        ),
        ("targets:\n  - args: f32[3]\n", "jxinspect.yaml:2: targets[0]: missing `target`"),
        (
            "targets:\n  - target: models/nope.py:predict\n",
            "jxinspect.yaml:2: targets[0].target: no such file: models/nope.py",
        ),
        (
            "targets:\n  - target: models/mlp.py:predict\n    args: 'f32[3,,2]'\n",
            "jxinspect.yaml:3: targets[0].args: bad spec at column 6",
        ),
        ("ignore: [JX999]\n", "jxinspect.yaml:1: ignore[0]: unknown code `JX999`"),
        (
            "select: 5\n",
            "jxinspect.yaml:1: select: must be a string or a list of strings, got int 5",
        ),
        (
            "severity: {JX102: fatal}\n",
            "jxinspect.yaml:1: severity.JX102: must be one of error, warning, info, got 'fatal'",
        ),
        (
            "budgets: {replicated_bytes: 4 MeB}\n",
            "jxinspect.yaml:1: budgets.replicated_bytes: expected a size such as",
        ),
        (
            "budgets: {bytes_per_devices: 4GiB}\n",
            "jxinspect.yaml:1: budgets.bytes_per_devices: unknown key "
            "(did you mean `bytes_per_device`?)",
        ),
        (
            "fail_on: warn\n",
            "jxinspect.yaml:1: fail_on: must be one of error, warning, info, never, "
            "got 'warn' (did you mean `warning`?)",
        ),
        (
            "paths: [models]\npaths: [src]\n",
            "jxinspect.yaml:2: paths: duplicate key (first on line 1)",
        ),
        ("- models\n", "jxinspect.yaml: <top level>: must be a mapping, got a list"),
    ],
)
def test_config_errors_name_file_line_and_key(project: Path, text: str, expected: str) -> None:
    assert config_error(project, text).startswith(expected)


def test_an_empty_file_is_an_empty_configuration(project: Path) -> None:
    config = load_config(write(project, "jxinspect.yaml", "# nothing yet\n"))
    assert config == Config(path=project / "jxinspect.yaml", root=project.resolve())


def test_the_comparison_rules_codes_are_known(project: Path) -> None:
    """JX403 and JX404 judge two lowerings, not a report: their codes are rules' codes all
    the same (``ignore``, ``severity``)."""
    text = "ignore: [JX404]\nseverity: {JX403: warning}\n"
    config = load_config(write(project, "jxinspect.yaml", text))
    assert config.policy.ignore == ("JX404",)
    assert config.policy.severity == (("JX403", "warning"),)


def test_the_configuration_reference_shows_the_table_of_keys() -> None:
    page = (REPO / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    shown = page.split("```yaml\n# jxinspect.yaml\n", 1)[1].split("```", 1)[0]
    assert shown == config_reference(), "regenerate the docs: python docs/generate.py"


def test_the_readmes_example_reads_back(project: Path) -> None:
    config = load_config(write(project, "jxinspect.yaml", config_reference()))
    args = "{w: f32[784,512]}, f32[32,784], i32[32]"
    assert config == Config(
        path=project / "jxinspect.yaml",
        root=project.resolve(),
        defaults=TargetOptions(devices=8),
        targets=(
            TargetEntry("models/mlp.py:loss", TargetOptions(args=args),
                        PolicyOverride(ignore=("JX105",)), 16),
        ),
        paths=("models",),
        exclude=("models/experimental/*",),
        policy=Policy(("JX1", "JX2", "JX3"), ("JX110",), (("JX201", "error"),),
                      Settings(4 << 20, 16 << 30, 2,
                               forbid_collectives=(ForbiddenCollective("all-to-all"),)),
                      compile=True, why=True),
        baseline="ci/baseline.json",
        fail_on="warning",
        timeout=600.0,
        cache=False,
        keep_workers=600.0,
    )  # fmt: skip


def undocumented(keys: tuple[ConfigKey, ...] | list[ConfigKey]) -> list[str]:
    """The keys whose declaration lacks a help (one line, no full stop) or an example
    (``targets``' is its entry's fields')."""
    return [
        key.name
        for key in keys
        if not key.help
        or key.help.endswith(".")
        or not (key.example or key.kind == tuple[TargetEntry, ...])
    ]


def test_every_key_declares_its_help_and_an_example() -> None:
    assert undocumented(CONFIG_KEYS) == []
    hints = typing.get_type_hints(TargetEntry, include_extras=True)
    groups = [_declared(hints[name])[1] for name in ("options", "override")]
    assert all(meta and meta.description and meta.examples for meta in groups)
    for key in CONFIG_KEYS:
        assert _reader(key.kind) is not None, key.name  # its type has a reader
    assert [k.name for k in CONFIG_KEYS if k.places == ("top", "entry")] == list(POLICY_KEYS)


def test_a_key_declared_without_help_or_example_is_found() -> None:
    @dataclass(frozen=True)
    class Bare:
        quiet: Annotated[bool, Meta(examples=["true"])] = False
        unshown: Annotated[str | None, Meta(description="what it is for")] = None
        told: Annotated[str | None, Meta(description="what it is for", examples=["x"])] = None

    assert undocumented(_keys_of(Bare, "top")) == ["quiet", "unshown"]


def test_the_budgets_help_names_every_budget_and_what_judges_by_it() -> None:
    help = CONFIG_KEYS_BY_NAME["budgets"].help
    assert all(name in help for name in BUDGET_KEYS)
    assert (
        "hbm_fraction (JX307)" in help and "memory_growth (diff-debug --compile and JX305)" in help
    )


def test_a_key_given_no_value_holds_its_default(project: Path) -> None:
    text = "".join(f"{name}:\n" for name in TOP_KEYS)
    config = load_config(write(project, "jxinspect.yaml", text))
    assert config == Config(path=project / "jxinspect.yaml", root=project.resolve())
    message = config_error(project, "targets:\n  - target:\n")
    assert (
        message
        == "jxinspect.yaml:2: targets[0]: missing `target` (e.g. target: models/mlp.py:predict)"
    )


def test_toml_nested_too_deeply_names_the_key_path(project: Path) -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    message = config_error(project, f"[tool.jxinspect]\nexclude = {deep}\n", "pyproject.toml")
    path = "tool.jxinspect.exclude" + "[0]" * (MAX_DEPTH - 1)
    assert message == (
        f"pyproject.toml: {path}: nested more than 64 levels deep; a configuration needs a few"
    )
    deeper = "[" * 1000 + "]" * 1000  # too deep for tomllib itself
    assert config_error(project, f"[tool.jxinspect]\nexclude = {deeper}\n", "pyproject.toml") == (
        "pyproject.toml: nested more than 64 levels deep; a configuration needs a few"
    )


def test_parse_bytes() -> None:
    assert parse_bytes(4096) == 4096 and parse_bytes("64 MiB") == 64 << 20
    assert parse_bytes("1.5GB") == 1_500_000_000 and parse_bytes("2kib") == 2048
    for bad in ("lots", "-1 MiB", True, 1.5, "4 MeB"):
        with pytest.raises(ValueError):
            parse_bytes(bad)


def test_every_budget_is_a_field_of_settings_with_a_kind_that_reads_it() -> None:
    declared = [f for f in fields(Settings) if "budget" in f.metadata]
    assert [f.name for f in declared] == [f.name for f in fields(Settings)] == list(BUDGET_KEYS)
    assert {f.metadata["budget"] for f in declared} == set(typing.get_args(BudgetKind))
    assert OPTIONAL_BUDGETS == (
        "bytes_per_device", "max_compiles", "temporaries_per_device",
        "collective_bytes_per_step", "peak_per_device", "flops_per_device",
    )  # fmt: skip
    assert parse_budget("max_compiles", 2) == 2 and parse_budget("max_compiles", None) is None
    assert parse_budget("memory_growth", "10%") == 0.1
    assert parse_budget("forbid_collectives", ["All-Gather"]) == (
        ForbiddenCollective("all-gather"),
    )
    assert parse_budget("forbid_collectives", ["all-gather > 1 GiB", "all-to-all>0"]) == (
        ForbiddenCollective("all-gather", 1 << 30),
        ForbiddenCollective("all-to-all", 0),
    )
    assert parse_budget("replicated_bytes", "1 KiB") == 1024
    for name, bad in (("max_compiles", 0), ("replicated_bytes", None), ("memory_growth", -1)):
        with pytest.raises(ValueError):
            parse_budget(name, bad)


def test_cost_budgets_read_at_both_levels(project: Path) -> None:
    text = (
        "budgets: {temporaries_per_device: 2MiB, collective_bytes_per_step: 4096,\n"
        "          forbid_collectives: [all-to-all, All-Gather], memory_growth: 25%}\n"
        "targets:\n"
        "  - target: mod:f\n"
        "    budgets: {temporaries_per_device: null, forbid_collectives: [], memory_growth: 0.5}\n"
    )
    config = load_config(write(project, "jxinspect.yaml", text))
    assert config.policy.settings == Settings(
        temporaries_per_device=2 << 20, collective_bytes_per_step=4096,
        forbid_collectives=(ForbiddenCollective("all-to-all"), ForbiddenCollective("all-gather")),
        memory_growth=0.25,
    )  # fmt: skip
    assert config.targets[0].override.apply(config.policy).settings == Settings(
        collective_bytes_per_step=4096, memory_growth=0.5
    )


@pytest.mark.parametrize(
    ("budgets", "message"),
    [
        ("{forbid_collectives: all-to-all}",
         "budgets.forbid_collectives: expected a list of collective kinds (all-reduce, "
         "all-gather, reduce-scatter, all-to-all, collective-permute, collective-broadcast), "
         "each with a size it may move if you like ('all-gather > 1 GiB'), got 'all-to-all'"),
        ("{forbid_collectives: ['all-gather > lots']}",
         "budgets.forbid_collectives: 'all-gather > lots': expected a size such as 4096, "
         "'64 MiB' or '16GiB' (units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB), "
         "got ['all-gather > lots']"),
        ("{forbid_collectives: [all-to-al]}",
         "budgets.forbid_collectives: 'all-to-al' is no collective kind (all-reduce, "
         "all-gather, reduce-scatter, all-to-all, collective-permute, collective-broadcast), "
         "got ['all-to-al']"),
        ("{memory_growth: lots}",
         "budgets.memory_growth: expected a fraction such as '10%' or 0.1 (at least 0), "
         "got 'lots'"),
        ("{memory_growth: null}",
         "budgets.memory_growth: expected a fraction such as '10%' or 0.1 (at least 0), "
         "got None"),
        ("{temporaries_per_device: -3}",
         "budgets.temporaries_per_device: a size cannot be negative, got -3"),
    ],
)  # fmt: skip
def test_cost_budgets_refused(project: Path, budgets: str, message: str) -> None:
    assert config_error(project, f"budgets: {budgets}\n") == f"jxinspect.yaml:1: {message}"


def test_policy_select_ignore_and_severity_prefixes() -> None:
    policy = Policy(select=("JX1", "JX201"), ignore=("JX105",), severity=(("JX2", "error"),))
    assert [c for c in ("JX101", "JX105", "JX201", "JX202") if policy.enabled(c)] == [
        "JX101",
        "JX201",
    ]
    assert policy.severity_of("JX201", "warning") == "error"
    assert Policy().enabled("JX302") and Policy().severity_of("JX102", "warning") == "warning"


# ---- declarations read from source -------------------------------------------------------


def test_static_declaration_folds_module_constants(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "m.py",
        """
        import jax
        _P = "{w: f32[3,2]}"
        _SPECS = ("P('data')",) * 2
        N = 4
        JXINSPECT = {
            "f": {"args": _P + ", f32[8,3]", "devices": N * 2, "mesh": f"data={N}"},
            "g": dict(args=f"{_P}", in_specs=", ".join(["P()"]), stage="jit"),
            "h": {"args": "f32[3]", **{"donate_argnums": -1}},
        }

        @jax.jit
        def f(params, x):
            return x

        class Model:
            def apply(self, x):
                return x
    """,
    )
    declaration = static_declaration(path)
    assert declaration is not None and declaration.functions == ("f", "g", "h")
    assert declaration.entries is not None
    assert declaration.entries["f"] == {
        "args": "{w: f32[3,2]}, f32[8,3]",
        "devices": 8,
        "mesh": "data=4",
    }
    assert declaration.entries["h"] == {"args": "f32[3]", "donate_argnums": -1}
    assert declaration.entries["g"] is None  # str.join is not folded: read at import time
    tree = parse_module(path)
    assert definition_line(tree, "f") == 11 and definition_line(tree, "Model.apply") == 16
    assert definition_line(tree, "missing") is None


def test_a_declaration_that_needs_an_import_gives_its_names_or_says_so(tmp_path: Path) -> None:
    names_only = write(tmp_path, "a.py", 'from x import SPEC\nJXINSPECT = {"f": {"args": SPEC}}\n')
    declaration = static_declaration(names_only)
    assert declaration is not None and declaration.functions == ("f",)
    assert declaration.entries == {"f": None}
    built = write(tmp_path, "b.py", "JXINSPECT = make()\n")
    with pytest.raises(UsageError, match="b.py:1: JXINSPECT is not plain data"):
        static_declaration(built)
    assert static_declaration(write(tmp_path, "c.py", "x = 1\n")) is None
    with pytest.raises(UserCodeError, match="syntax error in .*d.py:1"):
        static_declaration(write(tmp_path, "d.py", "JXINSPECT = {\n"))
    huge = write(tmp_path, "e.py", 'S = "x" * 10**9\nJXINSPECT = {"f": {"args": S}}\n')
    assert static_declaration(huge) == static_declaration(huge)  # folds nothing huge


def test_a_name_a_function_may_rebind_with_global_is_not_folded(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "m.py",
        """
        N = 4
        M = 2

        def grow():
            for _ in range(2):
                try:
                    pass
                except ValueError:
                    global N
                    N = 8

        class Config:
            def shrink(self):
                return lambda: M

        JXINSPECT = {"f": {"devices": N}, "g": {"devices": M}}
    """,
    )
    declaration = static_declaration(path)
    assert declaration is not None and declaration.entries is not None
    assert declaration.entries["f"] is None  # grow() may change N: read at import time
    assert declaration.entries["g"] == {"devices": 2}


def test_a_policy_applies_select_ignore_and_severities_once() -> None:
    """The one place both ``pipeline.judge`` and lint's reading of a worker's report
    apply the policy; a lint finding stays one."""
    policy = Policy(select=("JX1",), ignore=("JX105",),
                    severity=(("JX1", "info"), ("JX102", "error")))  # fmt: skip
    found = (Finding("JX102", "warning", "a"), Finding("JX105", "warning", "b"),
             Finding("JX103", "warning", "c"), Finding("JX201", "error", "d"))  # fmt: skip
    assert policy.apply(found) == (
        replace(found[0], severity="error"), replace(found[2], severity="info"),
    )  # fmt: skip
    (applied,) = policy.apply((LintFinding.of(found[0], baselined=True),))
    assert isinstance(applied, LintFinding) and applied.baselined and applied.severity == "error"
