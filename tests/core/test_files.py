"""Writing files whole: a temporary file renamed over the target; the leftovers of
killed writes of the same file removed once stale, and nothing else."""

from __future__ import annotations

import os
import time
from pathlib import Path

from jxinspect.core import files


def test_a_write_removes_stale_temporaries_of_its_own_file_only(tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    old = time.time() - files.STALE_S - 60
    stale = tmp_path / ".baseline.json.k1ll3d_x.tmp"  # as tempfile.mkstemp names them
    fresh = tmp_path / ".baseline.json.wr1t1ng_.tmp"  # a write under way
    other = tmp_path / ".other.json.k1ll3d_x.tmp"  # another file's
    unlike = tmp_path / ".baseline.json.mine.tmp"  # not a name the writer makes
    folder = tmp_path / ".baseline.json.f0ld3r__.tmp"
    for path in (stale, fresh, other, unlike):
        path.write_text("{", encoding="utf-8")
    folder.mkdir()
    for path in (stale, other, unlike, folder):
        os.utime(path, (old, old))
    files.write_atomically(target, "{}\n")
    assert target.read_text(encoding="utf-8") == "{}\n"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(p.name for p in (target, fresh, other, unlike, folder))
