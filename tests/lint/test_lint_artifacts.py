"""What ``lint`` and ``lint-merge`` read that others wrote (the cache, shard parts, the
baseline, the kept workers' registry), end to end: a FIFO, a device, a link out, a file
larger than any real one or an entry written without the cache's secret is one line (exit
2) or, in the cache, ignored and staged again; nothing waits on a FIFO, nothing is written
through a link.

The project: two targets, one of which leaves an argument unused (JX105, an error under
the configuration), so a run exits 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

import pytest
from helpers import error_line, lint_outcomes, run_cli

MODULE = (
    "JXINSPECT = {'f': {'args': 'f32[4]'}, 'g': {'args': 'f32[4], f32[4]'}}\n\n\n"
    "def f(x):\n    return x * 2\n\n\ndef g(x, unused):\n    return x + 1\n"
)
TARGETS = ["a.py:f", "a.py:g"]
QUICK = 30
"""Seconds a run here may take before it counts as hung (each takes a few)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.py").write_text(MODULE, encoding="utf-8")
    (folder / "jxinspect.yaml").write_text(
        "paths: [.]\nseverity: {JX105: error}\n", encoding="utf-8"
    )
    return folder


def lint(project: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_cli("lint", "-v", *args, cwd=project, env=env, timeout=QUICK)


def how(stderr: str) -> dict[str, str]:
    """``--verbose`` lines of this module's targets: target → cached / staged / failed."""
    return lint_outcomes(stderr, TARGETS)


def warnings(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def zero(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


MAKERS = {"fifo": fifo, "dev-zero": zero}


# ---- the cache ----------------------------------------------------------------------------


LINKED = "the cache is not used (remove the link)"


@pytest.mark.parametrize("kind", MAKERS)
def test_a_costs_file_that_is_not_a_file_is_ignored_never_waited_on(
    project: Path, kind: str
) -> None:
    """A FIFO is ignored and left; a link (to ``/dev/zero``) turns the cache off."""
    costs = MAKERS[kind](project / ".jxinspect_cache" / "costs.json")
    expected = (
        "warning: .jxinspect_cache/costs.json is not a regular file (a FIFO); the cache "
        "ignores it (remove it)"
        if kind == "fifo"
        else f"warning: .jxinspect_cache/costs.json is a link; {LINKED}"
    )
    for args in ((), ("--shard", "1/2"), ("--shard", "2/2")):
        result = lint(project, *args)
        assert result.returncode in (0, 1), result.describe()
        assert warnings(result.stderr) == [expected], result.describe()
    assert os.path.islink(costs) if kind == "dev-zero" else stat.S_ISFIFO(os.lstat(costs).st_mode)


@pytest.mark.parametrize("kind", MAKERS)
def test_a_cache_entry_that_is_not_a_file_is_staged_again_and_left(
    project: Path, kind: str
) -> None:
    lint(project)
    entries = sorted((project / ".jxinspect_cache").glob("*/*.jsonl"))
    assert len(entries) == 2
    entries[0].unlink()
    MAKERS[kind](entries[0])
    result = lint(project)
    assert result.returncode == 1, result.describe()
    name = entries[0].relative_to(project).as_posix()
    if kind == "fifo":
        assert sorted(how(result.stderr).values()) == ["cached", "staged"], result.describe()
        assert warnings(result.stderr) == [
            f"warning: {name} is not a regular file (a FIFO); the cache ignores it (remove it)"
        ]
    else:
        assert set(how(result.stderr).values()) == {"staged"}, result.describe()
        assert warnings(result.stderr) == [f"warning: {name} is a link; {LINKED}"]
    assert os.path.lexists(entries[0]) and not stat.S_ISREG(os.lstat(entries[0]).st_mode)


def poison(entry: Path, clean: Path) -> None:
    """Put ``clean``'s report under ``entry``'s header, its SHA-256 recomputed."""
    header = json.loads(entry.read_text(encoding="utf-8").splitlines()[0])
    report = clean.read_text(encoding="utf-8").split("\n", 1)[1]
    if "digest" in header:  # the SHA-256 of its report, before entries had a MAC
        header["digest"] = hashlib.sha256(report.encode()).hexdigest()
    entry.write_text(json.dumps(header) + "\n" + report, encoding="utf-8")


def test_a_poisoned_entry_with_its_digest_recomputed_is_not_trusted(project: Path) -> None:
    first = lint(project, "--format", "json")
    assert first.returncode == 1, first.describe()
    entries = {
        json.loads(p.read_text(encoding="utf-8").splitlines()[0])["name"]: p
        for p in (project / ".jxinspect_cache").glob("*/*.jsonl")
    }
    poison(entries["a.py:g"], entries["a.py:f"])  # g's report: f's, without JX105
    again = lint(project, "--format", "json")
    assert again.returncode == 1, again.describe()
    assert how(again.stderr) == {"a.py:f": "cached", "a.py:g": "staged"}
    assert again.stdout == first.stdout  # JX105 still reported
    name = entries["a.py:g"].relative_to(project).as_posix()
    assert warnings(again.stderr) == [
        f"warning: {name}: written without this cache's secret, or edited; staged again"
    ]


def test_an_entry_is_trusted_only_with_the_secret_it_was_written_with(
    project: Path, tmp_path: Path
) -> None:
    ours, theirs = {"JXINSPECT_CACHE_SECRET": "ours"}, {"JXINSPECT_CACHE_SECRET": "theirs"}
    assert how(lint(project, env=ours).stderr) == dict.fromkeys(TARGETS, "staged")
    assert how(lint(project, env=ours).stderr) == dict.fromkeys(TARGETS, "cached")
    other = lint(project, env=theirs)
    assert other.returncode == 1 and how(other.stderr) == dict.fromkeys(TARGETS, "staged")
    assert len(warnings(other.stderr)) == 2
    assert how(lint(project, env=theirs).stderr) == dict.fromkeys(TARGETS, "cached")
    # without the variable: a key file of the user's, made on first use, readable by no one else
    home = {"XDG_CACHE_HOME": str(tmp_path / "home-cache")}
    assert set(how(lint(project, env=home).stderr).values()) == {"staged"}
    key = tmp_path / "home-cache" / "jxinspect" / "cache.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert how(lint(project, env=home).stderr) == dict.fromkeys(TARGETS, "cached")
    someone = {"XDG_CACHE_HOME": str(tmp_path / "someone-else")}
    assert set(how(lint(project, env=someone).stderr).values()) == {"staged"}


def test_a_key_file_others_can_read_turns_the_cache_off(project: Path, tmp_path: Path) -> None:
    home = {"XDG_CACHE_HOME": str(tmp_path / "home-cache")}
    lint(project, env=home)
    key = tmp_path / "home-cache" / "jxinspect" / "cache.key"
    key.chmod(0o644)
    result = lint(project, env=home)
    assert result.returncode == 1 and set(how(result.stderr).values()) == {"staged"}
    assert warnings(result.stderr) == [
        f"warning: the cache's key {key} can be read by other users; the cache is not used "
        "(chmod 600 it, or remove it to make a new one)"
    ]


@pytest.mark.parametrize("where", ["folder", "subfolder", "entry"])
def test_a_link_in_the_cache_turns_it_off_and_nothing_is_written_through_it(
    project: Path, tmp_path: Path, where: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = project / ".jxinspect_cache"
    if where == "folder":
        cache.symlink_to(elsewhere)
    else:
        lint(project)
        entries = sorted(cache.glob("*/*.jsonl"))
        if where == "subfolder":
            moved = elsewhere / entries[0].parent.name
            entries[0].parent.rename(moved)
            entries[0].parent.symlink_to(moved)
        else:
            entries[0].rename(elsewhere / entries[0].name)
            entries[0].symlink_to(elsewhere / entries[0].name)
    before = sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*"))
    stamps = {p: p.stat().st_mtime_ns for p in elsewhere.rglob("*")}
    for _ in range(2):
        result = lint(project)
        assert result.returncode == 1, result.describe()
        assert set(how(result.stderr).values()) == {"staged"}, result.describe()
        (line,) = warnings(result.stderr)
        assert line.startswith("warning: .jxinspect_cache") and "a link" in line, line
        assert line.endswith(f"is a link; {LINKED}"), line
    assert sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*")) == before
    assert {p: p.stat().st_mtime_ns for p in elsewhere.rglob("*")} == stamps


# ---- shard parts -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [*MAKERS, "huge"])
def test_a_part_that_is_not_a_file_or_too_large_is_one_line(project: Path, kind: str) -> None:
    lint(project, "--shard", "1/2", "--format", "json", "-o", "p1.json")
    if kind == "huge":
        part = project / "p2.json"
        with open(part, "wb") as file:
            file.truncate(2 << 30)  # sparse: no disk used
        expected = "error: p2.json is larger than 256 MiB, more than any real artifact holds"
    else:
        part = MAKERS[kind](project / "p2.json")
        what = "a FIFO" if kind == "fifo" else "a device"
        expected = f"error: p2.json is not a regular file ({what}); remove it"
    result = run_cli("lint-merge", "p1.json", "p2.json", cwd=project, timeout=QUICK)
    assert result.returncode == 2, result.describe()
    assert error_line(result).startswith(expected), result.describe()


# ---- the baseline ----------------------------------------------------------------------------


@pytest.mark.parametrize("write", [False, True])
@pytest.mark.parametrize("kind", MAKERS)
def test_a_baseline_that_is_not_a_file_is_one_line_and_never_written(
    project: Path, kind: str, write: bool
) -> None:
    baseline = MAKERS[kind](project / "jxinspect-baseline.json")
    result = lint(project, *(["--write-baseline"] if write else []))
    assert result.returncode == 2, result.describe()
    what = "a FIFO" if kind == "fifo" else "a device"
    line = error_line(result)  # the link's own path: its target is outside the project
    assert line.startswith("error: ") and line.endswith(
        f"jxinspect-baseline.json is not a regular file ({what}); remove it or give a file"
    ), result.describe()
    assert not how(result.stderr)  # refused before anything was staged
    assert (
        os.path.islink(baseline)
        if kind == "dev-zero"
        else stat.S_ISFIFO(os.lstat(baseline).st_mode)
    )


def test_writing_the_baseline_removes_its_stale_temporaries_only(project: Path) -> None:
    """A write that was killed leaves its temporary file; the next write of the same file
    removes it once it is an hour old (a write under way is never that old)."""
    stale, fresh = (
        project / ".jxinspect-baseline.json.k1ll3d_x.tmp",
        project / (".jxinspect-baseline.json.r7nn1ng_.tmp"),
    )
    other = project / ".other.json.k1ll3d_x.tmp"
    for path in (stale, fresh, other):
        path.write_text("{", encoding="utf-8")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    result = lint(project, "--write-baseline")
    assert result.returncode == 0, result.describe()
    assert not stale.exists() and fresh.exists() and other.exists()
