"""How one ``jxinspect lint`` run goes: what the command line asks for, and each run
option merged, in this one place, as the command line's, else the configuration's, else
its default."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from jxinspect.core.vocabulary import FailOn
from jxinspect.lint.shards import Shard
from jxinspect.lint.workers.supervisor import DEFAULT_TIMEOUT_S
from jxinspect.project.config import DEFAULT_FAIL_ON, Config, Policy

DEFAULT_BASELINE = "jxinspect-baseline.json"
T = TypeVar("T")


@dataclass(frozen=True)
class LintRequest:
    """What the command line asks for; ``None`` means "as configured"."""

    paths: tuple[str, ...] = ()
    config: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    fail_on: FailOn | None = None
    baseline: Path | None = None
    write_baseline: bool = False
    jobs: int = 1
    compile: bool | None = None
    traceback: bool = False
    timeout: float | None = None
    """Seconds one target may take (0: no limit); ``None``: as configured, or the default."""
    cache: bool | None = None
    """Reuse unchanged targets' reports; ``None``: as configured (on by default)."""
    shard: Shard | None = None
    """Stage only this part of the targets (``--shard K/N``)."""
    records: Path | None = None
    """Judge the reports of this record folder (``jxinspect record``) instead of staging."""
    keep_workers: bool | None = None
    """Keep the workers for the next run; ``None``: as configured (off by default)."""
    history: Path | None = None
    """Append a row per target to this history database (``--history FILE``)."""


def first_given(*values: T | None, default: T) -> T:
    """The first value that is not ``None``: the command line's over the configuration's
    over ``default``."""
    return next((value for value in values if value is not None), default)


@dataclass(frozen=True)
class RunOptions:
    """The run options of one run, merged."""

    fail_on: FailOn
    timeout: float | None
    """Seconds one target may take to stage; ``None``: no limit."""
    cache: bool
    keep_workers: bool
    idle: float | None
    """The seconds kept workers wait, as configured; ``None``: their default."""
    baseline: Path


def run_options(request: LintRequest, config: Config) -> RunOptions:
    """``request`` over ``config`` over the defaults. The flag turns kept workers on or
    off; how long they wait is configured."""
    configured = config.baseline
    keep = config.keep_workers
    return RunOptions(
        fail_on=first_given(request.fail_on, config.fail_on, default=DEFAULT_FAIL_ON),
        timeout=first_given(request.timeout, config.timeout, default=DEFAULT_TIMEOUT_S) or None,
        cache=first_given(request.cache, config.cache, default=True),
        keep_workers=bool(first_given(request.keep_workers, keep, default=False)),
        idle=None if isinstance(keep, bool) else keep,
        baseline=first_given(
            request.baseline,
            config.root / configured if configured is not None else None,
            default=config.root / DEFAULT_BASELINE,
        ),
    )


def target_policy(policy: Policy, request: LintRequest) -> Policy:
    """A target's policy (the configuration's, with its entry's overrides) under the
    command line's ``--select``, ``--ignore`` and ``--compile``."""
    return replace(
        policy,
        select=first_given(request.select, policy.select, default=None),
        ignore=policy.ignore + request.ignore,
        compile=first_given(request.compile, policy.compile, default=False),
    )
