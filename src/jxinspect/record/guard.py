"""The guard: one program on every process of a multi-process run, checked at each
compile, before the program runs.

When the processes of a ``jax.distributed`` job compile different programs (a
rank-dependent branch, a batch of another size on one host, a flag set on some hosts),
their collectives no longer match and the job hangs in the first one. Inside each
process, at every lowering of a program that spans the devices of other processes, the
guard publishes what the program is (its function, each input's type and sharding by
path, the static values, the tracing configuration, the XLA flags, the program's
digest) to the key-value store of JAX's own coordination service, under the number of
such programs this process has lowered so far, and reads every other process's entry
under the same number. Where one differs, every process raises
:class:`ProgramsDiffer` before the program compiles, naming the function, the processes
on each side and the first difference, in JX403's words; a process that never lowers
that program (a call only some processes make) is named once the wait runs out.

Programs on one process's own devices (a metric computed locally) are not checked:
processes may differ there. Nothing is written or read outside JAX's key-value store,
and a run whose processes agree runs as it would unguarded.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jxinspect.core import codec
from jxinspect.core.dtypes import short_name
from jxinspect.core.identity import Difference
from jxinspect.tracer import seam

if TYPE_CHECKING:
    from jxinspect.core.recording import GuardSummary
    from jxinspect.record.identity import Operation

DEFAULT_WAIT_S = 60.0
"""How long a process waits for the others to lower the program it lowered."""

_KEY = "jxinspect/guard/{number}/{process}"


class ProgramsDiffer(seam.StopTheCall):
    """The processes would compile different programs: the call stops before its
    program compiles and runs, in every process."""


@dataclass(frozen=True)
class GuardedProgram:
    """What one process lowered, as the other processes compare it."""

    function: str
    inputs: dict[str, tuple[str, str | None]]
    """Each input's type and sharding, by its path."""
    statics: dict[str, str]
    config: dict[str, str]
    """The configuration JAX's tracing cache key holds (``jax_enable_x64``, the mesh in
    context), and the XLA flags."""
    program: str
    """The lowered program's digest."""


@dataclass
class Guard:
    """The guard of one process."""

    wait_s: float = DEFAULT_WAIT_S
    lowered: int = 0
    """Programs across processes this process has lowered (and published)."""
    checked: list[str] = field(default_factory=list)
    """The functions checked the same on every process, in order."""
    stopped: str | None = None
    """Why it stopped the run (what it raised)."""

    def summary(self) -> GuardSummary:
        from jxinspect.core.recording import GuardSummary

        return GuardSummary(self.wait_s, len(self.checked), self.stopped)

    def _stop(self, message: str) -> ProgramsDiffer:
        self.stopped = message
        return ProgramsDiffer(f"jxinspect guard: {message}")

    def on_lowering(self, lowering: seam.RunLowering) -> None:
        where = seam.distributed_process()
        client = seam.coordination_client()
        if where is None or client is None or lowering.lowered is None:
            return
        if not seam.spans_processes(lowering.shardings):
            return
        me, count = where
        number, self.lowered = self.lowered, self.lowered + 1
        mine = described(lowering)
        client.key_value_set(_KEY.format(number=number, process=me), codec.line(mine))
        theirs, missing = _gather(client, number, me, count, self.wait_s)
        theirs[me] = mine
        if missing:
            raise self._stop(_missing(mine, number, theirs, missing, self.wait_s))
        if len({codec.line(program) for program in theirs.values()}) == 1:
            self.checked.append(mine.function)
            return
        operations = _exchange_operations(client, lowering, number, me, theirs)
        raise self._stop(_differ(number, theirs, operations))


def described(lowering: seam.RunLowering) -> GuardedProgram:
    """What ``lowering`` is, as the processes compare it."""
    from jxinspect.record import fingerprint  # here: a run of one process never needs it

    statics = fingerprint.static_values(lowering.call)
    printed = fingerprint.fingerprint(lowering, statics, "")
    inputs = {
        path: (f"{short_name(leaf.dtype)}[{','.join(map(str, leaf.shape))}]",
               printed.layouts.get(path))  # the layout: a respelling is the same program
        for path, leaf in printed.leaves.items()
    }  # fmt: skip
    config = dict(printed.context)
    environment = seam.cache_key_environment() or {}
    config["XLA flags"] = environment.get("XLA flags", "")
    function = lowering.source or lowering.name
    return GuardedProgram(function, inputs, printed.statics, config,
                          seam.program_digest(lowering.lowered))  # fmt: skip


def _gather(
    client: object, number: int, me: int, count: int, wait_s: float
) -> tuple[dict[int, GuardedProgram], list[int]]:
    """Every other process's program under ``number``; those not there in time."""
    found: dict[int, GuardedProgram] = {}
    missing = []
    deadline = time.monotonic() + wait_s
    for other in range(count):
        if other == me:
            continue
        left_ms = max(1, int((deadline - time.monotonic()) * 1000))
        key = _KEY.format(number=number, process=other)
        try:
            text = client.blocking_key_value_get(key, left_ms)  # type: ignore[attr-defined]
        except Exception:  # DEADLINE_EXCEEDED: it never lowered it (or ended)
            missing.append(other)
            continue
        found[other] = codec.decode(text, GuardedProgram, source=f"process {other}'s program")
    return found, missing


def _exchange_operations(
    client: object,
    lowering: seam.RunLowering,
    number: int,
    me: int,
    theirs: dict[int, GuardedProgram],
) -> dict[int, list[Operation]]:
    """The operations of each process's program (published only once the programs are
    known to differ, where the first differing operation is wanted)."""
    from jxinspect.record.identity import operations

    assert lowering.lowered is not None
    text = seam.program_text(lowering.lowered)
    key = _KEY.format(number=number, process=me) + "/program"
    client.key_value_set(key, text)  # type: ignore[attr-defined]
    found = {me: operations(text)}
    for other in theirs:
        if other == me:
            continue
        key = _KEY.format(number=number, process=other) + "/program"
        try:
            found[other] = operations(
                client.blocking_key_value_get(key, 10_000)  # type: ignore[attr-defined]
            )
        except Exception:  # it stopped meanwhile: the operations stay unknown
            continue
    return found


def _sides(theirs: dict[int, GuardedProgram]) -> tuple[list[int], list[int]]:
    """The processes of the program most lowered (the first process's on a tie), and
    the processes of the first other program."""
    counts = Counter(codec.line(program) for program in theirs.values())
    first = codec.line(theirs[min(theirs)])
    most = max(counts, key=lambda line: (counts[line], line == first))
    same = sorted(p for p, program in theirs.items() if codec.line(program) == most)
    other_line = next(codec.line(theirs[p]) for p in sorted(theirs) if p not in same)
    other = sorted(p for p, program in theirs.items() if codec.line(program) == other_line)
    return same, other


def _processes(numbers: list[int]) -> str:
    return ("process " if len(numbers) == 1 else "processes ") + ", ".join(map(str, numbers))


def first_difference(
    before: GuardedProgram,
    after: GuardedProgram,
    operations: tuple[list[Operation] | None, list[Operation] | None],
) -> Difference | str | None:
    """The first real difference of two processes' programs, as JX403 names it: an
    input path, a static argument, a configuration option or flag, an operation."""
    from jxinspect.record import programs
    from jxinspect.record.identity import operation_difference

    if before.function != after.function:
        return f"different functions: `{before.function}` vs `{after.function}`"
    found = programs.input_difference(before.inputs, after.inputs) or programs.static_difference(
        before.statics, after.statics
    )
    if found is not None:
        return found
    for name in [*before.config, *(n for n in after.config if n not in before.config)]:
        mine, theirs = before.config.get(name), after.config.get(name)
        if mine != theirs:
            return f"{name}: {mine or '(unset)'} vs {theirs or '(unset)'}"
    mine_ops, theirs_ops = operations
    if mine_ops is None or theirs_ops is None:
        return None
    return operation_difference(mine_ops, theirs_ops)


def _differ(
    number: int,
    theirs: dict[int, GuardedProgram],
    operations: dict[int, list[Operation]],
) -> str:
    same, other = _sides(theirs)
    before, after = theirs[same[0]], theirs[other[0]]
    found = first_difference(before, after, (operations.get(same[0]), operations.get(other[0])))
    said = f": {found}" if found is not None else ""
    return (
        f"the processes would compile different programs for "
        f"`{before.function}` (program {number + 1} across processes in this run): "
        f"{_processes(same)} and {_processes(other)} differ{said}. Stopped before it "
        "compiled: its collectives would wait forever for partners running another "
        "program (jxinspect explain JX403)"
    )


def _missing(
    mine: GuardedProgram,
    number: int,
    theirs: dict[int, GuardedProgram],
    missing: list[int],
    wait_s: float,
) -> str:
    return (
        f"{_processes(missing)} did not lower `{mine.function}` (program "
        f"{number + 1} across processes in this run, which {_processes(sorted(theirs))} "
        f"lowered) within {wait_s:g} s: a call only some processes make? Stopped before it "
        "compiled: its collectives would wait forever (the wait: record --guard-wait "
        "SECONDS, or jxinspect.guard.install(wait_s=...))"
    )


_INSTALLED: list[Guard] = []


def install_guard(wait_s: float | None = None) -> Guard:
    """Guard this process (once; a later call sets the wait): from now, or from when it
    imports JAX, every program across processes is checked against the other
    processes' before it compiles. Silent in a run of one process."""
    if _INSTALLED:
        if wait_s is not None:
            _INSTALLED[0].wait_s = wait_s
        return _INSTALLED[0]
    guard = Guard(wait_s if wait_s is not None else DEFAULT_WAIT_S)
    _INSTALLED.append(guard)

    def hook() -> None:
        seam.install_lowering_hook(guard.on_lowering, _not_guarded)

    seam.when_jax_imported(hook)
    return guard


def _not_guarded(function: str | None, err: Exception) -> None:
    print(f"jxinspect guard: `{function}` could not be checked: {err!r}", file=sys.stderr)
