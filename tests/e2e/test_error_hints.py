"""An error that the user can fix says how, and following it works: too few devices (a
module that builds a mesh at import; pmap over an axis longer than the device count,
where the release refuses it: the older pmap lowers one replica anyway), and a number
given as an argument where the code needs its concrete value (traced, as jit traces it)."""

from __future__ import annotations

from pathlib import Path

from helpers import error_line, run_cli

MESH_AT_IMPORT = """
import jax

MESH = jax.make_mesh((4, 2), ("data", "model"))


def f(x):
    return x * 2


JXINSPECT = {"f": {"args": "f32[8]"}}
"""

PMAP = """
def step(x):
    return x * 2


JXINSPECT = {"step": {"stage": "pmap", "args": "f32[8,4]"}}
"""


def test_a_mesh_built_at_import_names_the_devices_it_needs(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MESH_AT_IMPORT, encoding="utf-8")
    failed = run_cli("lower", "m.py:f", cwd=tmp_path)
    assert failed.returncode == 3, failed.describe()
    assert "simulate them with --devices 8" in error_line(failed)
    again = run_cli("lower", "m.py:f", "--devices", "8", cwd=tmp_path)
    assert again.returncode == 0, again.describe()


def test_pmap_over_more_than_the_devices_names_the_count(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(PMAP, encoding="utf-8")
    first = run_cli("lower", "p.py:step", cwd=tmp_path)
    if first.returncode == 3:  # 0.8 on: pmap places the axis on that many devices
        assert "simulate them with --devices 8" in error_line(first)
    else:  # the older pmap lowers one replica's program whatever the count
        assert first.returncode in (0, 1), first.describe()
    again = run_cli("lower", "p.py:step", "--devices", "8", cwd=tmp_path)
    assert again.returncode in (0, 1), again.describe()


LOOP = """
def f(x, n):
    for _ in range(n):
        x = x * 2
    return x


JXINSPECT = {"f": {"args": "f32[4], 3"}}
"""


def test_a_number_the_code_needs_concrete_names_the_static_flag(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP, encoding="utf-8")
    failed = run_cli("lower", "loop.py:f", cwd=tmp_path)
    assert failed.returncode == 3, failed.describe()
    line = error_line(failed)
    assert "(n=3): make it static with --static-argnums 1" in line, line
    again = run_cli("lower", "loop.py:f", "--static-argnums", "1", cwd=tmp_path)
    assert again.returncode == 0, again.describe()


MAKER_MESH = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def f(x):
    return x * 2


def make():
    mesh = jax.make_mesh((4, 2), ("data", "model"))
    return (jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("data"))),)
"""


def test_a_maker_that_builds_a_mesh_names_the_devices_it_needs(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MAKER_MESH, encoding="utf-8")
    failed = run_cli("lower", "m.py:f", "--args-from", "make", cwd=tmp_path)
    assert failed.returncode == 3, failed.describe()
    assert error_line(failed).endswith(
        "; --args-from make builds a mesh of 8 devices: simulate them with --devices 8 (or "
        "`devices: 8` in its declaration or configuration)"
    ), failed.describe()
    again = run_cli("lower", "m.py:f", "--args-from", "make", "--devices", "8", cwd=tmp_path)
    assert again.returncode in (0, 1), again.describe()
