"""A method target's ``self`` that holds a Python int (``self.tau: int``), through the
command: a class that is no pytree is built by its constructor (its defaults, or an int
that ``--dims`` sizes by its name) and staged as a static value, as raw ``jax.jit`` with
``static_argnums=0`` stages it; where its constructor needs more, the advice is a maker
that builds the object, never an array spec, and following it works."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import REPO, error_line, raw_main, run_cli

pytest.importorskip("equinox")
pytest.importorskip("jaxtyping")

DIMS = "batch=2,h=4,w=4"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(REPO / "tests" / "fixtures" / "augment.py", tmp_path / "augment.py")
    return tmp_path


def test_a_plain_self_is_built_by_its_constructor(folder: Path) -> None:
    result = run_cli("lower", "augment.py:TranslationAugmentation.__call__", "--dims", DIMS,
                     "--format", "json", cwd=folder)  # fmt: skip
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    raw = raw_main(f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("augment", {str(folder / "augment.py")!r})
m = sys.modules["augment"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
lowered = jax.jit(m.TranslationAugmentation.__call__, static_argnums=0).lower(
    m.TranslationAugmentation(), S(2, 4, 4))
""")
    assert [leaf["name"] for leaf in report["inputs"]] == [a["name"] for a in raw["args"]]
    assert [leaf["shape"] for leaf in report["inputs"]] == [[2, 4, 4]]
    assert (
        "self: built by TranslationAugmentation(), a Python object, staged as a static value"
        in report["inputs_from"]["choices"]
    )


def follow(line: str, folder: Path, target: str) -> int:
    """Write the maker the error line advises, its blanks filled (``tau=...`` → 1, an
    array → its abstract value), and run the target with it: the exit code."""
    code = re.search(r"`(def make_args\(\): .*?)`", line)
    assert code is not None, line
    body = code.group(1).replace("tau=...", "tau=1")
    body = body.replace("x = ...", 'x = jax.ShapeDtypeStruct((2, 4, 4), "float32")')
    assert "..." not in body, body
    imports = "import jax\nimport equinox as eqx\nfrom augment import *\n"
    (folder / "maker.py").write_text(imports + body + "\n", encoding="utf-8")
    result = run_cli("lower", target, "--args-from", "maker.py:make_args", cwd=folder)
    assert result.returncode == 0, result.describe()
    return result.returncode


@pytest.mark.parametrize(
    "cls, built",
    [
        ("Shift", "Shift(tau=...)"),
        ("DataclassShift", "DataclassShift(tau=...)"),
        ("EqxShift", "eqx.filter_eval_shape(EqxShift, tau=...)"),
    ],
)
def test_a_self_whose_constructor_needs_an_int_is_advised_a_maker_that_works(
    folder: Path, cls: str, built: str
) -> None:
    target = f"augment.py:{cls}.__call__"
    result = run_cli("lower", target, "--dims", DIMS, cwd=folder)
    assert result.returncode == 2, result.describe()
    line = error_line(result)
    assert "self=f32" not in line and '--kwargs "self=' not in line
    assert line.endswith(
        f"its constructor needs tau); build it in a maker, e.g. `def make_args(): self = "
        f"{built}; x = ...; return (self, x)`, and give --args-from make_args (a Python int "
        "argument named like a dim takes its --dims size)"
    )
    assert follow(line, folder, target) == 0
    sized = run_cli("lower", target, "--dims", DIMS + ",tau=1", cwd=folder)  # the note
    assert sized.returncode == 0, sized.describe()
