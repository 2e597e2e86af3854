"""``jxinspect diff-debug --compile`` through the installed command: the cost section
(memory per kind and FLOPs before → after, collectives added / removed / changed) and its
gate, with raw JAX as the oracle.

The pair ``sample_programs/diff/collective_added`` turns a residual add of ``v`` into a
projection by ``v``: XLA all-gathers ``v`` over ``fsdp`` after, and needs more
temporaries. A plain JAX script compiles both the same way and prints
``memory_analysis()``, ``cost_analysis()``'s FLOPs and the all-gathers of
``as_text()``; the diff must say the same.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, WARM_PYTHON, CliResult, error_line, run_python
from test_diff import assert_valid_diff
from test_diff_cli import rows

from jxinspect.core.units import human_bytes

Run = Callable[..., CliResult]
PAIR = "sample_programs/diff/collective_added"
BEFORE, AFTER = f"{PAIR}/before.py", f"{PAIR}/after.py"

ORACLE = r"""
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:8]), ("fsdp",))
arg = jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, P("fsdp")))
found = {}
for name, f in {"before": lambda x, w, v: jnp.tanh(x @ w) + v,
                "after": lambda x, w, v: jnp.tanh(x @ w) @ v}.items():
    jitted = jax.jit(f, out_shardings=NamedSharding(mesh, P("fsdp")))
    compiled = jitted.lower(arg, arg, arg).compile()
    m = compiled.memory_analysis()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    text = compiled.as_text()
    found[name] = {"arguments": m.argument_size_in_bytes, "outputs": m.output_size_in_bytes,
                   "temporaries": m.temp_size_in_bytes, "aliased": m.alias_size_in_bytes,
                   "flops": cost["flops"],
                   "all_gathers": text.count(" all-gather(") + text.count(" all-gather-start(")}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict[str, Any]]:
    done = run_python(ORACLE, warm=True)
    assert done.returncode == 0, done.describe()
    found: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return found


def diff(run_cli: Run, *args: str, rc: int, cwd: Path | None = None) -> CliResult:
    result = run_cli("diff-debug", *args, cwd=cwd)
    assert result.returncode == rc, result.describe()
    assert "Traceback" not in result.stderr, result.describe()
    return result


@pytest.fixture(scope="module")
def where(run_cli: Run) -> str:
    """The added gather's source line as ``lower --compile`` of the after side names it
    (the diff must name the same), ``""`` where the release keeps none for it (0.12)."""
    shown = run_cli("lower", f"{AFTER}:layer", "--compile", "-f", "json")
    assert shown.returncode == 0, shown.describe()
    [gather] = [c for c in json.loads(shown.stdout)["compiled"]["collectives"]
                if c["operand_paths"] == ["v"]]  # fmt: skip
    if gather["line"] is None:
        return ""
    return f"{os.path.relpath(gather['file'], REPO)}:{gather['line']}"  # as the text says it


def percent(before: float, after: float) -> str:
    return f"{(after - before) / before * 100:+.1f}%"


def temporaries_grew(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The diff's row of temporaries grown past the threshold, from raw JAX's figures."""
    return (
        f"error | memory | grew | memory | temporaries | {human_bytes(old['temporaries'])} | "
        f"{human_bytes(new['temporaries'])} ({percent(old['temporaries'], new['temporaries'])}, "
        "over 10%)"
    )


def test_an_added_all_gather_fails_naming_the_parameter(
    run_cli: Run, oracle: dict[str, dict[str, Any]], where: str
) -> None:
    old, new = oracle["before"], oracle["after"]
    assert (old["all_gathers"], new["all_gathers"]) == (1, 2)  # w before; w and v after
    found = rows(diff(run_cli, BEFORE, AFTER, "--compile", rc=1).stdout)
    source = where
    line = f" ({source})" if source else ""
    assert (
        f"error | collective | added | collective | all-gather over fsdp moving v{line} "
        "| — | 32.0 KiB per step"
    ) in found
    assert temporaries_grew(old, new) in found
    for kind in ("arguments", "outputs"):
        assert f"{kind} | {human_bytes(old[kind])} | {human_bytes(new[kind])} | +0.0%" in found
    assert f"temporaries | {human_bytes(old['temporaries'])} | " in "\n".join(found)
    flops = f"flops | {old['flops']:,.0f} | {new['flops']:,.0f} | "
    assert flops + percent(old["flops"], new["flops"]) in found
    assert "collectives: 1 added, 0 removed, 0 changed, 1 unchanged" in found
    assert (
        f"added | all-gather | fsdp | — | 32.0 KiB | 1 | v{' | ' + source if source else ''}"
        in found
    )
    # FLOPs and the bytes moved grow past 10% too: regressions, warnings (not the gate's)
    assert (
        f"warning | flops | more | flops | FLOPs | {old['flops']:,.0f} | "
        f"{new['flops']:,.0f} ({percent(old['flops'], new['flops'])})"
    ) in found
    assert "warning | collective | more | collective | bytes moved per step | " in "\n".join(found)
    assert "failed: 1 collective added, temporaries grew" in found
    assert found[found.index("failed: 1 collective added, temporaries grew") + 1].startswith(
        "policy: --fail-on error fails on each regression that severe, among them a "
        "collective added"
    )
    assert (
        found[-1] == "FAIL: 4 regressions (2 failing at --fail-on error), 0 improvements, 0 neutral"
    )


def test_without_compile_the_pair_differs_in_nothing_it_gates(run_cli: Run) -> None:
    out = diff(run_cli, BEFORE, AFTER, rc=0).stdout
    assert "cost per device" not in out
    assert out.rstrip().endswith("ok: 0 regressions, 0 improvements, 0 neutral")


def test_the_other_way_round_the_collective_is_removed(run_cli: Run, where: str) -> None:
    found = rows(diff(run_cli, AFTER, BEFORE, "--compile", rc=0).stdout)
    source = where
    line = f" ({source})" if source else ""
    assert (
        f"collective | removed | collective | all-gather over fsdp moving v{line} "
        "| 32.0 KiB per step | —"
    ) in found
    assert "collectives: 0 added, 1 removed, 0 changed, 1 unchanged" in found
    # temporaries, FLOPs and the bytes moved fall past 10%: improvements, counted
    assert "memory | shrank | memory | temporaries | " in "\n".join(found)
    assert "flops | fewer | flops | FLOPs | " in "\n".join(found)
    assert "collective | fewer | collective | bytes moved per step | " in "\n".join(found)
    assert not [line for line in found if line.startswith(("failed:", "policy:", "fails on"))]
    assert found[-1] == "ok: 0 regressions, 4 improvements, 0 neutral"


def test_json_and_markdown(run_cli: Run, oracle: dict[str, dict[str, Any]], where: str) -> None:
    data = json.loads(diff(run_cli, BEFORE, AFTER, "--compile", "-f", "json", rc=1).stdout)
    assert_valid_diff(data)
    cost = data["targets"][0]["cost"]
    measures = {m["measure"]: (m["before"], m["after"]) for m in cost["measures"]}
    assert measures == {
        **{kind: (oracle["before"][kind], oracle["after"][kind])
           for kind in ("arguments", "outputs", "temporaries", "aliased", "flops")},
        "moved": (32768, 65536),  # w's gather, then w's and v's
    }  # fmt: skip
    [added] = cost["collectives"]
    assert (added["change"], added["before"]) == ("added", None)
    after = added["after"]
    assert (after["kind"], after["axes"], after["operand_paths"], after["bytes_per_step"]) == (
        "all-gather", ["fsdp"], ["v"], 32768,
    )  # fmt: skip
    assert added["declarations"] == []  # the code changed, not v's declaration
    assert (cost["unchanged_collectives"], cost["memory_growth"]) == (1, 0.1)
    assert [(c["class"], c["kind"], c["failing"]) for c in data["targets"][0]["changes"]] == [
        ("collective", "added", True),
        ("memory", "grew", True),
        ("flops", "more", False),
        ("collective", "more", False),
    ]
    markdown = diff(run_cli, BEFORE, AFTER, "--compile", "-f", "markdown", rc=1).stdout
    assert "**Collectives: 1 added, 0 removed, 0 changed, 1 unchanged**" in markdown
    source = str(REPO / where) if where else ""  # Markdown keeps the path whole
    line = f" `{source}` |" if source else ""
    assert f"| added | all-gather | fsdp | — | 32.0 KiB | 1 | `v` |{line}" in markdown


def test_the_gate_reads_memory_growth_and_allow(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "jxinspect.yaml").write_text("budgets: {memory_growth: 150%}\n", encoding="utf-8")
    before, after = str(REPO / BEFORE), str(REPO / AFTER)
    found = rows(diff(run_cli, before, after, "--compile", rc=1, cwd=tmp_path).stdout)
    assert not any(row.startswith("error | memory") for row in found)
    assert "failed: 1 collective added" in found
    # the one threshold: FLOPs and bytes moved doubled, not past 150% either
    assert (
        found[-1] == "FAIL: 1 regression (1 failing at --fail-on error), 0 improvements, 0 neutral"
    )
    allowed = diff(run_cli, before, after, "--compile", "--allow", "collective,memory", rc=0)
    assert rows(allowed.stdout)[-1] == (
        "ok: 4 regressions (0 failing at --fail-on error), 0 improvements, 0 neutral"
    )


def test_saved_reports_need_compiled_info(run_cli: Run, tmp_path: Path, where: str) -> None:
    for side, name, flags in ((BEFORE, "plain.json", ()), (AFTER, "after.json", ("--compile",))):
        saved = run_cli("lower", f"{side}:layer", *flags, "-f", "json", "-o", tmp_path / name)
        assert saved.returncode == 0, saved.describe()
    refused = diff(run_cli, str(tmp_path / "plain.json"), AFTER, "--compile", rc=2)
    assert error_line(refused) == (
        f"error: {tmp_path / 'plain.json'}: holds no compiled info: save it with "
        "`jxinspect lower TARGET --compile --format json`"
    )
    found = rows(diff(run_cli, BEFORE, str(tmp_path / "after.json"), "--compile", rc=1).stdout)
    source = where  # the saved side says what the staged one does
    line = f" ({source})" if source else ""
    assert (
        f"error | collective | added | collective | all-gather over fsdp moving v{line} "
        "| — | 32.0 KiB per step"
    ) in found
    mlir = diff(
        run_cli, "sample_programs/diff/result_key_renamed/before.mlir", AFTER, "--compile", rc=2
    )
    assert error_line(mlir) == (
        "error: sample_programs/diff/result_key_renamed/before.mlir: StableHLO text is not "
        "compiled by diff-debug --compile: give the .py file, the target or a report saved "
        "with `lower --compile --format json`"
    )


RUN = """
import jax
import jax.numpy as jnp


@jax.jit
def layer(x, w, v):
    return BODY


layer(jnp.ones((256, 256)), jnp.ones((256, 256)), jnp.ones((256, 256)))
"""
BODIES = {"before": "jnp.tanh(x @ w) + v", "after": "jnp.tanh(x @ w) @ v"}


def test_recordings_compare_their_compiled_cost(run_cli: Run, tmp_path: Path) -> None:
    """Two runs recorded with ``record --compile`` compare as two compiled reports do;
    one recorded without is refused in one line."""
    for side, body in BODIES.items():
        (tmp_path / f"{side}.py").write_text(RUN.replace("BODY", body), encoding="utf-8")
    for name, flags, side in (("a", ("--compile",), "before"), ("b", ("--compile",), "after"),
                              ("plain", (), "before")):  # fmt: skip
        recorded = run_cli("record", "-o", name, *flags, "--", *WARM_PYTHON, f"{side}.py",
                           cwd=tmp_path)  # fmt: skip
        assert recorded.returncode == 0, recorded.describe()
    data = json.loads(diff(run_cli, "a", "b", "--compile", "-f", "json", rc=1, cwd=tmp_path).stdout)
    [target] = data["targets"]
    assert [(c["class"], c["kind"], c["path"]) for c in target["changes"] if c["failing"]] == [
        ("memory", "grew", "temporaries")
    ]
    assert target["cost"]["collectives"] == []  # one device
    assert data["findings"] == []  # an edited function, not JX404
    refused = diff(run_cli, "plain", "b", "--compile", rc=2, cwd=tmp_path)
    assert error_line(refused) == (
        "error: plain: holds no compiled info: record it with `jxinspect record --compile`"
    )


REMAT = "sample_programs/diff/remat_removed"


def test_a_remat_removed_names_what_appeared_at_the_peak(run_cli: Run) -> None:
    """``--memory``: what is live at each side's peak, paired by path or line; removing the
    remat makes the blocks' intermediates appear at the peak, by their line in
    ``block``, each side's peak the one ``lower --memory`` reads."""
    before, after = f"{REMAT}/before.py", f"{REMAT}/after.py"
    result = run_cli("diff-debug", before, after, "--memory", "--format", "json")
    assert result.returncode == 1, result.describe()
    diff = json.loads(result.stdout)
    assert_valid_diff(diff)
    cost = diff["targets"][0]["cost"]
    peaks = [json.loads(run_cli("lower", f"{side}:grads", "--memory", "--format", "json").stdout)
             ["compiled"]["peak"]["bytes"] for side in (before, after)]  # fmt: skip
    (measure,) = [m for m in cost["measures"] if m["measure"] == "peak"]
    assert [measure["before"], measure["after"]] == peaks and peaks[1] > peaks[0]
    source = (REPO / after).read_text(encoding="utf-8").splitlines()
    block = [i for i, line in enumerate(source, 1) if line.startswith("def block")][0]
    appeared = [c for c in cost["peak"] if c["change"] == "appeared" and c["kind"] == "temporary"]
    assert appeared, cost["peak"]
    lines = {int(c["holds"].rsplit(":", 1)[1]) for c in appeared if "after.py:" in c["holds"]}
    assert lines and all(block < line <= block + 2 for line in lines)
    text = run_cli("diff-debug", before, after, "--memory").stdout
    assert "at the peak: " in text and "appeared" in text
    without = json.loads(run_cli("diff-debug", before, after, "--compile", "-f", "json").stdout)
    assert without["targets"][0]["cost"]["peak"] == []


DECLARED = """
import jax.numpy as jnp


def layer(x, w):
    return jnp.tanh(x @ w)


JXINSPECT = {"layer": {"devices": 8, "mesh": "data=8", "args": "f32[64,256], f32[256,256]",
                       "in_specs": "P('data', None), W_SPEC", "out_specs": "P('data', None)"}}
"""


def test_an_added_collective_is_said_beside_the_declaration_that_changed(
    run_cli: Run, tmp_path: Path
) -> None:
    """Only ``w``'s declaration changes (replicated → split over ``data``): XLA gathers
    ``w`` after, and the diff says so beside the declaration of the path it moves (text,
    JSON, Markdown)."""
    for side, spec in (("before", "P()"), ("after", "P('data', None)")):
        (tmp_path / f"{side}.py").write_text(DECLARED.replace("W_SPEC", spec), encoding="utf-8")
    text = run_cli("diff-debug", "before.py:layer", "after.py:layer", "--compile", cwd=tmp_path)
    assert text.returncode == 1, text.describe()
    [said] = [line for line in text.stdout.splitlines() if ": declared " in line]
    assert said.startswith("  added all-gather over data moving w")
    assert said.endswith(": declared w: replicated → P('data', None)")
    data = run_cli("diff-debug", "before.py:layer", "after.py:layer", "--compile", "-f", "json",
                   cwd=tmp_path)  # fmt: skip
    [added] = json.loads(data.stdout)["targets"][0]["cost"]["collectives"]
    assert added["declarations"] == ["w: replicated → P('data', None)"]
    markdown = run_cli("diff-debug", "before.py:layer", "after.py:layer", "--compile", "-f",
                       "markdown", cwd=tmp_path).stdout  # fmt: skip
    assert "declared w: replicated → P('data', None)" in markdown
