"""One resolver for ``lower``, ``diff-debug`` and ``lint``: the same target gives the same
options, whichever command stages it, whether its module's ``JXINSPECT`` is plain data or
built when the module is imported.

Layers, weakest first: configuration ``defaults``, the declaration, then the flags or the
configuration's entry for the target.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cli

# A declaration only the import can read: its mesh (8 devices) must still be simulated,
# and it must win over the configuration's defaults (mesh data=2).
BUILT_AT_IMPORT = """\
import jax

def _entry(devices):
    return {"args": "f32[8,4]", "mesh": f"data={devices}", "in_specs": "P('data')"}

JXINSPECT = {name: _entry(8) for name in ("step",)}

def step(x):
    return x * 2
"""

PLAIN = """\
JXINSPECT = {"step": {"args": "f32[8,4]", "mesh": "data=8", "in_specs": "P('data')"}}

def step(x):
    return x * 2
"""


def project(tmp_path: Path, module: str) -> Path:
    (tmp_path / "model.py").write_text(module, encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text(
        "defaults: {mesh: 'data=2'}\ntargets:\n  - target: model.py:step\n", encoding="utf-8"
    )
    return tmp_path


def lowered_mesh(report: dict[str, object]) -> object:
    return report["mesh"]


def test_lower_diff_and_lint_agree_on_a_declaration_built_at_import(tmp_path: Path) -> None:
    root = project(tmp_path, BUILT_AT_IMPORT)

    lower = run_cli("lower", "model.py:step", "--format", "json", cwd=root)
    assert lower.returncode == 0, lower.describe()
    assert lowered_mesh(json.loads(lower.stdout)) == "data=8"

    diff = run_cli("diff-debug", "model.py", "model.py", "--format", "json", cwd=root)
    assert diff.returncode == 0, diff.describe()

    lint = run_cli("lint", "--format", "json", cwd=root)
    assert lint.returncode == 0, lint.describe()
    (target,) = json.loads(lint.stdout)["targets"]
    assert target["target"] == "model.py:step" and target["error"] is None, target
    assert target["reached"] == "lowered"


def test_lint_puts_the_declaration_over_the_configuration_defaults(tmp_path: Path) -> None:
    for module in (PLAIN, BUILT_AT_IMPORT):
        root = project(tmp_path, module)
        lint = run_cli("lint", "--format", "json", cwd=root)
        assert lint.returncode == 0, lint.describe()
        (target,) = json.loads(lint.stdout)["targets"]
        assert target["error"] is None, target
        # sharded over the declared 8 devices, not the defaults' 2: no replicated input
        lower = run_cli("lower", "model.py:step", "--format", "json", cwd=root)
        report = json.loads(lower.stdout)
        assert lowered_mesh(report) == "data=8"
        assert report["inputs"][0]["sharding"]["spec"] == [["data"], []]


def test_flags_win_over_a_declaration_built_at_import(tmp_path: Path) -> None:
    root = project(tmp_path, BUILT_AT_IMPORT)
    lower = run_cli("lower", "model.py:step", "--mesh", "data=4", "--format", "json", cwd=root)
    assert lower.returncode == 0, lower.describe()
    assert lowered_mesh(json.loads(lower.stdout)) == "data=4"


def test_sibling_folders_each_import_their_own_helpers(tmp_path: Path) -> None:
    """Example folders that each hold a ``models.py``: every target sees its own, with one
    worker or two."""
    for folder, helper in (("ex1", "def scale(x):\n    return x * 2\n"),
                           ("ex2", "def shift(x):\n    return x + 1\n")):  # fmt: skip
        name = helper.split()[1].partition("(")[0]
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "models.py").write_text(helper, encoding="utf-8")
        (tmp_path / folder / "train.py").write_text(
            f'import models\n\nJXINSPECT = {{"step": {{"args": "f32[4]"}}}}\n\n\n'
            f"def step(x):\n    return models.{name}(x)\n",
            encoding="utf-8",
        )
    for jobs in ("1", "2"):
        lint = run_cli("lint", ".", "--jobs", jobs, "--format", "json", cwd=tmp_path)
        assert lint.returncode == 0, lint.describe()
        targets = json.loads(lint.stdout)["targets"]
        assert [(t["target"], t["error"]) for t in targets] == [
            ("ex1/train.py:step", None),
            ("ex2/train.py:step", None),
        ]


def test_flags_giving_inputs_replace_a_declared_maker_and_back(tmp_path: Path) -> None:
    """``--args`` over a declared ``args_from`` (and ``--args-from`` over declared
    ``args``): the inputs the user gives are the ones staged."""
    (tmp_path / "model.py").write_text(
        'JXINSPECT = {"step": {"args_from": "make"}, "other": {"args": "f32[2]"}}\n\n\n'
        "def make():\n    import jax\n    return (jax.ShapeDtypeStruct((3,), 'float32'),)\n\n\n"
        "def step(x):\n    return x * 2\n\n\nother = step\n",
        encoding="utf-8",
    )
    lower = run_cli("lower", "model.py:step", "--args", "f32[5]", "--format", "json", cwd=tmp_path)
    assert lower.returncode == 0, lower.describe()
    assert json.loads(lower.stdout)["inputs"][0]["shape"] == [5]
    lower = run_cli("lower", "model.py:other", "--args-from", "make", "--format", "json",
                    cwd=tmp_path)  # fmt: skip
    assert lower.returncode == 0, lower.describe()
    assert json.loads(lower.stdout)["inputs"][0]["shape"] == [3]


def test_lower_stages_a_target_whose_inputs_the_configuration_gives(tmp_path: Path) -> None:
    """``jxinspect lower models/mlp.py:loss`` in the sample repository: its inputs are in
    ``jxinspect.yaml`` (as ``lint`` there stages it), and so are the ``defaults`` (8
    devices)."""
    import shutil

    from helpers import REPO

    ignore = shutil.ignore_patterns("__pycache__", "*.json")
    repo = Path(shutil.copytree(REPO / "sample_repo", tmp_path / "repo", ignore=ignore))
    lower = run_cli("lower", "models/mlp.py:loss", "--format", "json", cwd=repo)
    assert lower.returncode == 0, lower.describe()
    report = json.loads(lower.stdout)
    assert [leaf["shape"] for leaf in report["inputs"]][-2:] == [[32, 784], [32]]
    assert report["num_devices"] == 8
    # from a folder inside the project too; the flags still win over the entry
    lower = run_cli("lower", "mlp.py:loss", "--args", "{'w1': f32[3,4], 'b1': f32[4], "
                    "'w2': f32[4,2], 'b2': f32[2]}, f32[5,3], i32[5]", "--format", "json",
                    cwd=repo / "models")  # fmt: skip
    assert lower.returncode == 0, lower.describe()
    assert json.loads(lower.stdout)["inputs"][-1]["shape"] == [5]


COMPUTED = """\
LAYERS = 3
JXINSPECT = {"f": {"args": ", ".join(["f32[3]"] * LAYERS)}}


def f(a, b, c):
    return a + b + c
"""


def test_a_declaration_computed_at_import_gives_the_inputs(tmp_path: Path) -> None:
    """A ``JXINSPECT`` entry built by an expression the source cannot fold: ``lower``,
    ``diff-debug`` and ``lint`` read it from the imported module."""
    (tmp_path / "model.py").write_text(COMPUTED, encoding="utf-8")
    lower = run_cli("lower", "model.py:f", "--format", "json", cwd=tmp_path)
    assert lower.returncode == 0, lower.describe()
    assert [leaf["shape"] for leaf in json.loads(lower.stdout)["inputs"]] == [[3], [3], [3]]
    diff = run_cli("diff-debug", "model.py", "model.py", "--format", "json", cwd=tmp_path)
    assert diff.returncode == 0, diff.describe()
    lint = run_cli("lint", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert lint.returncode == 0, lint.describe()
    (target,) = json.loads(lint.stdout)["targets"]
    assert target["error"] is None and target["reached"] == "lowered", target
