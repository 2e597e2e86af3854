"""The artifact reader: regular files only, inside their folder, bounded; removal of
what this tool wrote only."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from jxinspect.core import artifacts
from jxinspect.core.errors import UsageError


def test_a_regular_file_inside_its_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"{}")
    assert artifacts.read_bytes(tmp_path / "a.json", limit=10, inside=tmp_path) == b"{}"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "a.json"
    os.mkfifo(fifo)
    done: list[str] = []

    def read() -> None:
        try:
            artifacts.read_bytes(fifo, limit=10, inside=tmp_path)
        except UsageError as err:
            done.append(str(err))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(10)
    assert done and "FIFO" in done[0], done


def test_open_regular_gives_a_file_to_hold_and_refuses_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.lock").write_bytes(b"")
    with artifacts.open_regular(tmp_path / "a.lock", inside=tmp_path) as file:
        assert file.read() == b""
    os.mkfifo(tmp_path / "b.lock")  # returns at once: nothing waits for a writer
    with pytest.raises(UsageError, match=r"b.lock is not a regular file \(a FIFO\)"):
        artifacts.open_regular(tmp_path / "b.lock", inside=tmp_path)
    with pytest.raises(UsageError, match=r"is not a regular file \(a folder\)"):
        artifacts.open_regular(tmp_path, shown="the folder")


def test_a_link_to_a_device_or_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "rec"
    inner.mkdir()
    (tmp_path / "secret").write_text("root:x:0:0")
    (inner / "out").symlink_to(tmp_path / "secret")
    with pytest.raises(UsageError, match="leads out of"):
        artifacts.read_bytes(inner / "out", limit=100, inside=inner)
    (inner / "zero").symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="leads out of"):
        artifacts.read_bytes(inner / "zero", limit=100, inside=inner)
    with pytest.raises(UsageError, match="a device"):
        artifacts.read_bytes(inner / "zero", limit=100)


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big"
    with open(path, "wb") as file:
        file.truncate(1 << 30)  # sparse: nothing on disk
    with pytest.raises(UsageError, match="larger than 1 MiB"):
        artifacts.read_bytes(path, limit=artifacts.MiB)


def test_invalid_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "p.mlir").write_bytes(b"module \xff")
    with pytest.raises(UsageError, match="not UTF-8"):
        artifacts.read_text(tmp_path / "p.mlir", limit=100)


@pytest.mark.parametrize("name", ["", ".", "..", "../x", "/etc", "a/b", ".hidden", "a\x00b"])
def test_names_that_are_not_plain(name: str) -> None:
    assert not artifacts.plain_name(name)


def test_only_what_was_written_is_removed(tmp_path: Path) -> None:
    ours = tmp_path / "step"
    ours.mkdir()
    (ours / "report.json").write_text("{}")
    (ours / ".report.json.x.tmp").write_text("")
    theirs = tmp_path / "notes"
    theirs.mkdir()
    (theirs / "report.json").write_text("{}")
    (theirs / "thesis.tex").write_text("keep me")
    victim = tmp_path.parent / f"{tmp_path.name}-victim"
    victim.mkdir()
    (victim / "report.json").write_text("{}")
    linked = tmp_path / "linked"
    linked.symlink_to(victim)
    assert artifacts.remove_written(tmp_path, "step", ["report.json"])
    assert not ours.exists()
    assert not artifacts.remove_written(tmp_path, "notes", ["report.json"])
    assert (theirs / "thesis.tex").exists()
    assert not artifacts.remove_written(tmp_path, "linked", ["report.json"])
    assert not artifacts.remove_written(tmp_path, f"../{victim.name}", ["report.json"])
    assert (victim / "report.json").exists()


def test_a_folder_on_the_way_that_is_a_link_is_resolved(tmp_path: Path) -> None:
    """The walk below the folder never passes a link: a sub-folder that leads out is
    refused; one that stays in is read; ``..`` out of the folder is refused."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_bytes(b"{}")
    folder = tmp_path / "rec"
    (folder / "real").mkdir(parents=True)
    (folder / "real" / "report.json").write_bytes(b"[]")
    (folder / "away").symlink_to(tmp_path / "out")
    (folder / "again").symlink_to(folder / "real")
    assert artifacts.read_bytes(folder / "real" / "report.json", limit=9, inside=folder) == b"[]"
    with pytest.raises(UsageError, match="leads out of"):
        artifacts.read_bytes(folder / ".." / "out" / "report.json", limit=9, inside=folder)
    assert artifacts.read_bytes(folder / "again" / "report.json", limit=9, inside=folder) == b"[]"
    with pytest.raises(UsageError, match="leads out of"):
        artifacts.read_bytes(folder / "away" / "report.json", limit=9, inside=folder)


def swapping(
    path: Path, outside: Path, inside_text: bytes
) -> tuple[threading.Event, threading.Thread]:
    """A thread that swaps ``path`` between a regular file and a link to ``outside``
    until the event is set (what a racing writer of a shared folder does)."""
    stop = threading.Event()

    def swap() -> None:
        spare = path.with_name(path.name + ".spare")
        while not stop.is_set():
            spare.unlink(missing_ok=True)
            spare.write_bytes(inside_text)
            os.replace(spare, path)
            spare.symlink_to(outside)
            os.replace(spare, path)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    return stop, thread


def test_a_file_swapped_with_a_link_out_is_never_read_through_it(tmp_path: Path) -> None:
    """What is checked is what was opened: a writer that swaps the file for a link out
    and back never gets the outside file read (each read sees the file or refuses)."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"root:x:0:0")
    folder = tmp_path / "rec" / "step"
    folder.mkdir(parents=True)
    program = folder / "program.mlir"
    program.write_bytes(b"module {}")
    stop, thread = swapping(program, secret, b"module {}")
    seen: set[bytes] = set()
    refused = 0
    try:
        for _ in range(3000):
            try:
                seen.add(artifacts.read_bytes(program, limit=100, inside=tmp_path / "rec"))
            except UsageError as err:
                assert "leads out of" in str(err), err
                refused += 1
            except FileNotFoundError:
                pass
    finally:
        stop.set()
        thread.join(10)
    assert seen <= {b"module {}"}, seen
    assert refused, "the swap never showed: the test did not race"


def test_a_link_at_any_depth_that_leads_out_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out" / "b").mkdir(parents=True)
    (tmp_path / "out" / "b" / "report.json").write_bytes(b"{}")
    folder = tmp_path / "rec"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "b").symlink_to(tmp_path / "out" / "b")
    with pytest.raises(UsageError, match="leads out of"):
        artifacts.read_bytes(folder / "a" / "b" / "report.json", limit=9, inside=folder)
    with pytest.raises(NotADirectoryError):
        artifacts.open_folder(folder / "a" / "b", below=folder)
    os.close(artifacts.open_folder(folder / "a", below=folder))


def test_open_entry_never_follows_a_link(tmp_path: Path) -> None:
    (tmp_path / "secret").write_bytes(b"x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "1.json").symlink_to(tmp_path / "secret")
    (tmp_path / "dir" / "2.json").write_bytes(b"{}")
    handle = os.open(tmp_path / "dir", os.O_RDONLY)
    try:
        with pytest.raises(UsageError, match=r"a link"):
            artifacts.open_entry(handle, "1.json", shown="1.json")
        with artifacts.open_entry(handle, "2.json", shown="2.json") as file:
            assert file.read() == b"{}"
    finally:
        os.close(handle)
