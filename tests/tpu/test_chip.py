"""The TPU lane: on a machine with a TPU (``bash scripts/tpu/lane.sh`` there), jxinspect's
figures against the chip's own. Elsewhere (CI has no accelerator) every test here skips,
saying so. One program holds the chip at a time, so each command runs in a process of
its own, one after another (no ``-n``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import timings_out
from hlo_reading import share_by_source

from jxinspect.tracer.seam import libtpu_version

HERE = Path(__file__).parent
PROGRAMS = ("two_matmuls", "block", "train_step")

pytestmark = pytest.mark.tpu


def _run(*argv: str, **added: str) -> subprocess.CompletedProcess[str]:
    """``python ARGV`` in this folder, on the chip (the caller's JAX_PLATFORMS left out),
    with the variables ``added``."""
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"} | added
    return subprocess.run([sys.executable, *argv], cwd=HERE, env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip


@cache
def _no_chip() -> str | None:
    """Why there is no TPU to test on here, or ``None``."""
    if libtpu_version() is None:
        return "no TPU here (libtpu is not installed): run bash scripts/tpu/lane.sh on one"
    found = _run("-c", "import jax; print(jax.devices()[0].platform)")
    if found.stdout.strip().splitlines()[-1:] != ["tpu"]:
        return "no TPU here (JAX's devices are no TPU's): run bash scripts/tpu/lane.sh on one"
    return None


@pytest.fixture(autouse=True)
def _chip() -> None:
    if _no_chip() is not None:
        pytest.skip(str(_no_chip()))


def _jxinspect(*args: str) -> dict[str, Any]:
    done = _run("-m", "jxinspect", *args, "--format", "json")
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return dict(json.loads(done.stdout))


def _made(name: str) -> tuple[str, ...]:
    return (f"programs.py:{name}", "--args-from", f"programs:make_{name}")


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_hbm_a_program_needs_is_what_the_chip_needs(name: str) -> None:
    """What ``--memory`` says the program allocates to run (its HBM peak, VMEM apart) is
    within 2 % of the free HBM the chip needed, found by filling its memory until the step
    no longer ran (probe.py); the header names the chip and its HBM."""
    report = _jxinspect("lower", *_made(name), "--compile", "--memory")
    probe = _run("probe.py", name)
    assert probe.returncode == 0, probe.stderr[-3000:]
    chip = json.loads(probe.stdout.strip().splitlines()[-1])
    needed = (
        chip["analysis"]["argument_size_in_bytes"]
        + chip["loaded_by_first_run"]
        + chip["free_needed"]
    )
    peak = report["compiled"]["peak"]
    assert peak["allocated"] == pytest.approx(needed, rel=0.02)
    assert all(space["space"] != "HBM" for space in peak["on_chip"])
    topology = report["topology"]
    assert topology["here"] and topology["device_kind"] == chip["device_kind"]
    assert topology["hbm"] == chip["stats_after_first_run"]["bytes_limit"]


def _raw_facts(name: str, folder: Path) -> dict[str, Any]:
    """Raw JAX's facts of ``programs.NAME`` on the chip (raw_facts.py)."""
    done = _run("raw_facts.py", name, str(folder))
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads((folder / f"{name}.facts.json").read_text(encoding="utf-8")))


def test_the_kernels_are_named_at_the_users_lines_and_costed_as_xla_costs_them(
    tmp_path: Path,
) -> None:
    """On the chip: both Pallas kernels by name at the user's calls; the add's cost is its
    estimate, the matmul's unknown, so the block's FLOPs are unknown and the part known is
    XLA's own figure (``cost_analysis`` of the chip's compile); the add alone is costed as
    XLA costs it."""
    compiled = _jxinspect("lower", *_made("block"), "--compile")["compiled"]
    kernels = {kernel["name"]: kernel for kernel in compiled["kernels"]}
    assert set(kernels) == {"matmul_kernel", "add_kernel"}
    assert all(Path(k["file"]).name == "programs.py" for k in kernels.values())
    add, matmul = kernels["add_kernel"], kernels["matmul_kernel"]
    assert (add["flops"], add["bytes_accessed"]) == (1234567, 7654321)
    assert matmul["flops"] is None
    raw = _raw_facts("block", tmp_path)
    assert compiled["flops"] is None
    assert compiled["flops_known_part"] == raw["cost"]["flops"]
    alone = _jxinspect("lower", *_made("estimated_add"), "--compile")["compiled"]
    assert alone["flops"] == _raw_facts("estimated_add", tmp_path)["cost"]["flops"] == 1234567


LOOP = """
import sys
sys.path.insert(0, ".")  # programs.py, in the folder it runs in
import jax, programs
step = jax.jit(programs.train_step)
params, opt, tokens = programs.make_train_step()
for i in range(3):
    params, opt, loss = step(params, opt, tokens)
    print(i, float(loss))
print("cache", step._cache_size())
"""


def _compile_log(stderr: str) -> list[str]:
    """JAX's compile log (``JAX_LOG_COMPILES``), its timings taken out."""
    said = re.findall(r"(?:Compiling|Finished) .*", stderr)
    return [timings_out(line) for line in said]


def test_record_is_invisible_on_the_chip(tmp_path: Path) -> None:
    """A training loop on the chip prints the same losses, and JAX logs the same compiles,
    with and without ``record``; the recording holds train_step's compile as JAX logs it."""
    script = tmp_path / "loop.py"
    script.write_text(LOOP, encoding="utf-8")
    plain = _run(str(script), JAX_LOG_COMPILES="1")
    recorded = _run("-m", "jxinspect", "record", "-o", str(tmp_path / "runs"), "--",
                    sys.executable, str(script), JAX_LOG_COMPILES="1")  # fmt: skip
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert recorded.stdout == plain.stdout
    assert _compile_log(recorded.stderr) == _compile_log(plain.stderr)
    logged = _compile_log(plain.stderr).count("Finished XLA compilation of jit(train_step) in … s")
    compiles = json.loads((tmp_path / "runs" / "compiles.json").read_text(encoding="utf-8"))
    mine = [c for c in compiles["compiles"] if c["source"].startswith("train_step at ")]
    assert len(mine) == logged == 1


def test_the_profile_gives_the_large_matmuls_line_its_time(tmp_path: Path) -> None:
    """``profile`` on the chip: the large matmul's line first, holding the share of the
    device's time the trace gives it (± 10 %)."""
    report = _jxinspect("profile", *_made("two_matmuls"), "--steps", "5", "-o", str(tmp_path))
    profile = report["profile"]
    assert profile["platform"] == "tpu" and profile["unread"] is None
    lines = (HERE / "programs.py").read_text(encoding="utf-8").splitlines()
    large = lines.index("    large = jnp.tanh(a @ b)") + 1
    first = profile["by_line"][0]
    assert (Path(first["file"]).name, first["line"]) == ("programs.py", large)
    traced = share_by_source(tmp_path, f"programs.py:{large}")
    assert first["share"] == pytest.approx(traced, abs=0.10)


def test_the_profile_names_a_pallas_kernel() -> None:
    """The Pallas matmul's instruction is measured, at the user's call."""
    profile = _jxinspect("profile", *_made("block"), "--steps", "3")["profile"]
    lines = (HERE / "programs.py").read_text(encoding="utf-8").splitlines()
    call = next(i for i, text in enumerate(lines, 1) if "pallas_matmul.matmul(" in text)
    assert any(entry["line"] == call and entry["seconds"] > 0 for entry in profile["by_line"])
