"""The cache's key (``cache.secret``): taken only from a folder and a file of this user's
that no one else can change or read, checked on what was opened, so no link, other
owner's file or hard link is ever taken for it, even one swapped in while it is read.

The tests run as root; another user is a file ``os.chown``-ed to another uid."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from helpers import run_cli

from jxinspect.lint import cache

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="no file owners here")

OTHER_UID = 54321
"""An uid no one on the machine has: the file of another user."""
THEIRS = "ab" * 32
"""A key another user knows (and could forge entries with)."""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(cache.SECRET_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    return tmp_path / "home-cache" / "jxinspect"


def theirs(path: Path) -> Path:
    path.write_text(THEIRS + "\n", encoding="ascii")
    path.chmod(0o600)
    os.chown(path, OTHER_UID, OTHER_UID)
    return path


def refused(match: str) -> None:
    with pytest.raises(cache.Untrusted, match=match):
        cache.secret()


def test_a_key_is_made_once_and_read_back(folder: Path) -> None:
    first = cache.secret()
    assert len(first) == 32 and cache.secret() == first
    assert [p.name for p in folder.iterdir()] == [cache.KEY_FILE]  # no temporary left
    assert (folder.stat().st_mode & 0o777, (folder / cache.KEY_FILE).stat().st_mode & 0o777) == (
        0o700,
        0o600,
    )


def test_another_users_key_is_refused(folder: Path) -> None:
    folder.mkdir(parents=True)
    theirs(folder / cache.KEY_FILE)
    refused("belongs to another user")


def test_a_key_folder_of_another_user_or_that_others_can_write_is_refused(folder: Path) -> None:
    cache.secret()
    folder.chmod(0o770)  # a group's members could swap the key
    refused(r"folder .* can be changed by other users; .*chmod 700 it")
    folder.chmod(0o702)
    refused("can be changed by other users")
    folder.chmod(0o700)
    os.chown(folder, OTHER_UID, -1)
    refused(r"folder .* belongs to another user")


def test_a_key_that_is_a_link_or_has_another_name_is_refused(folder: Path, tmp_path: Path) -> None:
    folder.mkdir(parents=True)
    mine = tmp_path / "elsewhere.key"
    mine.write_text("cd" * 32 + "\n", encoding="ascii")
    mine.chmod(0o600)
    (folder / cache.KEY_FILE).symlink_to(mine)
    refused(r"a link")
    (folder / cache.KEY_FILE).unlink()
    os.link(mine, folder / cache.KEY_FILE)  # the same file under a name others may read
    refused(r"other names \(hard links\)")


def test_a_link_to_another_users_key_swapped_in_while_it_is_read_is_never_taken(
    folder: Path, tmp_path: Path
) -> None:
    mine = cache.secret()
    key = folder / cache.KEY_FILE
    known = theirs(tmp_path / "their.key")
    spare = folder / "spare"
    text = key.read_bytes()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            spare.unlink(missing_ok=True)
            spare.symlink_to(known)
            os.replace(spare, key)
            spare.write_bytes(text)
            spare.chmod(0o600)
            os.replace(spare, key)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    seen: set[bytes] = set()
    links = 0
    try:
        for _ in range(3000):
            try:
                seen.add(cache.secret())
            except cache.Untrusted as err:
                assert "a link" in str(err) or "another user" in str(err), err
                links += 1
    finally:
        stop.set()
        thread.join(10)
    assert seen == {mine}  # read whenever the key was there, never theirs
    assert links, "the swap never showed: the test did not race"


def test_lint_with_a_group_writable_key_folder_stages_and_says_why(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text(
        "JXINSPECT = {'f': {'args': 'f32[4]'}}\n\n\ndef f(x):\n    return x * 2\n", "utf-8"
    )
    keys = tmp_path / "home-cache" / "jxinspect"
    keys.mkdir(parents=True, mode=0o700)
    keys.chmod(0o2770)
    env = {"XDG_CACHE_HOME": str(tmp_path / "home-cache")}
    for _ in range(2):
        result = run_cli("lint", "-v", ".", cwd=project, env=env, timeout=60)
        assert result.returncode == 0, result.describe()
        assert "a.py:f: staged" in result.stderr, result.describe()
        assert (
            f"warning: the cache's folder {keys} can be changed by other users; the cache is "
            "not used (chmod 700 it)\n" in result.stderr
        ), result.describe()
    assert list(keys.iterdir()) == []  # no key made where others could swap it
