"""What a TPU v5e chip measured (tests/fixtures/tpu_chip, read there by scripts/tpu and
tests/tpu/probe.py), against what jxinspect says without the chip: its profiler trace read
by instruction, and the HBM a program needs, from ``--topology v5e:1x1`` on this machine
(with the chip's JAX and libtpu: elsewhere the figures are another compiler's, so these
skip, saying so)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import jax
import pytest
from helpers import needs_profile_reader
from hlo_reading import share_by_source

from jxinspect.core.model import Report
from jxinspect.tracer.read.hlo_text import parse
from jxinspect.tracer.read.profile import recorded_profile
from jxinspect.tracer.read.xplane import trace_events
from jxinspect.tracer.seam import libtpu_version

CHIP = Path(__file__).parent.parent / "fixtures" / "tpu_chip"
MEASURED = json.loads((CHIP / "measured.json").read_text(encoding="utf-8"))
PROGRAMS = Path(__file__).parent / "programs.py"


def _chips_own_reading() -> dict[str, float]:
    """Seconds per instruction of the chip's trace, as JAX's own reader reads it: the
    device plane's ``XLA Ops`` events, each named by its instruction's text."""
    (path,) = (CHIP / "two_matmuls-trace").glob("plugins/profile/*/*.xplane.pb")
    data = jax.profiler.ProfileData.from_file(str(path))
    seconds: dict[str, float] = defaultdict(float)
    for plane in data.planes:
        for line in plane.lines:
            if plane.name.startswith("/device:TPU") and line.name == "XLA Ops":
                for event in line.events:
                    seconds[event.name.split(" = ")[0].lstrip("%")] += event.duration_ns / 1e9
    return seconds


@needs_profile_reader
def test_the_chips_trace_is_read_by_instruction() -> None:
    """Each instruction of ``jit_two_matmuls`` holds the time the chip's device plane gives
    it, in every one of the five runs the profile made."""
    events = trace_events(CHIP / "two_matmuls-trace", "jit_two_matmuls")
    assert not isinstance(events, str), events
    ours: dict[str, float] = defaultdict(float)
    for event in events:
        ours[event.instruction] += event.seconds
    theirs = _chips_own_reading()
    assert set(ours) == set(theirs) == {"fusion", "fusion.1", "copy-start", "copy-done"}
    # JAX's reader rounds each event to whole nanoseconds (the trace keeps picoseconds)
    assert all(ours[name] == pytest.approx(theirs[name], abs=5 * 1e-9) for name in theirs)
    assert len({event.run for event in events}) == 5
    assert {event.device for event in events} == {"/device:TPU:0"}


def test_the_large_matmul_is_at_its_line_in_the_chips_program() -> None:
    """The chip's optimized program names the large matmul's fusion at its line of
    programs.py, and the trace gives that fusion nearly all of the step (a 4096³ product
    against a 512³ one)."""
    module = parse((CHIP / "two_matmuls.hlo.txt").read_text(encoding="utf-8"))
    lines = PROGRAMS.read_text(encoding="utf-8").splitlines()
    large = lines.index("    large = jnp.tanh(a @ b)") + 1
    small = lines.index("    small = jnp.tanh(c @ d)") + 1
    located = {
        name: module.located(module.instructions[name]).line for name in ("fusion", "fusion.1")
    }
    assert located == {"fusion": large, "fusion.1": small}
    events = trace_events(CHIP / "two_matmuls-trace", "jit_two_matmuls")
    assert not isinstance(events, str)
    share = sum(e.seconds for e in events if e.instruction == "fusion") / sum(
        e.seconds for e in events
    )
    assert share > 0.99


def _chips_release() -> str | None:
    """Why this machine's compile is not the chip's, or ``None`` where it is."""
    if libtpu_version() is None:
        return "libtpu is not installed (the tpu extra)"
    if (jax.__version__, libtpu_version()) != (MEASURED["jax"], MEASURED["libtpu"]):
        return (f"the chip was measured with JAX {MEASURED['jax']} and libtpu "
                f"{MEASURED['libtpu']}; this is JAX {jax.__version__}, "
                f"libtpu {libtpu_version()}")  # fmt: skip
    return None


@pytest.mark.skipif(_chips_release() is not None, reason=str(_chips_release()))
@pytest.mark.parametrize("name", sorted(MEASURED["programs"]))
def test_the_hbm_a_program_needs_is_what_the_chip_measured(
    name: str, run_cli: Any, tmp_path: Path
) -> None:
    """Compiled for one v5e chip here, each program needs (``peak.allocated``: arguments,
    outputs, temporaries and the code the chip loads) within 0.2 % of the HBM the chip
    needed free to run it, found by filling its memory until the step failed; what is on
    chip (VMEM) is apart and not counted."""
    chip = MEASURED["programs"][name]
    result = run_cli("lower", f"{PROGRAMS}:{name}", "--args-from", f"programs:make_{name}",
                     "--topology", "v5e:1x1", "--memory", "--format", "json",
                     cwd=PROGRAMS.parent)  # fmt: skip
    assert result.returncode == 0, result.describe()
    compiled = json.loads(result.stdout)["compiled"]
    peak, memory = compiled["peak"], compiled["memory"]
    assert (memory["arguments"], memory["outputs"], memory["temporaries"], peak["code"]) == (
        chip["arguments"], chip["outputs"], chip["temporaries"], chip["code_loaded"])  # fmt: skip
    assert peak["allocated"] == pytest.approx(chip["needed"], rel=0.002)
    assert all(space["space"] != "HBM" for space in peak["on_chip"])
    assert re.search(r"VMEM", json.dumps(peak["on_chip"])) or name == "train_step"


def test_the_chips_run_is_timed_by_the_users_line() -> None:
    """The chip's trace read as ``record --profile`` reads a run (``profile`` reads its own
    alike): the large matmul's line first, with the share of the device's time the chip's
    own events give that line (their ``source`` stat), ± 10 %; each step is one run."""
    report = Report(target="programs.py:two_matmuls", stage="jit", reached="compiled",
                    jax_version=MEASURED["jax"], platform="tpu", num_devices=1)  # fmt: skip
    events = trace_events(CHIP / "two_matmuls-trace", "jit_two_matmuls")
    text = (CHIP / "two_matmuls.hlo.txt").read_text(encoding="utf-8")
    profile = recorded_profile(report, text, events, calls=4)
    assert profile.unread is None and profile.steps == 4
    first = profile.by_line[0]
    lines = PROGRAMS.read_text(encoding="utf-8").splitlines()
    assert (Path(first.file or "").name, first.line) == (
        "programs.py", lines.index("    large = jnp.tanh(a @ b)") + 1)  # fmt: skip
    traced = share_by_source(CHIP / "two_matmuls-trace", f"programs.py:{first.line}")
    assert first.share == pytest.approx(traced, abs=0.10)
