"""What the persistent compilation cache did for each compile of a recorded run, with
JAX's own log of the same run as the oracle.

The script turns on JAX's DEBUG log of its compiler (the user's own code may: nothing of
jxinspect's changes it), so each run prints, for each module, whether the persistent
cache hit, missed, and why it wrote nothing. ``record`` must say the same per function:
``hit`` (with the seconds JAX says it saved), ``miss``, ``not_written`` (under
``jax_persistent_cache_min_compile_time_secs``, named) and ``off`` (no cache folder).
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers import WARM_PYTHON, run_cli

JAX_LOG = textwrap.dedent("""
    import logging, os, sys
    import jax, jax.numpy as jnp

    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("jaxlog: %(message)s"))
    for name in ("jax._src.compiler", "jax._src.compilation_cache", "jax._src.cache_key"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.DEBUG)
""")
"""JAX's own DEBUG log of its compiler and cache, on the run's standard output."""

CACHED = JAX_LOG + textwrap.dedent("""
    jax.config.update("jax_compilation_cache_dir", os.environ["CACHE_FOLDER"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
""")
"""Its log, and every compile written to the persistent cache in ``CACHE_FOLDER``."""

SCRIPT = JAX_LOG + textwrap.dedent("""
    jax.monitoring.register_event_listener(lambda event, *a, **k: print("jaxevent:", event))
    if os.environ.get("CACHE_FOLDER"):
        jax.config.update("jax_compilation_cache_dir", os.environ["CACHE_FOLDER"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs",
                      float(os.environ.get("LEAST_SECONDS", "0")))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)

    @jax.jit
    def f(x):
        return jnp.sin(x) @ x.T

    @jax.jit
    def g(x):
        return x * 2

    print(float(f(jnp.ones((64, 64))).sum()), float(g(jnp.ones(3)).sum()))
""")


def jax_says(stdout: str, function: str) -> str:
    """The outcome JAX's own log gives for ``jit_<function>``."""
    module = f"'jit_{function}'"
    lines = [line for line in stdout.splitlines() if line.startswith("jaxlog:") and module in line]
    if any("cache hit for" in line for line in lines):
        return "hit"
    if any("CACHE MISS for" in line for line in lines):
        return "not_written" if any("Not writing" in line for line in lines) else "miss"
    return "off"


def record(tmp: Path, name: str, **env: str) -> tuple[str, dict[str, dict[str, Any]]]:
    result = run_cli("record", "-o", name, "--", *WARM_PYTHON, "script.py", cwd=tmp, env=env)
    assert result.returncode == 0, result.describe()
    data = json.loads((tmp / name / "compiles.json").read_text(encoding="utf-8"))
    return result.stdout, {c["function"]: c for c in data["compiles"]}


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    return tmp_path


def test_a_first_run_misses_and_writes_and_a_second_hits(tmp: Path) -> None:
    folder = str(tmp / "cache")
    for run, want in (("first", "miss"), ("second", "hit")):
        said, compiles = record(tmp, run, CACHE_FOLDER=folder)
        for function in ("f", "g"):
            cache = compiles[function]["cache"]
            assert cache["outcome"] == jax_says(said, function) == want, (run, function, said)
    assert compiles["f"]["cache"]["saved_s"] is not None
    assert compiles["f"]["compile_s"] is None  # a hit: JAX compiled nothing
    shown = run_cli("show", "second", cwd=tmp)
    assert re.search(
        r"  f \(f at .*script.py:\d+\): 1 compile, .*; cache: 1 hit, saved", shown.stdout
    )
    # the line that called both (the print) ranks as one call site: two compiles, two hits
    call = next(n for n, line in enumerate(SCRIPT.splitlines(), 1) if line.startswith("print("))
    sites = shown.stdout.split("  by call site\n")[1].splitlines()
    assert re.fullmatch(  # the seconds saved are JAX's own: a read slower than the compile is < 0
        rf"    .*script.py:{call}: 2 compiles, [\d.]+ s \(f, g\); cache: 2 hit, saved -?[\d.]+ s",
        sites[0],
    ), shown.stdout
    page = run_cli("show", "second", "--format", "html", cwd=tmp).stdout
    assert '<table id="call-sites">' in page and f"script.py:{call}</code>" in page


def test_a_compile_under_the_minimum_time_is_not_written_and_says_so(tmp: Path) -> None:
    said, compiles = record(tmp, "runs", CACHE_FOLDER=str(tmp / "cache"), LEAST_SECONDS="1000")
    for function in ("f", "g"):
        cache = compiles[function]["cache"]
        assert cache["outcome"] == jax_says(said, function) == "not_written"
        assert "under jax_persistent_cache_min_compile_time_secs (1000.0 s)" in cache["reason"]
    assert "jax_persistent_cache_min_compile_time_secs" in run_cli("show", "runs", cwd=tmp).stdout


def test_without_a_cache_folder_the_cache_is_off(tmp: Path) -> None:
    """JAX may still ask its cache, and log a miss at DEBUG, with no folder to read or
    write: the persistent cache is not enabled, as JAX's ``is_persistent_cache_enabled``
    says (its WARNING-level miss explanation needs it)."""
    said, compiles = record(tmp, "runs")
    for function in ("f", "g"):
        cache = compiles[function]["cache"]
        assert cache["outcome"] == "off" and jax_says(said, function) in ("off", "miss")
        assert cache["reason"] == "no cache folder: jax_compilation_cache_dir is not set"
    assert not list(tmp.glob("**/*-cache"))


def test_diff_names_the_xla_flag_that_keeps_a_second_run_from_hitting(tmp: Path) -> None:
    """Two runs of one program over one cache folder, the second with an XLA flag: JAX
    misses (its log), includes that flag in the key (its log), and ``diff-debug`` says
    the program is the same and names the flag."""
    folder = str(tmp / "cache")
    record(tmp, "first", CACHE_FOLDER=folder)
    flag = "--xla_backend_optimization_level=2"
    said, compiles = record(tmp, "second", CACHE_FOLDER=folder, XLA_FLAGS=flag)
    assert compiles["f"]["cache"]["outcome"] == jax_says(said, "f") == "miss"
    included = set(re.findall(r"jaxlog: Including XLA flag in cache key: (\S+)", said))
    index = json.loads((tmp / "second" / "index.json").read_text(encoding="utf-8"))
    assert set(index["cache_key_environment"]["XLA flags"].split()) == included == {flag}
    diff = run_cli("diff-debug", "first", "second", cwd=tmp)
    assert (
        f"program: same program, but JAX's persistent cache key differs (XLA flags: "
        f"{flag} added): no cache hit between them"
    ) in diff.stdout, diff.describe()


def test_max_compile_seconds_names_each_function_over_it_and_exits_1(tmp: Path) -> None:
    """Every function is over a budget of 0 s: each is named with its seconds and what
    the cache did; a budget none reaches exits 0."""
    result = run_cli("record", "-o", "runs", "--max-compile-seconds", "0", "--",
                     *WARM_PYTHON, "script.py", cwd=tmp)  # fmt: skip
    assert result.returncode == 1, result.describe()
    named = re.findall(r"error: `(\w+)` \(.*\) took [\d.]+ s to compile \(1 compiles; cache: "
                       r"1 off\), more than --max-compile-seconds 0 ", result.stderr)  # fmt: skip
    assert named == ["f", "g"], result.stderr
    within = run_cli("record", "-o", "again", "--max-compile-seconds", "1000", "--",
                     *WARM_PYTHON, "script.py", cwd=tmp)  # fmt: skip
    assert within.returncode == 0 and "error:" not in within.stderr


def test_the_cache_folder_and_jaxs_log_read_the_same_with_and_without_record(tmp: Path) -> None:
    """Invisible when recording: over one fresh cache folder each time (its path is part
    of JAX's key), a plain run and a recorded run write the same entries (their names are
    JAX's cache keys), JAX logs the same cache lines (keys included) and reports the same
    events (``jax.monitoring``, to a listener of the script's own)."""
    folder = tmp / "cache"
    plain = run_cli("script.py", command=WARM_PYTHON, cwd=tmp, env={"CACHE_FOLDER": str(folder)})
    assert plain.returncode == 0, plain.describe()
    written = sorted(p.name for p in folder.iterdir())
    shutil.rmtree(folder)
    said, _ = record(tmp, "runs", CACHE_FOLDER=str(folder))

    def cache_lines(text: str) -> list[str]:
        return [re.sub(r"\(\d+\.\d+s\)", "(… s)", line) for line in text.splitlines()
                if line.startswith("jaxlog:") and "cache" in line.lower()]  # fmt: skip

    assert written and sorted(p.name for p in folder.iterdir()) == written
    assert cache_lines(said) == cache_lines(plain.stdout)

    def events(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("jaxevent:")]

    assert events(said) == events(plain.stdout)
    assert any("compilation_cache" in line for line in events(said)), events(said)


def test_diff_names_a_moved_cache_folder_where_jax_keys_by_it(tmp: Path) -> None:
    """From 0.5 JAX writes the cache folder into every compile's options (its XLA caches
    beside it: its DEBUG log says where): the same program over another folder path is
    another key, and ``diff-debug`` says so; 0.4.x keys no folder, and says nothing."""
    said, _ = record(tmp, "first", CACHE_FOLDER=str(tmp / "a"))
    record(tmp, "second", CACHE_FOLDER=str(tmp / "b"))
    diff = run_cli("diff-debug", "first", "second", cwd=tmp)
    in_options = re.search(r"jaxlog: Enabling XLA autotuning cache at '(.*)/xla_gpu_per", said)
    if in_options:
        assert in_options.group(1) == str(tmp / "a")
        assert f"cache folder: {tmp / 'a'} → {tmp / 'b'}" in diff.stdout, diff.describe()
    else:
        assert "program: same program (a persistent cache hit is possible)" in diff.stdout


RENAMED = CACHED + textwrap.dedent("""


    def named(name):
        def step(x):
            return jnp.sin(x) @ x.T

        step.__name__ = step.__qualname__ = name
        return jax.jit(step)


    x = jnp.ones((64, 64))
    print(float(named("step")(x).sum()), float(named(os.environ["NAME"])(x).sum()))
""")


def test_a_miss_of_a_program_the_cache_held_is_jx406(tmp: Path) -> None:
    """The same program under a name that changes each run: the second run reads `step`
    back and misses `second` (JAX's own log says both), and lint names that miss alone."""
    (tmp / "renamed.py").write_text(RENAMED, encoding="utf-8")
    outcomes = {}
    for run, name in (("a", "first"), ("b", "second")):
        result = run_cli("record", "-o", run, "--", *WARM_PYTHON, "renamed.py", cwd=tmp,
                         env={"CACHE_FOLDER": str(tmp / "cache"), "NAME": name})  # fmt: skip
        assert result.returncode == 0, result.describe()
        outcomes[run] = {f: jax_says(result.stdout, f) for f in ("step", name)}
    assert outcomes == {"a": {"step": "miss", "first": "miss"},
                        "b": {"step": "hit", "second": "miss"}}  # fmt: skip
    findings = {}
    for run in ("a", "b"):
        linted = run_cli("lint", "--records", run, "--format", "json", cwd=tmp)
        findings[run] = [
            (target["target"], f["message"])
            for target in json.loads(linted.stdout)["targets"]
            for f in target["findings"]
            if f["code"] == "JX406"
        ]
    assert findings["a"] == []  # the first run's misses prove nothing held: none judged
    [(target, message)] = findings["b"]
    assert target.endswith(":second")
    assert message.startswith("second #1 (called from ")
    assert "which held the same program: step #1 read it from there in this run" in message


HELPER = CACHED + textwrap.dedent("""


    def clip(x):
        return jnp.clip(x, -1, 1)


    clip.__name__ = clip.__qualname__ = os.environ["HELPER"]
    clip = jax.jit(clip)


    @jax.jit
    def f(x):
        return clip(jnp.sin(x)) * 2


    print(float(f(jnp.ones((8,))).sum()))
""")


def two_runs(tmp: Path, script: str, variable: str, values: tuple[str, str]) -> dict[str, str]:
    """``script`` recorded twice over one cache folder (``first``, ``second``), with
    ``variable`` set to each of ``values`` in turn: each run's standard output."""
    (tmp / "script.py").write_text(script, encoding="utf-8")
    said = {}
    for run, value in zip(("first", "second"), values, strict=True):
        result = run_cli("record", "-o", run, "--", *WARM_PYTHON, "script.py", cwd=tmp,
                         env={"CACHE_FOLDER": str(tmp / "cache"), variable: value})  # fmt: skip
        assert result.returncode == 0, result.describe()
        said[run] = result.stdout
    return said


def key_parts(stdout: str, function: str) -> dict[str, str]:
    """JAX's own digest of each part of ``jit_<function>``'s persistent-cache key, from its
    DEBUG log (``get_cache_key hash of serialized <part>: <digest>``, then the outcome)."""
    parts: dict[str, str] = {}
    for line in stdout.splitlines():
        found = re.match(r"jaxlog: get_cache_key hash of serialized (.+): (\w+)$", line)
        if found:
            parts[found.group(1)] = found.group(2)
        elif re.search(r"(CACHE MISS|cache hit) for 'jit_(\w+)'", line):
            if f"for 'jit_{function}'" in line:
                return parts
            parts = {}
    raise AssertionError(f"JAX's log says no cache key for jit_{function}:\n{stdout}")


def test_diff_names_a_renamed_helper_as_the_one_key_part_that_differs(tmp: Path) -> None:
    """The user's helper named `clip`, then `clamp`: JAX's own `clip` (of `jnp.clip`) was
    numbered `@clip_0` beside the user's and is `@clip` now. JAX's log says the second run
    misses and that of the key's parts only the computation differs; `diff-debug` says
    the same program under other names, pairing each, and JX404 fails the diff."""
    said = two_runs(tmp, HELPER, "HELPER", ("clip", "clamp"))
    assert jax_says(said["second"], "f") == "miss"
    first, second = key_parts(said["first"], "f"), key_parts(said["second"], "f")
    assert first.keys() == second.keys() and "computation" in first
    assert [part for part in first if first[part] != second[part]] == ["computation"]
    diff = run_cli("diff-debug", "first", "second", cwd=tmp)
    assert diff.returncode == 1, diff.describe()
    renames = "@clip → @clamp, @clip_0 → @clip"
    assert (
        f"the same program but for the names of its functions ({renames}): JAX's "
        "persistent-cache key hashes them, so no cache hit between them"
    ) in diff.stdout
    assert "error JX404 `f`" in diff.stdout


OPTIONS = CACHED + textwrap.dedent("""


    def f(x):
        return jnp.sin(x) @ x.T


    level = os.environ.get("LEVEL")
    options = {"xla_backend_optimization_level": int(level)} if level else None
    x = jnp.ones((64, 64))
    print(float(jax.jit(f).lower(x).compile(compiler_options=options)(x).sum()))
""")


def test_diff_names_a_compile_option_as_the_key_part_that_differs(tmp: Path) -> None:
    """One program compiled with an XLA option the second time (`compiler_options`): JAX's
    log says the second run misses and that only the compile options' part of the key
    differs; each run's recorded digest of its compile options is JAX's own; `diff-debug`
    says the same program and names the option."""
    said = two_runs(tmp, OPTIONS, "LEVEL", ("", "1"))
    recorded = {}
    for run in said:
        data = json.loads((tmp / run / "compiles.json").read_text(encoding="utf-8"))
        recorded[run] = {c["function"]: c for c in data["compiles"]}["f"]["options"]
    assert jax_says(said["second"], "f") == "miss"
    first, second = key_parts(said["first"], "f"), key_parts(said["second"], "f")
    assert [part for part in first if first[part] != second[part]] == ["compile_options"]
    assert recorded["first"]["digest"] == first["compile_options"]
    assert recorded["second"]["digest"] == second["compile_options"]
    diff = run_cli("diff-debug", "first", "second", cwd=tmp)
    assert (
        "program: same program, but JAX's persistent cache key differs (compiler options: "
        "(none) → xla_backend_optimization_level=1): no cache hit between them"
    ) in diff.stdout, diff.describe()
