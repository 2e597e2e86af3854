"""Fixtures for the end-to-end tests.

``run_cli(*args, cwd=...)`` runs the ``jxinspect`` command in a new process forked from
a warm server that has imported JAX and the tool (``helpers.run_cli``, ``cli_server.py``:
a few tenths of a second, where starting the installed command takes over a second);
``run_cli(..., subprocess=True)`` starts the installed command itself (``tests/e2e/``),
and so does every run when ``JXINSPECT_TESTS_SUBPROCESS=1``. ``lower_text(target, *flags)`` and
``lower_json(target, *flags)`` run ``jxinspect lower`` once per distinct command line
in the whole run and share the result between tests and between pytest-xdist's workers
(the golden-file tests and the end-to-end tests read the same runs). Every JSON report is
validated against ``jxinspect/schemas/report.schema.json`` when it is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

# tests/ is on sys.path (pyproject's pythonpath), so
# `helpers` imports as a top-level module in every test folder.
from helpers import REPO, CliResult, assert_valid_report, close_servers, run_cli_once
from helpers import run_cli as _run_cli


def pytest_sessionfinish(session: pytest.Session) -> None:
    close_servers()


@pytest.fixture(scope="session", autouse=True)
def user_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The user's cache folder (``XDG_CACHE_HOME``, where ``lint`` keeps its cache's key)
    in the session's temporary folder: no test writes in the home folder."""
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: the TPU lane runs without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores this process may run on. The tests
    wait on processes they start (a timeout, a run's workers, a browser) a good part of
    the time, and a worker more keeps the cores busy then: on 2 cores, 3 workers take
    the suite about a sixth sooner than 2, and 4 no sooner than 3."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


LONGEST_FIRST = (
    "e2e/test_readme.py",
    "record/test_guard.py",
    "record/test_processes.py",
    "lint/test_kept_workers.py",
    "render/test_readable.py",
    "record/test_record.py",
    "tracer/test_adapters_libraries.py",
    "tracer/test_provenance.py",
    "render/test_html_browser.py",
    "record/test_record_wrappers.py",
    "e2e/test_faults.py",
    "e2e/test_e2e_lower.py",
    "e2e/test_signals.py",
    "record/test_recompiles.py",
    "e2e/test_hostile_input.py",
    "e2e/test_installed_command.py",
    "e2e/test_nnx_model_lines.py",
    "e2e/test_user_frames.py",
    "lint/test_lint_scale.py",
    "survey/test_survey.py",
    "record/test_persistent_cache.py",
    "compare/test_diff_verdicts.py",
    "e2e/test_annotated_targets.py",
    "tracer/test_memory_peak.py",
    "lint/test_lint_artifacts.py",
    "record/test_artifacts_safety.py",
)
"""The modules that take longest (about 10 s or more each in a run of the whole suite),
started first, longest first: ``--dist loadscope`` hands modules out in collection order
(told not to reorder them by their number of tests, :func:`pytest_configure`), and a
long one handed out last leaves the other workers idle while it runs alone."""


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist 3.6 on
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        module = item.path.relative_to(REPO / "tests").as_posix()
        return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: each module's tests keep their order


class _Cache:
    """One run per distinct (arguments, folder) in the whole session, shared by its
    test processes (:func:`helpers.run_cli_once`)."""

    def __init__(self) -> None:
        self.results: dict[tuple[tuple[str, ...], str], CliResult] = {}

    def run(self, *args: str, cwd: str | os.PathLike[str] | None = None) -> CliResult:
        key = (tuple(args), str(cwd or REPO))
        if key not in self.results:
            self.results[key] = run_cli_once(*args, cwd=cwd)
        return self.results[key]


@pytest.fixture(scope="session")
def cli_cache() -> _Cache:
    return _Cache()


@pytest.fixture(scope="session")
def run_cli() -> Callable[..., CliResult]:
    """``run_cli(*args, cwd=None) -> CliResult`` (unpacks as ``rc, stdout, stderr``);
    never cached, for commands that write files or must run fresh."""
    return _run_cli


@pytest.fixture(scope="session")
def lower_text(cli_cache: _Cache) -> Callable[..., CliResult]:
    """``lower_text(target, *flags)``: ``jxinspect lower TARGET FLAGS``, cached; the run
    must print a plain-text report (exit 0, 1, or 3 when lowering failed after tracing)."""

    def lower(target: str, *flags: str, cwd: str | None = None) -> CliResult:
        result = cli_cache.run("lower", target, *flags, cwd=cwd)
        assert result.returncode in (0, 1, 3), result.describe()
        assert result.stdout.startswith(f"target:       {target}\n"), result.describe()
        return result

    return lower


@pytest.fixture(scope="session")
def lower_json(cli_cache: _Cache) -> Callable[..., tuple[CliResult, dict[str, Any]]]:
    """``lower_json(target, *flags) -> (result, report)``: ``jxinspect lower TARGET FLAGS
    --format json``, cached; the report is parsed and checked against the schema."""

    def lower(target: str, *flags: str, cwd: str | None = None) -> tuple[CliResult, dict[str, Any]]:
        result = cli_cache.run("lower", target, *flags, "--format", "json", cwd=cwd)
        assert result.returncode in (0, 1, 3), result.describe()
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError as err:
            raise AssertionError(f"stdout is not JSON ({err})\n{result.describe()}") from None
        assert_valid_report(report, f"jxinspect lower {target} {' '.join(flags)}")
        return result, report

    return lower
