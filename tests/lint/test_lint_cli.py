"""``jxinspect lint`` end to end: the installed command on a copy of ``sample_repo/``.

The sample repository has one deliberate regression (``models/train.py``: a 31 MiB
embedding table left replicated, JX201, an error under its jxinspect.yaml), a pmap step
and clean models. Each test copies it, so runs may write and edit files.

What else the lint finds depends on what the installed JAX release emits (pmap is built
on shard_map from 0.10 and leaks its internal axis name, JX203; the pmap of 0.5-0.9
lowers with no argument names and empty result paths, JX101/JX103, or (0.8, 0.9) with
flat result paths, JX104; 0.4 leaves some
nested jaxprs without debug info, JX107; ...). Those findings are not hard-coded: the
fixture ``expected`` stages every target with raw JAX in a subprocess and derives them
from what that release's own jaxprs and lowered ``@main`` carry.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from helpers import JAX_RELEASE, REPO, CliResult, error_line, run_python

from jxinspect.core.survey import leaf_shape, nested_shape
from jxinspect.rules import SURVEYED, advice

SAMPLE_REPO = REPO / "sample_repo"
SARIF_SCHEMA = REPO / ".." / "shared" / "schemas" / "sarif-schema-2.1.0.json"
TARGETS = [
    "models/attention.py:attention",
    "models/legacy.py:step",
    "models/mlp.py:loss",
    "models/mlp.py:predict",
    "models/train.py:train_step",
]
REGRESSION = ("models/train.py:train_step", "JX201", "error", "state['params']['embed']")
REGRESSION_MESSAGE = (
    "argument state['params']['embed'] (f32[32000,256], 31.2 MiB) is replicated on all 8 "
    "devices (threshold 4.0 MiB)"
)
IGNORED = {"models/legacy.py:step": {"JX102"}}  # as jxinspect.yaml says; JX110 everywhere

Run = Callable[..., CliResult]


def copy_repo(folder: Path) -> Path:
    return Path(
        shutil.copytree(
            SAMPLE_REPO, folder / "repo", ignore=shutil.ignore_patterns("__pycache__", "*.json")
        )
    )


def findings(report: dict[str, Any], new_only: bool = True) -> list[tuple[Any, ...]]:
    return [
        (target["target"], f["code"], f["severity"], f["path"])
        for target in report["targets"]
        for f in target["findings"]
        if not (new_only and f["baselined"])
    ]


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy for the tests that only read it."""
    return copy_repo(tmp_path_factory.mktemp("lint"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return copy_repo(tmp_path)


@pytest.fixture(scope="module")
def lint_json(shared_repo: Path, run_cli: Run) -> tuple[CliResult, dict[str, Any]]:
    result = run_cli("lint", "--format", "json", cwd=shared_repo)
    return result, json.loads(result.stdout)


# ---- what raw JAX emits for each target ---------------------------------------------------

# Run in sample_repo/ (8 CPU devices): each target staged as jxinspect.yaml and the
# modules' JXINSPECT declare it, and what its jaxpr and lowered @main carry, as JSON.
ORACLE = r"""
import inspect, json, os, re, sys
sys.dont_write_bytecode = True
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from models import attention, legacy, mlp, train

def sds(shape, dtype=jnp.float32, sharding=None):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)

mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))
S = lambda *spec: NamedSharding(mesh, P(*spec))
mlp_params = {"w1": sds((784, 512)), "b1": sds((512,)), "w2": sds((512, 10)), "b2": sds((10,))}
state_specs = {"params": {"embed": S(), "w": S(None, "model")}, "step": S()}
state = {"params": {"embed": sds((32000, 256)), "w": sds((256, 256))},
         "step": sds((), jnp.int32)}
wa = sds((256, 8, 32), sharding=S(None, "model", None))
att_args = ({"wq": wa, "wk": wa, "wv": wa, "wo": sds((8, 32, 256), sharding=S("model"))},
            sds((16, 64, 256), sharding=S("data")))
TARGETS = {  # as jxinspect stages them: (function, staged, example arguments)
    "models/attention.py:attention": (attention.attention, jax.jit(
        attention.attention, out_shardings=S("data", None, None)), att_args),
    "models/legacy.py:step": (legacy.step, jax.pmap(legacy.step),
                              ({"w": sds((8, 64, 64))}, sds((8, 16, 64)))),
    "models/mlp.py:loss": (mlp.loss, jax.jit(mlp.loss),
                           (mlp_params, sds((32, 784)), sds((32,), jnp.int32))),
    "models/mlp.py:predict": (mlp.predict, jax.jit(mlp.predict), (mlp_params, sds((32, 784)))),
    "models/train.py:train_step": (train.train_step, jax.jit(
        train.train_step, in_shardings=(state_specs, S("data", None)),
        out_shardings=(state_specs, S()), donate_argnums=0), (state, sds((16, 32), jnp.int32))),
}

def nested(jaxpr, prefix=""):
    for i, eqn in enumerate(jaxpr.eqns):
        for key, value in eqn.params.items():
            for j, sub in enumerate(value if isinstance(value, (tuple, list)) else [value]):
                sub = getattr(sub, "jaxpr", sub)
                if not hasattr(sub, "eqns"):
                    continue
                label = key if not isinstance(value, (tuple, list)) else f"{key}[{j}]"
                where = f"{prefix}{i}:{eqn.primitive.name}.{label}"
                yield where, eqn.primitive.name, getattr(sub, "debug_info", None) is None
                yield from nested(sub, where + "/")

def program(jaxpr):  # the older pmap's xla_pmap body is the program JAX lowers, not nested
    if len(jaxpr.eqns) == 1 and jaxpr.eqns[0].primitive.name == "xla_pmap":
        body = jaxpr.eqns[0].params["call_jaxpr"]
        return getattr(body, "jaxpr", body)
    return jaxpr

def keystr(path):
    return jax.tree_util.keystr(tuple(path))

facts = {}
for target, (fn, staged, args) in TARGETS.items():
    names = list(inspect.signature(fn).parameters)
    arg_paths = [names[p[0].idx] + keystr(p[1:])
                 for p, _ in jax.tree_util.tree_flatten_with_path(args)[0]]
    result_paths = ["result" + keystr(p) for p, _ in
                    jax.tree_util.tree_flatten_with_path(jax.eval_shape(fn, *args))[0]]
    if target.startswith("models/legacy.py"):  # pmap maps axis 0 away per device
        result_paths = ["result" + keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(
            jax.eval_shape(staged, *args))[0]]
    module = staged.lower(*args).compiler_ir("stablehlo")
    text = module.operation.get_asm(enable_debug_info=True)
    (head,) = [line for line in text.splitlines() if "func.func public @main(" in line]
    (main,) = [op for op in module.body.operations
               if str(op.attributes["sym_name"]) == '"main"']
    def attrs(name, n):
        return list(main.attributes[name]) if name in main.attributes else [{}] * n
    arg_attrs, res_attrs = attrs("arg_attrs", len(arg_paths)), attrs("res_attrs", len(result_paths))
    sharded = lambda d: "sdy.sharding" in d or "mhlo.sharding" in d
    info = [d["jax.result_info"].value if "jax.result_info" in d else "" for d in res_attrs]
    facts[target] = {
        "line": inspect.getsourcelines(fn)[1],
        "arg_paths": arg_paths,
        "result_paths": result_paths,
        "arg_locs": re.findall(r'%arg\d+: .*?loc\((unknown|".*?")\)', head.split(") -> (")[0]),
        "result_info": info,
        "args_sharded": [sharded(d) for d in arg_attrs],
        "results_sharded": [sharded(d) for d in res_attrs],
        "internal_axes": sorted(set(re.findall(r'"(_\w*)"\s*=\s*\d+', text))),
        "nested_missing": [[w, p] for w, p, missing in nested(program(jax.make_jaxpr(
            staged if target.startswith("models/legacy.py") else fn)(*args).jaxpr)) if missing],
    }
print(json.dumps(facts))
"""


@dataclass(frozen=True)
class Expected:
    target: str
    code: str
    severity: str
    path: str | None
    message: str
    line: int

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.target, self.code, self.severity, self.path)

    @property
    def file(self) -> str:
        return self.target.partition(":")[0]


PMAP_TARGET = "models/legacy.py:step"
"""The sample repository's pmap target (staged with ``jax.pmap`` by the oracle too)."""


def _advice(code: str, shape: str) -> str:
    """The "fixed in" words the shipped surveys add to such a finding on this release
    (their reading is tested in ``tests/survey``)."""
    link = SURVEYED[code]
    fixed = advice.fixed_in(shape, JAX_RELEASE, link.fixed_when)
    return f" (fixed in JAX {fixed}, this is {JAX_RELEASE})" if fixed else ""


def derive(target: str, facts: dict[str, Any]) -> list[Expected]:
    """The findings the raw facts of one target call for (JX201 is added by the caller)."""
    found: list[tuple[str, str | None, str]] = []

    def pmap_advice(code: str, side: Literal["args", "results"]) -> str:
        """A pmap's lost names are advised from the surveys' pmap program."""
        return _advice(code, leaf_shape("pmap", side)) if target == PMAP_TARGET else ""

    for path, loc in zip(facts["arg_paths"], facts["arg_locs"], strict=True):
        if loc == "unknown":
            message = f"argument {path} carries no name"
            found.append(("JX101", path, message + pmap_advice("JX101", "args")))
    for path, info in zip(facts["result_paths"], facts["result_info"], strict=True):
        if info in (path, path.removeprefix("result")):  # 0.4 has no `result` prefix
            continue
        if not info:
            message = f"result {path} carries no path"
            found.append(("JX103", path, message + pmap_advice("JX103", "results")))
        else:
            message = f"result {path} carries the path {info!r}"
            found.append(("JX104", path, message + pmap_advice("JX104", "results")))
    for where, primitive in facts["nested_missing"]:
        message = f"nested jaxpr {where} ({primitive}) has no debug info"
        found.append(("JX107", None, message + _advice("JX107", nested_shape(primitive))))
    if any(facts["args_sharded"]):
        for path, sharded in zip(facts["result_paths"], facts["results_sharded"], strict=True):
            if not sharded:
                found.append(
                    (
                        "JX202",
                        path,
                        f"output {path} has no declared sharding although "
                        "the inputs declare theirs: the compiler picks its layout",
                    )
                )
    for name in facts["internal_axes"]:
        hint = " (pmap without axis_name)" if name == "_internal_pmap_axis_name" else ""
        found.append(("JX203", None, f"internal axis name {name!r} leaks into the program{hint}"))
    return [
        Expected(target, code, "warning", path, message, facts["line"])
        for code, path, message in found
        if code not in IGNORED.get(target, ())
    ]


@pytest.fixture(scope="module")
def expected(shared_repo: Path) -> list[Expected]:
    """Every finding `jxinspect lint` must report in the sample repository with this JAX,
    in the report's order (by target, then code)."""
    raw = run_python(ORACLE, cwd=shared_repo, warm=True)
    assert raw.returncode == 0, raw.describe()
    facts = json.loads(raw.stdout)
    assert sorted(facts) == TARGETS
    found = [e for target in TARGETS for e in derive(target, facts[target])]
    found.append(Expected(*REGRESSION, REGRESSION_MESSAGE, facts[REGRESSION[0]]["line"]))
    return sorted(found, key=lambda e: (e.target, e.code))


def keys(expected: list[Expected]) -> list[tuple[Any, ...]]:
    return [e.key for e in expected]


def summary(expected: list[Expected], targets: int = 5, failed: int = 0) -> str:
    """The last line of the text and github formats."""
    head = f"{targets} targets" + (f" ({failed} failed)" if failed else "")
    if not expected:
        return f"{head}; no new findings"
    counts = [(n, s) for s in ("error", "warning", "info")
              if (n := sum(e.severity == s for e in expected))]  # fmt: skip
    plural = "s" if len(expected) != 1 else ""
    return f"{head}; {len(expected)} new finding{plural}: " + ", ".join(
        f"{n} {s}{'s' if n != 1 else ''}" for n, s in counts
    )


def annotation(e: Expected) -> str:
    """One line of --format github."""
    return f"::{e.severity} file={e.file},line={e.line},title={e.code}::{e.target}: {e.message}"


def located(e: Expected) -> str:
    """``file:line: CODE severity message``, as the text format (padded) and JUnit write it."""
    return f"{e.file}:{e.line}: {e.code} {e.severity} {e.message}"


# ---- formats -----------------------------------------------------------------------------


def test_text_groups_by_target_and_ends_with_a_summary(
    shared_repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    result = run_cli("lint", cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    assert result.stderr == "", "no progress bar or diagnostics off a terminal"
    lines = result.stdout.splitlines()
    assert (
        "  models/train.py:12: JX201 error   argument state['params']['embed'] (f32[32000,256], "
        "31.2 MiB) is replicated on all 8 devices (threshold 4.0 MiB)"
    ) in lines
    want = []
    for target in TARGETS:
        rank = {"error": 0, "warning": 1, "info": 2}  # grouped: the most severe first
        mine = sorted((e for e in expected if e.target == target), key=lambda e: rank[e.severity])
        count = f"{len(mine)} finding{'s' if len(mine) != 1 else ''}" if mine else "ok"
        want.append(f"{target}: {count}")
        want += [f"  {e.file}:{e.line}: {e.code} {e.severity:<7} {e.message}" for e in mine]
    assert lines == [*want, "", summary(expected)]


def test_json_lists_every_target_with_configured_severities(
    lint_json: tuple[CliResult, dict[str, Any]], expected: list[Expected]
) -> None:
    result, report = lint_json
    assert result.returncode == 1, result.describe()
    assert report["schema"] == "jxinspect.lint/1" and report["config"] == "jxinspect.yaml"
    assert [t["target"] for t in report["targets"]] == TARGETS
    assert {t["reached"] for t in report["targets"]} == {"lowered"}
    # JX201 is an error by the config's severity; legacy's JX102 and JX110 are ignored
    assert findings(report) == keys(expected)
    messages = [(t["target"], f["message"]) for t in report["targets"] for f in t["findings"]]
    assert messages == [(e.target, e.message) for e in expected]
    assert report["summary"] == {
        "targets": 5,
        "failed": 0,
        "interrupted": False,
        "baselined": 0,
        "gone": 0,
        "new": {s: sum(e.severity == s for e in expected) for s in ("error", "warning", "info")},
    }


def test_sarif_is_valid_located_and_byte_identical_across_runs(
    shared_repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    first, second = shared_repo / "first.sarif", shared_repo / "second.sarif"
    for path in (first, second):
        result = run_cli("lint", "--format", "sarif", "-o", path, cwd=shared_repo)
        assert result.returncode == 1 and result.stdout == "", result.describe()
    assert first.read_bytes() == second.read_bytes()
    log = json.loads(first.read_text(encoding="utf-8"))
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"the SARIF 2.1.0 schema is not at {SARIF_SCHEMA} (../shared is absent)")
    from jsonschema import Draft7Validator

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(Draft7Validator(schema).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rules[r["ruleIndex"]]["id"] for r in run["results"]] == [e.code for e in expected]
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in rules}["JX201"] == "error"
    regression = run["results"][keys(expected).index(REGRESSION)]
    assert regression["level"] == "error" and regression["baselineState"] == "new"
    location = regression["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "models/train.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 12},
    }
    assert len(regression["partialFingerprints"]["jxinspect/v1"]) == 32
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_github_annotations(shared_repo: Path, run_cli: Run, expected: list[Expected]) -> None:
    result = run_cli("lint", "--format", "github", cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    lines = result.stdout.splitlines()
    assert (
        "::error file=models/train.py,line=12,title=JX201::models/train.py:train_step: argument "
        "state['params']['embed'] (f32[32000,256], 31.2 MiB) is replicated on all 8 devices "
        "(threshold 4.0 MiB)"
    ) in lines
    assert lines == [*map(annotation, expected), summary(expected)]


def test_junit_has_one_case_per_target(
    shared_repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    out = shared_repo / "report.xml"
    result = run_cli("lint", "--format", "junit", "--output", out, cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    suites = ET.parse(out).getroot()
    assert suites.attrib == {"name": "jxinspect lint", "tests": "5", "failures": "1", "errors": "0"}
    cases = {case.get("name"): case for case in suites.iter("testcase")}
    assert sorted(cases) == TARGETS
    failure = cases["models/train.py:train_step"].find("failure")
    assert failure is not None and failure.get("type") == "JX201"
    assert failure.get("message") == "1 new finding at or above error: JX201"
    for target in TARGETS:  # a warning does not fail at --fail-on error
        case, mine = cases[target], [e for e in expected if e.target == target]
        assert (case.find("failure") is None) == (target != REGRESSION[0])
        warnings = [located(e) for e in mine if e.severity != "error"]
        assert case.findtext("system-out") == ("\n".join(warnings) if warnings else None)


def test_jobs_give_the_same_result(
    shared_repo: Path, run_cli: Run, lint_json: tuple[CliResult, dict[str, Any]]
) -> None:
    result = run_cli("lint", "--format", "json", "--jobs", "2", cwd=shared_repo)
    assert result.returncode == 1, result.describe()
    assert result.stdout == lint_json[0].stdout


# ---- baseline -----------------------------------------------------------------------------


def test_baseline_write_reuse_new_and_gone(
    repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    written = run_cli("lint", "--write-baseline", cwd=repo)
    assert written.returncode == 0, written.describe()
    n = len(expected)
    plural = "s" if n != 1 else ""
    assert written.stderr == f"wrote {n} finding{plural} to the baseline jxinspect-baseline.json\n"
    baseline = json.loads((repo / "jxinspect-baseline.json").read_text(encoding="utf-8"))
    counted: dict[tuple[str, str, str | None], int] = {}
    for e in expected:
        counted[e.target, e.code, e.path] = counted.get((e.target, e.code, e.path), 0) + 1
    assert {"target": REGRESSION[0], "code": "JX201", "path": REGRESSION[3], "count": 1} in (
        baseline["findings"]
    )
    assert baseline == {
        "schema": "jxinspect.baseline/1",
        "findings": [
            {"target": target, "code": code, "path": path, "count": count}
            for (target, code, path), count in counted.items()
        ],
        "costs": [],  # nothing compiled: sample_repo's configuration does not say compile
    }

    again = run_cli("lint", "--fail-on", "warning", cwd=repo)
    assert again.returncode == 0, again.describe()
    assert again.stdout.splitlines()[-1] == f"5 targets; no new findings; {n} baselined"

    # Fix the regression, add lines above the pmap step (the baseline has no line numbers)
    # and introduce a new problem: attention's output sharding is no longer declared.
    train = repo / "models" / "train.py"
    train.write_text(train.read_text().replace("'embed': P(),", "'embed': P('model', None),"))
    legacy = repo / "models" / "legacy.py"
    legacy.write_text("# moved\n\n\n" + legacy.read_text())
    attention = repo / "models" / "attention.py"
    text = attention.read_text()
    assert '"out_specs": "P(\'data\', None, None)",\n' in text
    attention.write_text(text.replace('"out_specs": "P(\'data\', None, None)",\n', ""))
    later = run_cli("lint", "--format", "json", "--fail-on", "warning", cwd=repo)
    assert later.returncode == 1, later.describe()
    report = json.loads(later.stdout)
    assert findings(report) == [("models/attention.py:attention", "JX202", "warning", "result")]
    assert findings(report, new_only=False)[1:] == [k for k in keys(expected) if k != REGRESSION]
    assert report["gone"] == [
        {
            "target": "models/train.py:train_step",
            "code": "JX201",
            "path": "state['params']['embed']",
            "count": 1,
        }
    ]


# ---- select / ignore / severity / exit codes --------------------------------------------


def test_select_ignore_and_fail_on_from_the_command_line(
    shared_repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    result = run_cli(
        "lint",
        "--select",
        "JX2",
        "--ignore",
        "jx201",
        "--fail-on",
        "warning",
        "--format",
        "json",
        cwd=shared_repo,
    )
    selected = [e.key for e in expected if e.code.startswith("JX2") and e.code != "JX201"]
    assert result.returncode == (1 if selected else 0), result.describe()  # all are warnings
    assert findings(json.loads(result.stdout)) == selected


def test_config_severity_override_and_exit_zero(
    repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    config = repo / "jxinspect.yaml"
    config.write_text(config.read_text().replace("JX201: error", "JX201: info"))
    clean = run_cli("lint", cwd=repo)
    assert clean.returncode == 0, clean.describe()
    assert "JX201 info" in clean.stdout
    # Raise another rule this JAX triggers (JX203 on 0.10) to an error, JX201 back to a warning
    raised = next((e.code for e in expected if e.code != "JX201"), "JX201")
    config.write_text(config.read_text().replace("JX201: info", f"{raised}: error"))
    zero = run_cli("lint", "--exit-zero", cwd=repo)
    assert zero.returncode == 0, zero.describe()
    assert f"{raised} error" in zero.stdout and "no new findings" not in zero.stdout


def test_a_failing_target_is_reported_and_the_others_still_run(
    repo: Path, run_cli: Run, expected: list[Expected]
) -> None:
    (repo / "models" / "broken.py").write_text(
        'raise RuntimeError("config server unreachable")\nJXINSPECT = {"f": {"args": "f32[3]"}}\n'
    )
    (repo / "models" / "shapes.py").write_text(
        "import jax.numpy as jnp\n\ndef bad(x):\n    return jnp.dot(x, jnp.ones((3, 5)))\n\n"
        'JXINSPECT = {"bad": {"args": "f32[4,4]"}}\n'
    )
    result = run_cli("lint", "--format", "json", cwd=repo)
    assert result.returncode == 3, result.describe()
    report = json.loads(result.stdout)
    failed = {t["target"]: t for t in report["targets"] if t["error"]}
    assert sorted(failed) == ["models/broken.py:f", "models/shapes.py:bad"]
    assert failed["models/broken.py:f"]["error"] == (
        "importing models/broken.py failed: RuntimeError: config server unreachable "
        "(at models/broken.py:1 in <module>)"
    )
    assert failed["models/shapes.py:bad"]["error"].startswith("tracing failed: TypeError: ")
    assert failed["models/shapes.py:bad"]["line"] == 3
    assert findings(report) == keys(expected)  # the other targets still ran
    # A target that ends its worker process takes only itself down.
    (repo / "models" / "dies.py").write_text(
        'import os\n\ndef f(x):\n    os._exit(7)\n\nJXINSPECT = {"f": {"args": "f32[3]"}}\n'
    )
    github = run_cli("lint", "--format", "github", "--jobs", "2", cwd=repo)
    assert github.returncode == 3, github.describe()
    failures = [
        "::error file=models/broken.py,title=jxinspect%3A target failed::models/broken.py:f: ",
        "::error file=models/dies.py,line=3,title=jxinspect%3A target failed::models/dies.py:f: ",
        "::error file=models/shapes.py,line=3,title=jxinspect%3A target failed::"
        "models/shapes.py:bad: tracing failed: TypeError: ",
    ]
    # failed targets first, then the findings (per file and rule; none repeats here)
    want = failures + [annotation(e) for e in expected]
    lines = github.stdout.splitlines()
    assert len(lines) == len(want) + 1, github.describe()
    for line, start in zip(lines, want, strict=False):
        assert line.startswith(start), github.describe()
    assert lines[0] == (
        "::error file=models/broken.py,title=jxinspect%3A target failed::models/broken.py:f: "
        "importing models/broken.py failed: RuntimeError: config server unreachable "
        "(at models/broken.py:1 in <module>)"
    )
    assert lines[1] == (
        "::error file=models/dies.py,line=3,title=jxinspect%3A target failed::models/dies.py:f: "
        "the process staging it ended abruptly (exit code 7: os._exit, or a crash in native code)"
    )
    assert lines[-2] == annotation(expected[-1])
    assert lines[-1] == summary(expected, targets=8, failed=3)


# ---- configuration and usage errors (exit 2, one line) ---------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("ignore: [JX110]", "ignore: [JX110"),
            "error: jxinspect.yaml:12: YAML syntax error: expected ',' or ']', but got '<scalar>' "
            "(column 1), while parsing a flow sequence started on line 11",
        ),
        (
            (
                "  - target: models/legacy.py:step\n",
                "  - target: models/legacy.py:step\n    static_argnum: 1\n",
            ),
            "error: jxinspect.yaml:16: targets[1].static_argnum: unknown key "
            "(did you mean `static_argnums`?)",
        ),
        (
            ("devices: 8 ", "devices: eight "),
            "error: jxinspect.yaml:3: defaults: `devices` must be a positive int, got 'eight'",
        ),
        (
            ("models/mlp.py:loss", "models/mlps.py:loss"),
            "error: jxinspect.yaml:13: targets[0].target: no such file: models/mlps.py "
            "(relative to the folder of jxinspect.yaml)",
        ),
    ],
)
def test_config_errors(repo: Path, run_cli: Run, edit: tuple[str, str], expected: str) -> None:
    config = repo / "jxinspect.yaml"
    text = config.read_text()
    assert edit[0] in text
    config.write_text(text.replace(edit[0], edit[1], 1))
    result = run_cli("lint", cwd=repo)
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith(expected), result.describe()
    assert result.stdout == ""


def test_pyproject_configuration_and_no_targets(
    tmp_path: Path, run_cli: Run, expected: list[Expected]
) -> None:
    repo = copy_repo(tmp_path)
    (repo / "jxinspect.yaml").unlink()
    (repo / "pyproject.toml").write_text(
        '[tool.jxinspect]\npaths = ["models"]\nignore = ["JX110", "JX102"]\n'
        "[tool.jxinspect.defaults]\ndevices = 8\nexplicit = false\n"
    )
    result = run_cli("lint", "--format", "json", cwd=repo / "models")  # found from below
    assert result.returncode == 0, result.describe()  # JX201 is a warning by default
    report = json.loads(result.stdout)
    assert [t["target"] for t in report["targets"]] == [t for t in TARGETS if "loss" not in t]
    assert findings(report) == [  # JX201 is a warning by default
        (e.target, e.code, "warning", e.path) for e in expected if e.target != "models/mlp.py:loss"
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".git").mkdir()
    nothing = run_cli("lint", cwd=empty)
    assert nothing.returncode == 2
    assert "no targets: nothing in the configuration or" in error_line(nothing)


def test_explain_a_lint_rule(run_cli: Run) -> None:
    result = run_cli("explain", "JX201")
    assert result.returncode == 0
    assert result.stdout.startswith(
        "JX201 (warning): large argument left fully replicated on a multi-device mesh\n"
    )


DECLARED_POLICY = """
def f(x, unused):
    return x * 2


JXINSPECT = {"f": {"args": "f32[4], f32[4]", "compile": True, "severity": {"JX105": "error"},
                   "budgets": {"bytes_per_device": 16}}}
"""


def test_a_declaration_takes_the_per_target_keys_a_config_entry_takes(
    tmp_path: Path, run_cli: Run
) -> None:
    """``compile``, ``severity``, ``budgets`` (and ``select``, ``ignore``) in a module's
    ``JXINSPECT`` entry, as in a ``jxinspect.yaml`` target: the target is compiled,
    judged with them, and a misspelled key is named with the one it meant."""
    (tmp_path / "m.py").write_text(DECLARED_POLICY, encoding="utf-8")
    result = run_cli("lint", "m.py", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.describe()
    (target,) = json.loads(result.stdout)["targets"]
    assert target["reached"] == "compiled"
    assert {(f["code"], f["severity"]) for f in target["findings"]} >= {
        ("JX105", "error"), ("JX302", "error")}  # fmt: skip
    (tmp_path / "m.py").write_text(DECLARED_POLICY.replace('"compile"', '"compil"'), "utf-8")
    misspelled = run_cli("lint", "m.py", cwd=tmp_path)
    assert misspelled.returncode == 3, misspelled.describe()
    assert "unknown key `compil` (did you mean `compile`?)" in misspelled.stdout


MADE = """
import jax.numpy as jnp


def step(x):
    return x * 2


def make():
    return (jnp.ones((4, 8)),)
"""


def test_a_configurations_paths_are_read_from_its_folder_wherever_lint_runs(
    tmp_path: Path, run_cli: Run
) -> None:
    """A target and its ``args_from`` in a configuration are files in its folder: lint
    from the configuration's folder and from above it stage the same function with the
    same inputs; an ``args_from`` that names no file there is one line, exit 2."""
    (tmp_path / ".git").mkdir()
    ci = tmp_path / "ci"
    ci.mkdir()
    (ci / "model.py").write_text(MADE, encoding="utf-8")
    config = "targets:\n  - target: model.py:step\n    args_from: model.py:make\n"
    (ci / "lint.yaml").write_text(config, encoding="utf-8")
    # from above first: the second run may take the first's cached report
    above = run_cli("lint", "--config", "ci/lint.yaml", "--format", "json", cwd=tmp_path)
    inside = run_cli("lint", "--config", "lint.yaml", "--format", "json", cwd=ci)
    for result in (above, inside):
        assert result.returncode == 0, result.describe()
    said = [json.loads(r.stdout)["targets"] for r in (above, inside)]
    assert said[0] == said[1], said
    (target,) = said[0]
    assert (target["target"], target["reached"], target["error"]) == (
        "model.py:step", "lowered", None)  # fmt: skip
    (ci / "lint.yaml").write_text(config.replace("model.py:make", "inputs.py:make"), "utf-8")
    missing = run_cli("lint", "--config", "ci/lint.yaml", cwd=tmp_path)
    assert missing.returncode == 2, missing.describe()
    assert error_line(missing) == (
        "error: ci/lint.yaml:3: targets[0].args_from: no such file: inputs.py (relative to "
        "the folder of ci/lint.yaml); check the path, or give the file's full path"
    ), missing.describe()
