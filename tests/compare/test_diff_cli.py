"""End-to-end tests of `jxinspect diff-debug` through the installed command: every sample
pair, every input kind (.py, target, JSON report, StableHLO text, mixes), files with the
same module name, the output formats, and bad inputs.

Each run is a subprocess (about a second); keep their number modest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, CliResult, error_line, run_python
from test_diff import assert_valid_diff

from jxinspect.rules import RULES_BY_CODE

DIFF = "sample_programs/diff"
Run = Callable[..., CliResult]


def rows(stdout: str) -> list[str]:
    """Table rows with columns joined by `` | `` (cells hold at most single spaces)."""
    return [" | ".join(re.split(r"\s{2,}", line.strip())) for line in stdout.splitlines()]


def pair(name: str) -> tuple[str, str]:
    return f"{DIFF}/{name}/before.py", f"{DIFF}/{name}/after.py"


def diff(run_cli: Run, *args: str, rc: int, cwd: Path | None = None) -> CliResult:
    result = run_cli("diff-debug", *args, cwd=cwd)
    assert result.returncode == rc, result.describe()
    assert "Traceback" not in result.stderr, result.describe()
    return result


# ---- what raw JAX carries (the oracle) ------------------------------------------------------


@dataclass(frozen=True)
class Main:
    """The signature of ``@main`` as raw JAX printed it: per argument its ``loc`` name
    (None: ``loc(unknown)``) and type, per result its ``jax.result_info`` (None: absent)
    and type."""

    args: tuple[tuple[str | None, str], ...]
    results: tuple[tuple[str | None, str], ...]


_LOC_ALIAS = re.compile(r'^(#loc\d*) = loc\("((?:[^"\\]|\\.)*)"', re.M)
_ARG = re.compile(r'%arg\d+: (tensor<[^>]*>)[^%]*?loc\((#loc\d*|"(?:[^"\\]|\\.)*"|unknown)')
_RESULT_INFO = re.compile(r'jax\.result_info = "((?:[^"\\]|\\.)*)"')


def read_main(path: Path) -> Main:
    text = path.read_text(encoding="utf-8")
    aliases = dict(_LOC_ALIAS.findall(text))
    line = next(line for line in text.splitlines() if "@main(" in line)
    head, _, tail = line.partition(") -> ")

    def name(loc: str) -> str | None:
        loc = aliases.get(loc, loc)
        return None if loc in ("unknown", "") or loc.startswith("#") else loc.strip('"')

    args = tuple((name(loc), kind) for kind, loc in _ARG.findall(head))
    results = []
    for part in tail.split("tensor<")[1:]:
        info = _RESULT_INFO.search(part)
        results.append((info.group(1) if info else None, "tensor<" + part.split(">")[0] + ">"))
    return Main(args, tuple(results))


@dataclass(frozen=True)
class Raw:
    """What this release's own staging carries (see GENERATE_MLIR)."""

    folder: Path

    def main(self, name: str) -> Main:
        return read_main(self.folder / f"{name}.mlir")

    @property
    def prefixed(self) -> bool:
        """Whether result paths start with ``result`` (a lone result: ``""`` up to 0.5)."""
        return self.main("lone_jit").results[0][0] == "result"

    def result_path(self, info: str | None) -> str | None:
        """A ``jax.result_info`` in the newer spelling; None where it carries no path."""
        if info is None or (self.prefixed and info == ""):
            return None
        return info if self.prefixed else "result" + info

    def nested(self) -> list[tuple[str, str]]:
        """Each jaxpr nested in the pmap'ed step: its place and the quality of its raw
        debug info (missing: none; partial: names or paths unknown)."""
        graded = []
        for jaxpr in json.loads((self.folder / "pmap_nested.json").read_text()):
            names, paths = jaxpr["arg_names"], jaxpr["result_paths"]
            if not jaxpr["info"]:
                quality = "missing"
            elif (names is not None and len(names) != jaxpr["counts"][0]) or (
                paths is not None and len(paths) != jaxpr["counts"][1]
            ):
                quality = "count_mismatch"
            elif paths == [""] and not self.prefixed:  # up to 0.5 a lone result's path
                quality = "ok"
            elif names is None or paths is None or "" in names or "" in paths:
                quality = "partial"
            else:
                quality = "ok"
            graded.append((jaxpr["where"], quality))
        return graded


STEP_LEAVES = ("params['b']", "params['w']", "batch['x']", "batch['y']")
FINDING_SEVERITY = {code: rule.severity for code, rule in RULES_BY_CODE.items()}


def name_row(leaf: str, before: str | None, after: str | None, by_position: bool = False) -> str:
    """The row of an argument whose name went from ``before`` to ``after`` (None: lost)."""
    kind = "lost" if after is None else "degraded"
    row = f"error | name | {kind} | argument | {leaf} | {before} | {after or '—'}"
    return row + (" | by position" if by_position else "")


def has_row(found: list[str], row: str) -> bool:
    return row in found if not row.endswith(" ") else any(r.startswith(row) for r in found)


def no_name_row(leaf: str, found: list[str]) -> bool:
    return not any(row.startswith("error | name | ") and f" | {leaf} | " in row for row in found)


@dataclass(frozen=True)
class Expected:
    rows: list[str]
    unchanged: list[str]
    regressions: int
    failing: int


def expected_step_diff(raw: Raw) -> Expected:
    """``step`` staged with jit, then with pmap: the rows raw JAX's own lowerings imply."""
    jit, pmap = raw.main("jit"), raw.main("pmap")
    rows, unchanged, errors, findings = [], [], 0, {}
    for leaf, (old, _), (new, _) in zip(STEP_LEAVES, jit.args, pmap.args, strict=True):
        assert old == leaf, jit
        rows.append(f"error | sharding | changed | argument | {leaf} | — | P('batch', None)")
        if new == old:
            unchanged.append(leaf)
            continue
        rows.append(name_row(leaf, old, new))
        code = "JX101" if new is None else "JX102" if re.fullmatch(r"\w+\[\d+\]", new) else "JX109"
        findings[code] = findings.get(code, 0) + 1
    errors += len(rows)
    (old_info, _), (new_info, _) = jit.results[0], pmap.results[0]
    assert raw.result_path(old_info) == "result['loss']", jit
    rows.append("error | sharding | changed | result | result['loss'] | — | P('batch')")
    errors += 1
    new_path = raw.result_path(new_info)
    if new_path is None:
        rows.append(f"error | path | lost | result | result['loss'] | {old_info}")
        findings["JX103"] = findings.get("JX103", 0) + 1
        errors += 1
    elif new_path != "result['loss']":  # a fallback path: result[0] (0.8, 0.9)
        rows.append(f"error | path | degraded | result | result['loss'] | {old_info} | {new_path}")
        findings["JX104"] = findings.get("JX104", 0) + 1
        errors += 1
    nested = 0
    if all(new is None for new, _ in pmap.args):  # the program carries no names (0.7.2)
        rows.append("warning | nested | degraded | nested | top | ok | partial")
        nested += 1
    for where, quality in raw.nested():
        if quality != "ok":
            rows.append(f"warning | nested | added | nested | {where} | — | {quality}")
            nested += 1
        code = {"missing": "JX107", "partial": "JX110"}.get(quality)
        if code:
            findings[code] = findings.get(code, 0) + 1
    for code, count in findings.items():
        rows.append(f"{FINDING_SEVERITY[code]} | finding | more | finding | {code} | 0 | {count}")
    return Expected(rows, unchanged, errors + nested + len(findings), errors)


@dataclass(frozen=True)
class TextExpected:
    rows: list[str]
    """Whole rows; those ending in a space are the start of a row."""
    unchanged: list[str]
    removed_and_added: bool
    rc: int


def expected_text_diff(before: Main, after: Main) -> TextExpected:
    """``step`` (jit) against the pmap text, which knows no paths: leaves whose names
    differ are matched by position when their types agree, else removed and added, and an
    added leaf that carries no name is a name lost."""
    rows, unchanged, moved, rc = [], [], False, 0
    pairs = zip(before.args, after.args, strict=True)
    for i, (leaf, ((old, old_type), (new, new_type))) in enumerate(zip(STEP_LEAVES, pairs)):
        assert old == leaf, before
        if new == old:
            unchanged.append(leaf)
        elif new_type == old_type:
            rows.append(name_row(leaf, old, new, by_position=True))
            rc = 1
        else:  # no pair; an added leaf without a name lost it all the same (a regression)
            added = (f"leaf | added | argument | #{i} | " if new is not None
                     else f"error | name | lost | argument | #{i} | — | ")  # fmt: skip
            rows += [f"leaf | removed | argument | {leaf} | ", added]
            moved = True
            rc = rc or int(new is None)
    (old, old_type), (new, new_type) = before.results[0], after.results[0]
    if new != old and new_type == old_type:
        rc = 1
    return TextExpected(rows, unchanged, moved, rc)


# ---- the sample pairs -------------------------------------------------------------------------


def test_jit_to_pmap_degrades_names_and_changes_shardings(run_cli: Run, raw: Raw) -> None:
    """As this release's pmap lowers: 0.10 names arguments ``flat_args[i]``, 0.7 leaves them
    (and the result path) unnamed, 0.4 keeps them; every argument gains a sharding."""
    out = diff(run_cli, *pair("jit_to_pmap"), rc=1).stdout
    found = rows(out)
    expected = expected_step_diff(raw)
    for row in expected.rows:
        assert row in found, out
    for leaf in expected.unchanged:
        assert no_name_row(leaf, found), out
    assert "stage | jit → reached lowered | pmap → reached lowered" in found
    assert found[-1].startswith(
        f"FAIL: {expected.regressions} regressions ({expected.failing} failing at --fail-on error)"
    )


def test_static_argument_moved_is_neutral(run_cli: Run) -> None:
    out = diff(run_cli, *pair("static_moved"), rc=0).stdout
    assert "static | moved | static | n | position 1 | keyword" in rows(out)
    assert "unchanged: 1 of 1 arguments, 1 of 1 results" in out
    assert out.rstrip().endswith("ok: 0 regressions, 0 improvements, 1 neutral")


def test_sharding_changed_is_judged_by_its_bytes_per_device(run_cli: Run) -> None:
    """``w`` split by rows, not columns, holds as many bytes a device (f32[256,512] over
    model=2: 256 KiB): neutral; the result over ``data`` alone holds twice a device's
    bytes (f32[64,512]: 16 KiB over data=4, model=2 → 32 KiB over data=4): an error,
    unless ``--allow sharding``."""
    found = rows(diff(run_cli, *pair("sharding_changed"), rc=1).stdout)
    assert "sharding | changed | argument | w | P(None, 'model') | P('model', None)" in found
    assert (
        "error | sharding | changed | result | result | P('data', 'model'), 16.0 KiB per device "
        "| P('data', None), 32.0 KiB per device"
    ) in found
    assert "failed: 1 sharding changed" in found
    allowed = diff(run_cli, *pair("sharding_changed"), "--allow", "sharding", rc=0).stdout
    assert any(
        row.startswith("error (allowed) | sharding | changed | result | result | ")
        for row in rows(allowed)
    )
    assert "ok: 1 regression (0 failing at --fail-on error), 0 improvements, 1 neutral" in allowed


def test_renamed_parameter_in_files_of_the_same_name(run_cli: Run) -> None:
    """before/model.py and after/model.py load side by side in one process."""
    before, after = f"{DIFF}/param_renamed/before/model.py", f"{DIFF}/param_renamed/after/model.py"
    out = diff(run_cli, before, after, rc=0).stdout
    found = rows(out)
    assert "name | renamed | argument | x | x | inputs | by position" in found
    assert "name | renamed | argument | y | y | labels | by position" in found
    assert f"target | {before}:loss | {after}:loss" in found


def test_donation_dropped_as_json(run_cli: Run) -> None:
    out = diff(run_cli, *pair("donation_dropped"), "--format", "json", rc=1).stdout
    data = json.loads(out)
    assert_valid_diff(data)
    changes = data["targets"][0]["changes"]
    assert [
        (c["class"], c["kind"], c["path"], c["before"], c["after"], c["failing"]) for c in changes
    ] == [
        ("donation", "dropped", "state['b']", "aliased → out 0", None, True),
        ("donation", "dropped", "state['w']", "aliased → out 1", None, True),
    ]
    assert data["summary"] == {"regressions": 2, "failing": 2, "improvements": 0, "neutral": 0}


def test_result_key_renamed_as_markdown(run_cli: Run, raw: Raw) -> None:
    out = diff(run_cli, *pair("result_key_renamed"), "--format", "markdown", rc=0).stdout
    assert out.startswith("## ✅ jxinspect diff-debug\n")
    # The columns hold the program's own spelling (``['probs']`` up to JAX 0.5).
    (before, _), (after, _) = (
        raw.main("predict_before").results[1],
        raw.main("predict_after").results[1],
    )
    assert (raw.result_path(before), raw.result_path(after)) == (
        "result['probs']",
        "result['probabilities']",
    )
    assert (
        f"| path | renamed | result | `result['probs']` | `{before}` | `{after}` | by position |"
    ) in out
    assert "<details><summary>Neutral (1)</summary>" in out


# ---- input kinds ---------------------------------------------------------------------------------

GENERATE_MLIR = """
import importlib.util, json, pathlib
import jax
from jax.sharding import NamedSharding, PartitionSpec as P
from jxinspect.tracer import seam

seam.simulate_cpu_devices(8)
repo, out = pathlib.Path({repo!r}), pathlib.Path({out!r})

def load(rel):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], repo / rel)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

def S(*shape):
    return jax.ShapeDtypeStruct(shape, jax.numpy.float32)

step_args = ({{"w": S(8, 16), "b": S(8, 16)}}, {{"x": S(8, 16), "y": S(8, 16)}})
jit = jax.jit(load("{d}/jit_to_pmap/before.py").step).trace(*step_args).lower()
pmap = jax.pmap(load("{d}/jit_to_pmap/after.py").step, axis_name="batch").lower(*step_args)
(out / "jit.mlir").write_text(seam.lowered_text(jit, "stablehlo", True))
(out / "pmap.mlir").write_text(seam.lowered_text(pmap, "stablehlo", True))

mesh = seam.make_mesh((4, 2), ("data", "model"), jax.devices(), explicit=False)
specs = (P("data", None), P(None, "model"))
layer = jax.jit(load("{d}/sharding_changed/before.py").layer,
                in_shardings=tuple(NamedSharding(mesh, spec) for spec in specs),
                out_shardings=NamedSharding(mesh, P("data", "model")))
layer_args = (S(64, 256), S(256, 512))
with seam.partitioner("shardy"):
    (out / "shardy.mlir").write_text(seam.lowered_text(layer.lower(*layer_args), "stablehlo", True))
with seam.partitioner("gspmd"):
    (out / "gspmd.mlir").write_text(seam.lowered_text(layer.lower(*layer_args), "stablehlo", True))

# What this release's own staging carries, for the expectations of the tests below.
def double(x):
    return x * 2

lone = jax.jit(double).trace(S(8, 4)).lower()
(out / "lone_jit.mlir").write_text(seam.lowered_text(lone, "stablehlo", True))
lone = jax.pmap(double).lower(S(8, 4))
(out / "lone_pmap.mlir").write_text(seam.lowered_text(lone, "stablehlo", True))
for side in ("before", "after"):
    predict = load("{d}/result_key_renamed/" + side + ".py").predict
    lowered = jax.jit(predict).trace(S(784, 10), S(32, 784)).lower()
    (out / ("predict_" + side + ".mlir")).write_text(seam.lowered_text(lowered, "stablehlo", True))

def nested(jaxpr, prefix=""):  # every jaxpr nested in an equation, with its raw debug info
    for eqn in jaxpr.eqns:
        for key, value in eqn.params.items():
            for item in value if isinstance(value, (tuple, list)) else [value]:
                inner = getattr(item, "jaxpr", item)
                if not hasattr(inner, "eqns"):
                    continue
                where = prefix + eqn.primitive.name + "." + key
                info = getattr(inner, "debug_info", None)
                names = getattr(info, "arg_names", None)
                paths = getattr(info, "result_paths", None)
                paths = paths() if callable(paths) else paths
                yield {{
                    "where": where,
                    "info": info is not None,
                    "arg_names": None if names is None else [str(n) for n in names],
                    "result_paths": None if paths is None else [str(p) for p in paths],
                    "counts": [len(inner.invars), len(inner.outvars)],
                }}
                yield from nested(inner, where + "/")

step = load("{d}/jit_to_pmap/after.py").step
closed = jax.make_jaxpr(jax.pmap(step, axis_name="batch"))(*step_args)
top = closed.jaxpr
if len(top.eqns) == 1 and top.eqns[0].primitive.name == "xla_pmap":  # the older pmap:
    top = top.eqns[0].params["call_jaxpr"]  # its body is the program JAX lowers, not nested
(out / "pmap_nested.json").write_text(json.dumps(list(nested(getattr(top, "jaxpr", top)))))
"""


@pytest.fixture(scope="module")
def mlir_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """StableHLO text of the jit and pmap versions, and of one layer under Shardy and GSPMD."""
    out = tmp_path_factory.mktemp("mlir")
    result = run_python(GENERATE_MLIR.format(repo=str(REPO), out=str(out), d=DIFF), warm=True)
    assert result.returncode == 0, result.describe()
    return out


@pytest.fixture(scope="module")
def raw(mlir_files: Path) -> Raw:
    return Raw(mlir_files)


def assert_text_diff(out: str, expected: TextExpected) -> list[str]:
    """The rows ``expected_text_diff`` predicts are there, and no others about names."""
    found = rows(out)
    for row in expected.rows:
        assert has_row(found, row), out
    for leaf in expected.unchanged:
        assert no_name_row(leaf, found), out
    if not expected.removed_and_added:
        assert "leaf | removed" not in out and "leaf | added" not in out
        assert " | name | lost | argument | #" not in out
    return found


def test_mlir_pair_matches_lost_names_by_position(run_cli: Run, raw: Raw) -> None:
    expected = expected_text_diff(raw.main("jit"), raw.main("pmap"))
    out = diff(
        run_cli, str(raw.folder / "jit.mlir"), str(raw.folder / "pmap.mlir"), rc=expected.rc
    ).stdout
    found = assert_text_diff(out, expected)
    assert "stage | not recorded → reached lowered | not recorded → reached lowered" in found


def test_shardy_and_gspmd_text_read_the_same(run_cli: Run, mlir_files: Path) -> None:
    out = diff(
        run_cli, str(mlir_files / "shardy.mlir"), str(mlir_files / "gspmd.mlir"), rc=0
    ).stdout
    assert "sharding | changed | argument" not in " ".join(rows(out))
    assert "ok: 0 regressions" in out


def test_python_against_mlir(run_cli: Run, raw: Raw) -> None:
    before, _ = pair("jit_to_pmap")
    expected = expected_text_diff(raw.main("jit"), raw.main("pmap"))
    out = diff(run_cli, before, str(raw.folder / "pmap.mlir"), rc=expected.rc).stdout
    found = assert_text_diff(out, expected)
    assert f"target | {before}:step | {raw.folder / 'pmap.mlir'}" in found


def test_saved_reports_and_a_mix(run_cli: Run, raw: Raw, tmp_path: Path) -> None:
    before, after = pair("jit_to_pmap")
    for side, name in ((before, "before.json"), (after, "after.json")):
        saved = run_cli("lower", f"{side}:step", "--format", "json", "-o", str(tmp_path / name))
        assert saved.returncode == 0, saved.describe()
    expected = expected_step_diff(raw)
    reports = diff(run_cli, str(tmp_path / "before.json"), str(tmp_path / "after.json"), rc=1)
    staged = diff(run_cli, str(tmp_path / "before.json"), after, rc=1)
    for result in (reports, staged):
        found = rows(result.stdout)
        for row in expected.rows:
            assert row in found, result.describe()
        for leaf in expected.unchanged:
            assert no_name_row(leaf, found), result.describe()
        assert found[-1].startswith(
            f"FAIL: {expected.regressions} regressions "
            f"({expected.failing} failing at --fail-on error)"
        )


def test_file_targets_with_flags_and_the_same_module_name(run_cli: Run, tmp_path: Path) -> None:
    for folder, body in (
        ("old", "def f(x, w):\n    return x @ w\n"),
        ("new", "def f(x, weights):\n    return x @ weights\n"),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "mymod.py").write_text(body)
    result = diff(
        run_cli,
        "old/mymod.py:f",
        "new/mymod.py:f",
        "--args",
        "f32[2,3], f32[3,4]",
        rc=0,
        cwd=tmp_path,
    )
    assert "name | renamed | argument | w | w | weights | by position" in rows(result.stdout)


def test_module_targets_with_staging_flags(run_cli: Run, raw: Raw, tmp_path: Path) -> None:
    (tmp_path / "mod_a.py").write_text("def f(x):\n    return x * 2\n")
    (tmp_path / "mod_b.py").write_text("def g(x):\n    return x * 3\n")
    result = diff(
        run_cli,
        "mod_a:f",
        "mod_b:g",
        "--args",
        "f32[8,4]",
        "--stage",
        "pmap",
        "--devices",
        "8",
        rc=0,
        cwd=tmp_path,
    )
    found = rows(result.stdout)
    assert "== f → g ==" in found
    assert "stage | pmap → reached lowered | pmap → reached lowered" in found
    assert "platform | cpu, 8 devices | cpu, 8 devices" in found
    # Named as this release's pmap lowers ``x * 2``: ``x`` (0.4), ``flat_args[0]`` (0.10) or
    # nothing (0.7); the lone result ``result`` (``""`` in 0.4), or no path (0.7).
    (arg, _), (res, _) = raw.main("lone_pmap").args[0], raw.main("lone_pmap").results[0]
    named = f"{int(arg == 'x')}/1 arguments, {int(raw.result_path(res) == 'result')}/1 results"
    assert f"named | {named} | {named}" in found


def test_function_picks_one_of_several(run_cli: Run) -> None:
    out = diff(
        run_cli, "sample_programs/mlp.py", "sample_programs/mlp.py", "--function", "predict", rc=0
    ).stdout
    assert "== predict ==" in out and "\nno changes\n" in out
    assert "unchanged: 7 of 7 arguments, 2 of 2 results" in out


# ---- bad inputs ----------------------------------------------------------------------


def test_missing_file(run_cli: Run) -> None:
    _, after = pair("static_moved")
    line = error_line(diff(run_cli, "no/such/before.py", after, rc=2))
    assert line == (
        "error: no such file: no/such/before.py (relative to the current folder); check the "
        "path, or give the file's full path"
    )


def test_unparsable_mlir(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "bad.mlir").write_text("module {\n  func.func @main( {\n}\n")
    (tmp_path / "ok.mlir").write_text("module {}\n")
    line = error_line(diff(run_cli, "bad.mlir", "ok.mlir", rc=2, cwd=tmp_path))
    assert line.startswith("error: cannot parse bad.mlir as StableHLO: line 2:")


def test_json_that_is_not_a_report(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"schema": "jxinspect.diff/1"}))
    _, after = pair("static_moved")
    line = error_line(diff(run_cli, str(tmp_path / "x.json"), after, rc=2))
    assert "is not a jxinspect report (its schema is 'jxinspect.diff/1')" in line
    assert "jxinspect lower TARGET --format json" in line


def test_a_target_only_one_side_has(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        'JXINSPECT = {"f": {"args": "f32[2]"}, "g": {"args": "f32[2]"}}\n'
        "def f(x): return x\ndef g(x): return x\n"
    )
    (tmp_path / "b.py").write_text('JXINSPECT = {"f": {"args": "f32[2]"}}\ndef f(x): return x\n')
    line = error_line(diff(run_cli, "a.py", "b.py", rc=2, cwd=tmp_path))
    assert line == (
        "error: `g` is declared only in a.py: declare it on both sides, "
        "or compare one function with --function NAME"
    )


def test_user_code_that_fails(run_cli: Run) -> None:
    _, after = pair("static_moved")
    line = error_line(diff(run_cli, "tests/fixtures/import_raises.py:f", f"{after}:smooth", rc=3))
    assert line.startswith("error: importing tests/fixtures/import_raises.py failed: ")


STATIC_FN = """
import jax
import jax.numpy as jnp


def schedule(step):
    return {factor} * step


def train(x, lr_fn):
    return x * lr_fn(1.0)


def make():
    return jax.ShapeDtypeStruct((4,), jnp.float32), schedule


JXINSPECT = {{"train": {{"args_from": "make", "static_argnums": (1,)}}}}
"""


def test_a_static_function_is_compared_by_name_and_source(run_cli: Any, tmp_path: Path) -> None:
    """Two processes give one function two addresses: that is no change; a changed body
    is (neutral), named by its qualified name and a digest of its source."""
    for name, factor in (("before", "0.1"), ("same", "0.1"), ("changed", "0.2")):
        (tmp_path / f"{name}.py").write_text(STATIC_FN.format(factor=factor), encoding="utf-8")
    same = run_cli("diff-debug", "before.py", "same.py", "--format", "json", cwd=tmp_path)
    assert same.returncode == 0, same.describe()
    assert json.loads(same.stdout)["targets"][0]["changes"] == []
    changed = run_cli("diff-debug", "before.py", "changed.py", "--format", "json", cwd=tmp_path)
    (change,) = json.loads(changed.stdout)["targets"][0]["changes"]
    assert (change["class"], change["kind"], change["verdict"]) == ("static", "changed", "neutral")
    assert change["before"].startswith("<function schedule, source ")
    assert " at 0x" not in change["before"] + change["after"]


NESTED_PAIR = """
import jax
import jax.numpy as jnp


def step(ws, x):
    def body(h, w):
        return jax.nn.relu(h * w), jnp.mean(h)

    h, means = jax.lax.scan(body, x, ws)
    return {{"h": h, "means": means}}


JXINSPECT = {{"step": {{"stage": "{stage}", "devices": 8, "args": "{args}"}}}}
"""


def test_nested_jaxprs_are_matched_by_meaning_across_jit_and_pmap(
    run_cli: Any, tmp_path: Path
) -> None:
    """pmap wraps the program, so every nested jaxpr's place gains a prefix: the same scan
    body is matched, not reported as removed under jit and added under pmap."""
    (tmp_path / "before.py").write_text(
        NESTED_PAIR.format(stage="jit", args="f32[3,4], f32[4]"), encoding="utf-8")  # fmt: skip
    (tmp_path / "after.py").write_text(
        NESTED_PAIR.format(stage="pmap", args="f32[8,3,4], f32[8,4]"),
        encoding="utf-8",
    )
    result = run_cli("diff-debug", "before.py", "after.py", "--format", "json", cwd=tmp_path)
    changes = json.loads(result.stdout)["targets"][0]["changes"]
    nested = [(c["kind"], c["path"]) for c in changes if c["class"] == "nested"]
    removed = {path.rsplit("/", 1)[-1] for kind, path in nested if kind == "removed"}
    added = {path.rsplit("/", 1)[-1] for kind, path in nested if kind == "added"}
    assert not removed & added, nested


def test_a_removed_checkpoint_is_a_change_of_structure_not_an_improvement(run_cli: Run) -> None:
    """``jax.checkpoint`` removed: its nested jaxprs and the findings about them go away,
    which is neutral (nothing was fixed), beside the memory growth that fails the gate;
    it was listed under "improvements" (issue 47, item 20)."""
    result = diff(run_cli, *pair("remat_removed"), "--compile", "--format", "json", rc=1)
    (target,) = json.loads(result.stdout)["targets"]
    graded = {(c["class"], c["kind"]): c["verdict"] for c in target["changes"]}
    assert graded[("memory", "grew")] == "regression", graded
    # the structure's going is no improvement; the FLOPs the recomputation cost are
    # (where this release's compile drops them past the threshold: 0.12.1)
    assert "improvement" not in {v for (cls, _), v in graded.items() if cls != "flops"}, graded
    assert {v for (cls, _), v in graded.items() if cls in ("nested", "finding")} <= {"neutral"}
