"""Splitting one ``lint`` run across the jobs of a CI matrix, and merging the parts.

``--shard K/N`` picks a deterministic, balanced part of the targets: by the seconds each
took when last staged when the cache knows them all (longest first, each to the part
with the least so far), else by count (every N-th name). Each part's JSON result says
which part it is, how many targets the whole run has and a digest of their names, so
that :func:`merge` can check that the parts belong to one run, none is missing and none
overlaps, and then give the verdict (and exit code) a single run would have given.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, replace
from pathlib import Path

from jxinspect.core import codec
from jxinspect.core.artifacts import JSON_LIMIT, read_text
from jxinspect.core.errors import UsageError, no_such_file
from jxinspect.core.lint import LINT_SCHEMA, LintResult, ShardInfo
from jxinspect.project.rule_table import described

MAX_SHARDS = 65_536
"""The most parts ``--shard K/N`` splits a run into (a CI matrix has a few hundred jobs)."""
MISSING_LISTED = 8
"""Missing parts an error names (a part's ``shard.count`` is only what the file says)."""


@dataclass(frozen=True)
class Shard:
    """``--shard K/N``."""

    index: int
    count: int


def parse_shard(text: str) -> Shard:
    """``3/8`` → ``Shard(3, 8)``; anything else is a usage error (N past
    :data:`MAX_SHARDS` too: the parts are planned in lists of N)."""
    match = re.fullmatch(r"\s*(\d{1,18})\s*/\s*(\d{1,18})\s*", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. --shard 3/8")
    if int(match[2]) > MAX_SHARDS:
        raise UsageError(f"--shard {text!r}: at most {MAX_SHARDS:,} parts (N); split in fewer")
    return Shard(int(match[1]), int(match[2]))


def plan_digest(names: list[str]) -> str:
    """What every part of one run shares: a digest of all target names."""
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()[:16]


def partition(names: list[str], costs: dict[str, float], count: int) -> list[list[str]]:
    """The targets of each part, in name order."""
    ordered = sorted(names)
    parts: list[list[str]] = [[] for _ in range(count)]
    if ordered and all(name in costs for name in ordered):
        totals = [0.0] * count
        for name in sorted(ordered, key=lambda n: (-costs[n], n)):
            lightest = min(range(count), key=lambda i: (totals[i], i))
            parts[lightest].append(name)
            totals[lightest] += costs[name]
    else:
        for i, name in enumerate(ordered):
            parts[i % count].append(name)
    return [sorted(part) for part in parts]


def shard_info(shard: Shard, names: list[str]) -> ShardInfo:
    return ShardInfo(shard.index, shard.count, len(names), plan_digest(names))


def read_part(path: Path) -> LintResult:
    """One part: a ``lint --format json`` result, its rules described by this jxinspect."""
    again = "save each part with `jxinspect lint --shard K/N --format json -o FILE`"
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give the JSON files of the parts")
    try:
        text = read_text(path, limit=JSON_LIMIT)  # bounded, never a FIFO
        return described(
            codec.decode_file(text, LintResult, source=str(path), schema=LINT_SCHEMA), str(path)
        )
    except FileNotFoundError:
        raise no_such_file(path) from None
    except codec.DecodeError as err:
        if err.malformed or err.problem == codec.TOO_DEEP:
            raise UsageError(f"{path} is not JSON; {again}") from None
        if err.found != LINT_SCHEMA:
            raise UsageError(
                f"{path} is not a jxinspect lint result (schema {err.found!r}); {again}"
            ) from None
        raise UsageError(f"{err}; {again}") from None


def merge(parts: list[tuple[str, LintResult]]) -> LintResult:
    """One result from the parts of one run; says which part is missing, duplicated or
    from another run."""
    if not parts:
        raise UsageError("give the JSON result of every part")
    first_name, first = parts[0]
    sharded = [(name, part) for name, part in parts if part.shard is not None]
    if sharded and len(sharded) != len(parts):
        plain = next(name for name, part in parts if part.shard is None)
        raise UsageError(f"{plain} is a whole run, not a part of one made with --shard K/N")
    if sharded:
        assert first.shard is not None
        _check_parts(parts, first_name, first.shard)
    owner: dict[str, str] = {}
    for name, part in parts:
        for held in (target.target for target in part.targets):
            if held in owner:
                raise UsageError(f"{owner[held]} and {name} both hold {held}: the parts overlap")
            owner[held] = name
        if part.fail_on != first.fail_on:
            raise UsageError(f"{name} fails on {part.fail_on}, {first_name} on {first.fail_on}")
    if sharded and first.shard is not None and len(owner) != first.shard.targets:
        raise UsageError(
            f"the parts hold {len(owner)} targets but the run has {first.shard.targets}; "
            "the parts come from runs that planned different targets"
        )
    return replace(
        first,
        targets=tuple(sorted((t for _, p in parts for t in p.targets), key=lambda t: t.target)),
        gone=tuple(
            sorted(
                (g for _, p in parts for g in p.gone),
                key=lambda g: (g.target, g.code, g.path or ""),
            )
        ),  # fmt: skip
        interrupted=any(p.interrupted for _, p in parts),
        shard=None,
    )


def _check_parts(parts: list[tuple[str, LintResult]], first_name: str, info: ShardInfo) -> None:
    """Each part one of ``info``'s run, none twice, none missing (the first missing ones
    named, never a list of the count)."""
    seen: dict[int, str] = {}
    for name, part in parts:
        assert part.shard is not None
        if not 1 <= part.shard.index <= info.count:
            raise UsageError(
                f"{name}: shard.index is {part.shard.index}, not a part of 1 to "
                f"{info.count} (shard.count)"
            )
        if (part.shard.count, part.shard.plan) != (info.count, info.plan):
            raise UsageError(
                f"{name} and {first_name} are parts of different runs (other targets, "
                "or another N); merge the parts of one run, made with the same cache"
            )
        if part.shard.index in seen:
            raise UsageError(
                f"{seen[part.shard.index]} and {name} are both part {part.shard.index}/{info.count}"
            )
        seen[part.shard.index] = name
    if info.count > len(seen):  # the first missing ones, never a list of count
        absent = info.count - len(seen)
        absent_parts = (i for i in range(1, info.count + 1) if i not in seen)
        missing = [str(i) for i in itertools.islice(absent_parts, MISSING_LISTED)]
        if absent > MISSING_LISTED:
            raise UsageError(
                f"{first_name}: shard.count says the run has {info.count:,} parts but "
                f"{len(seen)} were given (part {', '.join(missing)}, … are missing); give "
                "every part's JSON result"
            )
        raise UsageError(
            f"part {', '.join(missing)} of {info.count} is missing; give every part's JSON result"
        )
