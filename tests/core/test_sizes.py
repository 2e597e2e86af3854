"""Sizes checked before work (end to end through the installed command).

* A simulated device count, or a concrete mesh, past what one process can simulate is
  one line and exit 2 (pointing at ``--abstract``), from flags and from the lint
  configuration alike, instead of jaxlib's crash.
* ``--compile`` refuses an array XLA cannot size (over 2**63-1 bytes) before XLA aborts
  the process; lowering the same program works.
* The sharding pictures of an abstract mesh of 16.7 million devices are drawn from its
  blocks: ``--show sharding`` and the HTML report finish (the timeout is generous; speed
  is measured by ``bench/sharding_view.py``) and say the right thing. The pictures equal,
  on many small layouts, the ones got by going through every device.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import shutil
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import FIXTURES, CliResult, error_line, jxinspect_command, run_cli

from jxinspect.core.model import Input, Mesh, Report, Sharding
from jxinspect.render.report import sharding_view
from jxinspect.tracer import seam
from jxinspect.tracer.devices import MAX_SIMULATED_DEVICES

TARGETS = FIXTURES / "targets.py"
abstract = pytest.mark.skipif(
    not seam.abstract_meshes_lower(),
    reason=f"lowering for an abstract mesh needs JAX {seam.ABSTRACT_SINCE}",
)

# ---- simulated devices -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--devices", "99999999999"), "--devices 99999999999: one process can simulate at most"),
        (("--devices", str(MAX_SIMULATED_DEVICES + 1)), f"--devices {MAX_SIMULATED_DEVICES + 1}:"),
        (("--mesh", "data=100000,model=100000"), "a concrete mesh of 10000000000 devices"),
    ],
)
def test_too_many_simulated_devices_is_one_line(options: tuple[str, ...], says: str) -> None:
    result = run_cli("lower", f"{TARGETS}:double", "--args", "f32[8]", *options)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert says in line and "--abstract" in line
    assert f"at most {MAX_SIMULATED_DEVICES} CPU devices" in line


@abstract
def test_the_same_mesh_made_abstract_lowers() -> None:
    mesh = ("--mesh", "data=1000,model=1000")  # a million devices
    result = run_cli("lower", f"{TARGETS}:double", "--args", "f32[2000@data,1000@model]",
                     "--abstract", "--platform", "tpu", *mesh)  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert "tpu, 1000000 devices" in result.stdout
    assert "data=1000,model=1000 (abstract)" in result.stdout


@abstract
def test_a_sharding_over_more_devices_than_jax_counts_is_one_line() -> None:
    # jaxlib counts a sharding's devices in 32 bits: past 2**31-1 it throws std::bad_cast
    mesh = ("--mesh", "data=100000,model=100000")
    result = run_cli("lower", f"{TARGETS}:double", "--args", "f32[8]", "--in-specs", "P('data')",
                     "--abstract", "--platform", "tpu", *mesh)  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert "a sharding over a mesh of 10000000000 devices" in error_line(result)


@abstract
@pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("sh"),
                    reason="the address-space limit is set with the shell's ulimit -v")  # fmt: skip
def test_an_abstract_mesh_that_would_not_fit_in_memory_is_one_line() -> None:
    """JAX holds 8 bytes per device of an abstract mesh while it lowers for it (8.5 GB at
    2**30 devices): where the process may not have that (here ``ulimit -v`` 6 GiB), one
    line and exit 2 before JAX starts, instead of the kernel's kill."""
    limit = f'ulimit -v {6 << 20} && exec "$@"'
    result = run_cli("lower", f"{TARGETS}:double", "--args", "f32[1073741824@data]",
                     "--abstract", "--platform", "tpu", "--mesh", "data=1073741824",
                     command=("sh", "-c", limit, "sh", *jxinspect_command()))  # fmt: skip
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "an abstract mesh of 1073741824 devices" in line and "8.0 GiB" in line, line
    assert "use a smaller mesh" in line


def test_diff_debug_refuses_too_many_devices() -> None:
    target = f"{TARGETS}:double"
    result = run_cli("diff-debug", target, target, "--args", "f32[8]", "--devices", "99999999999")
    assert result.returncode == 2, result.describe()
    assert "one process can simulate at most" in error_line(result)


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("jxinspect.yaml", 'targets:\n  - target: m.py:double\n    args: "f32[8]"\n'
                           '    mesh: "data=100000,model=100000"\n'),
        ("pyproject.toml", '[tool.jxinspect]\ndefaults = {devices = 99999999999}\n'
                           '[[tool.jxinspect.targets]]\ntarget = "m.py:double"\nargs = "f32[8]"\n'),
    ],
)  # fmt: skip
def test_lint_refuses_a_configuration_asking_too_many(
    tmp_path: Path, name: str, config: str, jobs: str
) -> None:
    root = tmp_path
    (root / "m.py").write_text(TARGETS.read_text(encoding="utf-8"), encoding="utf-8")
    (root / name).write_text(config, encoding="utf-8")
    result = run_cli("lint", "--jobs", jobs, cwd=root)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "one process can simulate at most" in line and "abstract" in line


# ---- compiling huge arrays ---------------------------------------------------------------


def test_compile_refuses_an_array_xla_cannot_size() -> None:
    args = ("lower", f"{TARGETS}:double", "--args", "f32[99999999999,99999999999]")
    result = run_cli(*args, "--compile")
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "input x is f32[99999999999,99999999999]" in line and "without --compile" in line
    lowered = run_cli(*args)  # a ShapeDtypeStruct allocates nothing: lowering is fine
    assert lowered.returncode == 0, lowered.describe()
    assert "f32[99999999999,99999999999]" in lowered.stdout


def test_compile_refuses_an_output_just_past_the_limit() -> None:
    # 2**61 f32 elements are 2**63 bytes: one byte too many (XLA aborts on it)
    result = run_cli("lower", f"{TARGETS}:double", "--args", "f32[2147483648,1073741824]",
                     "--compile")  # fmt: skip
    assert result.returncode == 2, result.describe()
    assert "XLA cannot compile an array over 2**63-1 bytes" in error_line(result)


def test_compile_accepts_a_huge_array_xla_can_size() -> None:
    # 2**62 bytes: XLA compiles it (nothing is allocated), so jxinspect must not refuse it
    result = run_cli("lower", f"{TARGETS}:double", "--args", "f32[1073741824,1073741824]",
                     "--compile", "--format", "json")  # fmt: skip
    assert result.returncode == 0, result.describe()
    assert '"reached": "compiled"' in result.stdout


# ---- pictures of a mesh of millions of devices -------------------------------------------

HUGE = ("lower", f"{TARGETS}:matmul", "--abstract", "--platform", "tpu", "--auto", "--mesh",
        "a=4096,b=4096", "--args", "f32[8192@a,8192@b], f32[8192@b,4096]")  # fmt: skip
"""On Auto axes: on Explicit ones the contraction over ``b`` is JAX's ShardingTypeError."""


HUGE_TIMEOUT_S = 30
"""Generous: these runs take about a second (as long as plain ``lower``); drawn device by
device they took 65 s (``--show sharding``) and 117 s (HTML) at 6.4 GB."""


def run_huge(*extra: str) -> CliResult:
    return run_cli(*HUGE, *extra, timeout=HUGE_TIMEOUT_S)


@abstract
def test_sharding_view_of_16m_devices() -> None:
    result = run_huge("--show", "sharding")
    assert result.returncode == 0, result.describe()
    text = result.stdout[result.stdout.index("── sharding ──") :]
    assert "abstract mesh a=4096,b=4096 (16777216 devices)" in text
    # x: 4096 × 4096 distinct shards of f32[2,2], one device each
    assert "in  x  f32[8192,8192] → f32[2,2] per device (16 B)" in text
    assert "rows: dim 0 split 4096 ways by 'a'" in text
    assert "columns: dim 1 split 4096 ways by 'b'" in text
    assert "showing 4 of 4096 rows (the first 3 and the last 1) and 4 of 4096 columns" in text
    assert re.search(r"8190:8192 \|\s+16773120\s+\|\s+16773121\s+\|", text)
    assert re.search(r"\|\s+16777215\s+\|", text)
    # w: 4096 distinct shards along 'b', each held by the 4096 devices along 'a'
    assert "in  w  f32[8192,4096] → f32[2,4096] per device (32.0 KiB)" in text
    assert "each block is held by 4096 devices (replicated over 'a')" in text
    assert re.search(r"2:4 \|\s+1,4097,… \(4096\)\s+\|", text)
    assert re.search(r"8190:8192 \| 4095,8191,… \(4096\) \|", text)


@abstract
def test_html_report_of_16m_devices() -> None:
    result = run_huge("--format", "html")
    assert result.returncode == 0, result.describe()
    page = result.stdout
    assert page.count("class=picture>") == 2
    assert page.count("<rect") == 25 + 5
    assert ">16777215<" in page and "4095,8191,… (4096)" in page
    assert "device 16773121" in page  # a cell's tooltip names its device
    assert "devices 1, 4097, 8193" in page and " …</title>" in page


# ---- pictures from blocks equal pictures from every device -------------------------------


def _by_every_device(sharding: Sharding, rank: int) -> list[tuple[int, ...]]:
    """The block index of every device, going through them all (the former way)."""
    pieces = sharding.pieces()
    if sharding.mesh is None or sharding.tiles:
        copies = max(sharding.replicas, 1)
        result = []
        for device in range(math.prod(pieces) * copies):
            linear, index = device // copies, []
            for n in reversed(pieces):
                linear, block = divmod(linear, n)
                index.append(block)
            result.append(tuple(reversed(index)))
        return result
    sizes = dict(sharding.mesh.axes)
    blocks = []
    for device in range(sharding.mesh.size):
        coords, rest = {}, device
        for name in reversed(list(sizes)):
            rest, coords[name] = divmod(rest, sizes[name])
        index = []
        for dim in range(rank):
            block = 0
            for axis in sharding.spec[dim] if dim < len(sharding.spec) else ():
                base, _, sub = axis.partition(":(")
                total = sizes.get(base, 1)
                if sub:
                    pre, size = (int(p) for p in sub.split(")"))
                    coordinate = (coords.get(base, 0) // max(total // (pre * size), 1)) % size
                else:
                    coordinate, size = coords.get(base, 0), total
                block = block * size + coordinate
            index.append(block)
        blocks.append(tuple(index))
    return blocks


def _random_layouts(seed: int) -> list[tuple[Sharding, tuple[int, ...]]]:
    rng = random.Random(seed)
    found = []
    for _ in range(60):
        sizes = [rng.choice([1, 2, 3, 4, 8]) for _ in range(rng.randint(1, 3))]
        mesh = Mesh(tuple((f"m{i}", n) for i, n in enumerate(sizes)))
        rank = rng.randint(1, 3)
        names = [f"m{i}" for i, n in enumerate(sizes) if n > 1]
        rng.shuffle(names)
        spec: list[tuple[str, ...]] = [() for _ in range(rank)]
        for name in names:
            if rng.random() < 0.7:
                if sizes[int(name[1:])] == 4 and rng.random() < 0.4:
                    # split a 4 axis into two sub-axes on different dimensions
                    spec[rng.randrange(rank)] += (f"{name}:(1)2",)
                    spec[rng.randrange(rank)] += (f"{name}:(2)2",)
                else:
                    spec[rng.randrange(rank)] += (name,)
        pieces = [math.prod(mesh.axis_size(a) for a in axes) for axes in spec]
        shape = tuple(p * rng.randint(1, 3) for p in pieces)
        used = math.prod(pieces)
        replicas = mesh.size // used
        found.append((Sharding("tiled", spec=tuple(spec), mesh=mesh, replicas=replicas), shape))
        tiles = tuple(rng.choice([1, 2, 3]) for _ in range(rank))
        copies = rng.choice([1, 2])
        gspmd = Sharding("tiled", spec=(), mesh=None, tiles=tiles, replicas=copies, source="gspmd")
        found.append((gspmd, tuple(t * 2 for t in tiles)))
    return found


def test_pictures_from_blocks_equal_pictures_from_every_device() -> None:
    checked = 0
    for sharding, shape in _random_layouts(11):
        leaf = Input(0, "x", "x", "x", "ok", shape, "float32", sharding)
        devices = sharding.mesh.size if sharding.mesh else math.prod(sharding.tiles)
        report = Report(target="t.py:f", stage="jit", reached="lowered", jax_version="0",
                        platform="cpu", num_devices=devices, mesh=sharding.mesh,
                        inputs=(leaf,))  # fmt: skip
        pictures = sharding_view.layouts(report).pictures
        if sharding.is_replicated:
            assert not pictures
            continue
        (pic,) = pictures
        expected: dict[tuple[str, ...], list[int]] = defaultdict(list)
        rank, pieces = len(shape), sharding.pieces()
        split = sorted(d for d in range(rank) if pieces[d] > 1)
        grid = sorted(sorted(split, key=lambda d: -pieces[d])[:2])
        for device, index in enumerate(_by_every_device(sharding, rank)):
            expected[tuple(f"{index[d] * (shape[d] // pieces[d])}:" for d in grid)].append(device)
        for row_label, row in zip(pic.row_labels, pic.cells):
            for col_label, cell in zip(pic.col_labels, row):
                if row_label is None or col_label is None:
                    assert cell is None  # a row or column left out
                    continue
                key = tuple(x.split(":")[0] + ":" for x in (row_label, col_label) if x != "all")
                assert cell == tuple(expected[key]), (sharding, shape, key)
                checked += 1
    assert checked > 300


def test_a_cell_of_millions_of_devices_is_described_not_listed() -> None:
    mesh = Mesh((("a", 2), ("b", 4096), ("c", 2048)), abstract=True)
    sharding = Sharding("tiled", spec=(("a",),), mesh=mesh, replicas=4096 * 2048)
    leaf = Input(0, "x", "x", "x", "ok", (8,), "float32", sharding)
    report = Report(target="t.py:f", stage="jit", reached="lowered", jax_version="0",
                    platform="tpu", num_devices=mesh.size, mesh=mesh, inputs=(leaf,))  # fmt: skip
    (pic,) = sharding_view.layouts(report).pictures
    first, second = pic.cells[0]
    assert isinstance(first, sharding_view.DeviceSet) and len(first) == 4096 * 2048
    assert sharding_view.devices_text(first) == "0-8388607"
    assert sharding_view.devices_text(second) == "8388608-16777215,… (8388608)"
    assert list(itertools.islice(second, 3)) == [8388608, 8388609, 8388610]
    # held along the last axis: a run per device, the text stops after a few
    by_c = Sharding("tiled", spec=(("c",),), mesh=mesh, replicas=2 * 4096)
    leaf = Input(0, "x", "x", "x", "ok", (2048,), "float32", by_c)
    report = Report(target="t.py:f", stage="jit", reached="lowered", jax_version="0",
                    platform="tpu", num_devices=mesh.size, mesh=mesh, inputs=(leaf,))  # fmt: skip
    (pic,) = sharding_view.layouts(report).pictures
    assert sharding_view.devices_text(pic.cells[0][1]) == "1,2049,… (8192)"
