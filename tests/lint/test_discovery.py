"""Which targets ``jxinspect lint`` finds when no target is listed: modules under the
project root that declare ``JXINSPECT``, hidden folders and excluded files left out,
each staged with its declaration over the configuration's ``defaults``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from helpers import CliResult

DECLARED = 'JXINSPECT = {"f": {"args": "f32[3]", "devices": 2}}\ndef f(x):\n    return x\n'
TOO_FEW = (
    "mesh data=8 needs 8 devices but the cpu backend has 2; use a smaller mesh, "
    "--devices 8 on CPU, or --abstract"
)
"""What a target declaring 2 devices under the defaults' ``mesh: data=8`` fails with."""


def test_discovery_skips_hidden_folders_and_excluded_files(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    for name in ("models/a.py", "models/old_b.py", ".venv/c.py", "models/sub/d.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(DECLARED, encoding="utf-8")
    notes = "# mentions JXINSPECT but declares nothing\n"
    (tmp_path / "models/notes.py").write_text(notes, encoding="utf-8")
    (tmp_path / "models/broken.py").write_text("JXINSPECT = {\n", encoding="utf-8")
    (tmp_path / "jxinspect.yaml").write_text(
        "exclude: ['models/old_*']\ndefaults: {devices: 8, mesh: 'data=8'}\n", encoding="utf-8"
    )
    result = run_cli("lint", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 3, result.describe()
    targets = json.loads(result.stdout)["targets"]
    assert [(t["target"], t["file"], t["line"], t["error_kind"], t["error"]) for t in targets] == [
        ("models/a.py:f", "models/a.py", 2, "usage", TOO_FEW),  # declared devices, defaults' mesh
        (
            "models/broken.py",
            "models/broken.py",
            None,
            "user-code",
            "syntax error in models/broken.py:1: '{' was never closed; fix the file and run again",
        ),
        ("models/sub/d.py:f", "models/sub/d.py", 2, "usage", TOO_FEW),
    ]
