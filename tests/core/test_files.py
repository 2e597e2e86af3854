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


def test_write_in_writes_in_the_folder_held_open_never_through_a_link(tmp_path: Path) -> None:
    """The folder is the one opened: renamed away and replaced by a link to someone's
    folder, the write still lands in it; a link at the name is replaced, never followed;
    a stale temporary of the same name goes, one of another name stays."""
    folder, victim = tmp_path / "cache", tmp_path / "victim"
    folder.mkdir()
    victim.mkdir()
    (victim / "entry.json").write_text("theirs")
    (folder / "entry.json").symlink_to(victim / "entry.json")
    stale = folder / ".entry.json.abcd1234.tmp"
    other = folder / ".other.json.abcd1234.tmp"
    for path in (stale, other):
        path.write_text("")
        os.utime(path, (time.time() - 2 * files.STALE_S,) * 2)
    handle = os.open(folder, os.O_RDONLY)
    try:
        moved = tmp_path / "moved"
        folder.rename(moved)
        folder.symlink_to(victim)
        files.write_in(handle, "entry.json", "ours")
    finally:
        os.close(handle)
    assert (victim / "entry.json").read_text() == "theirs"
    assert sorted(p.name for p in victim.iterdir()) == ["entry.json"]
    assert (moved / "entry.json").read_text() == "ours"
    assert not (moved / "entry.json").is_symlink()
    assert sorted(p.name for p in moved.iterdir()) == [".other.json.abcd1234.tmp", "entry.json"]
