"""Where the user's code is: the frames of a lowered module and of an error line are the
user's own, known by where modules are, never by a word in a path (issue 47, items 3-4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import error_line, run_cli, run_python

SIMPLE = """\
import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2


def broken(x):
    raise ValueError("boom")


JXINSPECT = {"f": {"args": "f32[4]"}, "broken": {"args": "f32[4]"}}
"""

_FILE_LOCATION = re.compile(r'loc\("([^"]+)":\d+')


def _files(module_text: str) -> set[str]:
    return set(_FILE_LOCATION.findall(module_text))


@pytest.mark.parametrize("subprocess", [False, True], ids=["forked", "new-process"])
def test_the_lowered_module_holds_the_users_frames_only(tmp_path: Path, subprocess: bool) -> None:
    (tmp_path / "simple.py").write_text(SIMPLE)
    result = run_cli("lower", "simple.py:f", "--show", "mlir", "--debug-info",
                     cwd=tmp_path, subprocess=subprocess)  # fmt: skip
    assert result.returncode == 0, result.describe()
    ours = _files(result.stdout)
    # the oracle: JAX's own lowering of the same function from a script, whose files are
    # the module's and the script's (the caller of .lower())
    raw = run_python(
        "import jax, jax.numpy as jnp, simple\n"
        "lowered = jax.jit(simple.f).lower(jnp.zeros(4, jnp.float32))\n"
        "try:\n"
        "    print(lowered.as_text(debug_info=True))\n"
        "except TypeError:  # 0.4 has no debug_info=: the module's own printer\n"
        "    print(lowered.compiler_ir('stablehlo').operation.get_asm(enable_debug_info=True))",
        cwd=tmp_path,
    )
    assert raw.returncode == 0, raw.describe()
    module = str(tmp_path / "simple.py")
    assert module in _files(raw.stdout)
    assert ours == {module}, ours


@pytest.mark.parametrize("folder", ["jax", "jxinspect", "lib/python3/importlib"])
def test_a_users_file_in_a_folder_named_like_a_library_keeps_its_line(
    tmp_path: Path, folder: str
) -> None:
    where = tmp_path / folder
    where.mkdir(parents=True)
    (where / "model.py").write_text(SIMPLE)
    result = run_cli("lower", f"{folder}/model.py:broken", cwd=tmp_path)
    assert result.returncode == 3, result.describe()
    assert error_line(result) == (
        f"error: tracing failed: ValueError: boom (at {where / 'model.py'}:9 in broken)"
    )
